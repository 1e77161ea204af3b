import { z } from 'zod';
import { Observation } from './observation.js';

/** What a model turn sends: the task on turn one, the observations of the previous turn after that. */
export const ModelInput = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('task'), task: z.string() }),
  z.object({
    kind: z.literal('observations'),
    /** The response whose function calls these observations answer. */
    previousResponseId: z.string(),
    observations: z.array(Observation),
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
});
export type ModelRequest = z.infer<typeof ModelRequest>;
