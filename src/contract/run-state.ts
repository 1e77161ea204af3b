import { z } from 'zod';
import { RunResult } from './run-result.js';
import { Usage } from './usage.js';

/** Live view of a run, answered by the `state` query. */
export const RunState = z.object({
  /** `starting`: validating and loading tools; `thinking`: a model turn; `acting`: tool calls. */
  phase: z.enum(['starting', 'thinking', 'acting', 'finished']),
  turn: z.number().int().nonnegative(),
  maxTurns: z.number().int().positive(),
  model: z.string().nullable(),
  /** Calls of the current turn that have no observation yet. */
  pendingCalls: z.array(z.object({ callId: z.string(), name: z.string() })),
  toolCalls: z.number().int().nonnegative(),
  usage: Usage,
  /** Usage of each model turn, in order. */
  usageByTurn: z.array(Usage),
  lastResponseId: z.string().nullable(),
  result: RunResult.nullable(),
});
export type RunState = z.infer<typeof RunState>;
