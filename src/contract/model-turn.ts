import { z } from 'zod';
import { ConversationItem } from './model-request.js';
import { ToolCall } from './tool-call.js';
import { Usage } from './usage.js';

/** What one Responses API turn produced, reduced to what the loop needs. Plain JSON, kept in history. */
export const ModelTurn = z.object({
  responseId: z.string(),
  model: z.string(),
  /** `incomplete` means the output was cut off (see `incompleteReason`); its calls must not run. */
  status: z.enum(['completed', 'incomplete']),
  incompleteReason: z.string().nullable(),
  /** All output text of the turn, in order. */
  text: z.string(),
  /** Every function call of the turn, in the order the model emitted them. */
  toolCalls: z.array(ToolCall),
  usage: Usage,
  /**
   * The response's output items (reasoning with its encrypted content, messages, calls) as input items,
   * for stateless runs, which send them back next turn. Absent for chained runs.
   */
  outputItems: z.array(ConversationItem).optional(),
  /**
   * For a run with an output schema, a final answer's problems against it (`path: message`), none
   * when it matches. Absent for a turn that asked for calls, and from workers before structured output.
   */
  outputIssues: z.array(z.string()).optional(),
});
export type ModelTurn = z.infer<typeof ModelTurn>;
