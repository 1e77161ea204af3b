import { z } from 'zod';
import { ObservationError } from './observation.js';
import { RunResult } from './run-result.js';
import { Usage } from './usage.js';

/** Most recent events a run keeps in its state; older ones are in the workflow history. */
export const RUN_EVENTS_KEPT = 200;

/** Something that happened in a run, numbered so a follower can ask for what is new. */
export const RunEvent = z.discriminatedUnion('kind', [
  z.object({
    seq: z.number().int().nonnegative(),
    kind: z.literal('turn'),
    turn: z.number().int().positive(),
    usage: Usage,
    /** The start of the turn's text, if it had any. */
    text: z.string(),
    /** The calls the model asked for, each with a one-line summary (`read_file src/index.ts`). */
    calls: z.array(z.object({ callId: z.string(), name: z.string(), summary: z.string() })),
  }),
  z.object({
    seq: z.number().int().nonnegative(),
    kind: z.literal('observation'),
    turn: z.number().int().positive(),
    callId: z.string(),
    name: z.string(),
    ok: z.boolean(),
    error: ObservationError.optional(),
    /** The start of the output or error message. */
    preview: z.string(),
  }),
]);
export type RunEvent = z.infer<typeof RunEvent>;

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
  /** The last {@link RUN_EVENTS_KEPT} events, oldest first. */
  events: z.array(RunEvent),
  result: RunResult.nullable(),
});
export type RunState = z.infer<typeof RunState>;
