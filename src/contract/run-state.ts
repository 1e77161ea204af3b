import { z } from 'zod';
import { AgentStamp } from './agent-profile.js';
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

/** A tool call that waits for a person to approve or reject it. */
export const PendingApproval = z.object({
  callId: z.string(),
  name: z.string(),
  /** The call's arguments as the model wrote them (JSON text), shortened if long. */
  argumentsPreview: z.string(),
  /** The model turn that asked for the call. */
  turn: z.number().int().positive(),
});
export type PendingApproval = z.infer<typeof PendingApproval>;

/** Live view of a run, answered by the `state` query. */
export const RunState = z.object({
  /**
   * `starting`: validating and loading tools; `thinking`: a model turn; `acting`: tool calls;
   * `awaiting_approval`: a call waits for a person; `idle`: a session waits for a message.
   */
  phase: z.enum(['starting', 'thinking', 'acting', 'awaiting_approval', 'idle', 'finished']),
  turn: z.number().int().nonnegative(),
  maxTurns: z.number().int().positive(),
  model: z.string().nullable(),
  /** The agent the run was started with, and the version its latest turn ran under. */
  agent: AgentStamp.optional(),
  /** Calls of the current turn that have no observation yet. */
  pendingCalls: z.array(z.object({ callId: z.string(), name: z.string() })),
  toolCalls: z.number().int().nonnegative(),
  usage: Usage,
  /** Usage of each model turn, in order (the last {@link RUN_EVENTS_KEPT} after a continue-as-new). */
  usageByTurn: z.array(Usage),
  /** What the run has cost so far in US dollars, when the worker knows the model's price. */
  costUsd: z.number().nonnegative().nullable(),
  /** Calls waiting for approval (`approve` / `reject` updates). */
  pendingApprovals: z.array(PendingApproval),
  /** Messages sent to the run that the model has not seen yet; delivered at the next turn. */
  queuedMessages: z.number().int().nonnegative(),
  /** The last answer of the run (a session answers once per message). */
  lastAnswer: z.string().nullable(),
  /** Messages the model has answered in this run (a session counts each follow-up). */
  answers: z.number().int().nonnegative(),
  /** Workflow executions before this one: how often the run continued as new. */
  continuedAsNew: z.number().int().nonnegative(),
  lastResponseId: z.string().nullable(),
  /** The last {@link RUN_EVENTS_KEPT} events, oldest first. */
  events: z.array(RunEvent),
  result: RunResult.nullable(),
});
export type RunState = z.infer<typeof RunState>;
