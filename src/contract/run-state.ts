import { z } from 'zod';
import { AgentStamp } from './agent-profile.js';
import { ModelAttempt } from './model-attempt.js';
import { RunResult } from './run-result.js';
import { Usage } from './usage.js';

import { RunEvent } from './run-event.js';

export { RUN_EVENTS_KEPT, RunEvent } from './run-event.js';

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
  /**
   * While the current model turn is being tried again: which attempt, and why the last one failed.
   * Absent otherwise (and in runs started before Keel said it).
   */
  modelAttempt: ModelAttempt.optional(),
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
