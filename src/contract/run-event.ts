import { z } from 'zod';
import { AgentStamp } from './agent-profile.js';
import { ObservationError } from './observation.js';
import { Usage } from './usage.js';

// Apart from run-state.ts so that the workflow, which records events, never builds the state schema.

export { RUN_EVENTS_KEPT } from './defaults.js';

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
    /** The agent and version the turn ran under, in a run started with an agent. */
    agent: AgentStamp.optional(),
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
  z.object({
    seq: z.number().int().nonnegative(),
    kind: z.literal('message'),
    /** The turn that delivers the message to the model. */
    turn: z.number().int().positive(),
    /** The start of the message. */
    text: z.string(),
  }),
  z.object({
    seq: z.number().int().nonnegative(),
    kind: z.literal('approval'),
    turn: z.number().int().positive(),
    callId: z.string(),
    name: z.string(),
    /** `requested` when the call starts waiting, then how it was decided. */
    decision: z.enum(['requested', 'approved', 'edited', 'rejected', 'timed_out']),
    /** The arguments preview when requested; the reason or note when decided. */
    detail: z.string(),
  }),
  z.object({
    seq: z.number().int().nonnegative(),
    kind: z.literal('refused'),
    /** The turn the run was at (0 before the first). */
    turn: z.number().int().nonnegative(),
    /** The signal's name, shortened if long. A refused update is answered to its caller instead. */
    signal: z.string(),
    /** Why it was refused, and what to send instead. */
    reason: z.string(),
  }),
]);
export type RunEvent = z.infer<typeof RunEvent>;
