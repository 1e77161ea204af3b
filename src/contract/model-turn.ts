import { z } from 'zod';
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
});
export type ModelTurn = z.infer<typeof ModelTurn>;
