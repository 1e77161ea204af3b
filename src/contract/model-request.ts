import { z } from 'zod';
import { AgentStamp } from './agent-profile.js';
import { ConversationItem } from './conversation-item.js';
import { ObservationsInput } from './observations-input.js';

export { ConversationItem } from './conversation-item.js';
export { ObservationsInput } from './observations-input.js';

/**
 * What a model turn sends: the task on turn one, the observations of the previous turn after that
 * (with any messages that arrived meanwhile), a session's follow-up messages, or, in a stateless run,
 * the whole conversation.
 */
export const ModelInput = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('task'),
    task: z.string(),
    /** User messages sent before the first turn, after the task. Absent in older histories. */
    messages: z.array(z.string()).optional(),
  }),
  ObservationsInput,
  z.object({
    kind: z.literal('messages'),
    /** The response that answered last; the messages continue its chain. */
    previousResponseId: z.string(),
    messages: z.array(z.string()).min(1),
  }),
  z.object({
    kind: z.literal('items'),
    /** The conversation so far: sent whole with `store: false`, since the server keeps nothing. */
    items: z.array(ConversationItem),
  }),
]);
export type ModelInput = z.infer<typeof ModelInput>;

/** Input of the `callModel` activity: one Responses API request, described as plain data. */
export const ModelRequest = z.object({
  model: z.string(),
  /** Re-sent every turn: the Responses API does not carry instructions over a `previous_response_id`. */
  instructions: z.string(),
  /** 1-based turn number, for logs and summaries. */
  turn: z.number().int().positive(),
  input: ModelInput,
  /** Names of the worker's tools to offer; their schemas come from the worker's registry. */
  tools: z.array(z.string()),
  parallelToolCalls: z.boolean(),
  maxOutputTokens: z.number().int().optional(),
  reasoningEffort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).optional(),
  /** The agent (and its version) the turn runs under, for a run started with one. */
  agent: AgentStamp.optional(),
  /** Stream the turn's events to the run (`keel.stream.publish`) while it is generated: runs before live streaming. */
  stream: z.boolean().optional(),
  /**
   * Stream the turn's events live from the worker (see `LiveStream`), out of history, while it is
   * generated; the worker may have streaming off, and then sends a plain request.
   */
  live: z.boolean().optional(),
  /** Sent as the Responses API's `truncation` (see `RunInput.truncation`); absent leaves the server's default. */
  truncation: z.enum(['auto', 'disabled']).optional(),
  /** Sub-agents offered as tools (see `AgentProfile.subAgents`): each takes `{ task }`. */
  agentTools: z.array(z.object({ name: z.string(), description: z.string() })).optional(),
  /** The shape the answer must have (see `RunOutput`): sent as `text.format`, and a final answer is checked against it. */
  output: z
    .object({ name: z.string(), schema: z.record(z.string(), z.unknown()), strict: z.boolean().optional() })
    .optional(),
  /**
   * The run takes the `keel.modelAttempt` signal: an attempt after the first says so to the run
   * (its state query and current details). Absent in runs from before it did.
   */
  sayRetries: z.boolean().optional(),
});
export type ModelRequest = z.infer<typeof ModelRequest>;
