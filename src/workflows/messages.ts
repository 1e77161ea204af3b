import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  ApprovalDecision,
  ApproveArgs,
  RejectArgs,
  SendArgs,
  SendReceipt,
} from '../contract/run-messages.js';
import type { RunState } from '../contract/run-state.js';
import { MODEL_ATTEMPT_SIGNAL } from '../contract/defaults.js';
import type { ModelAttempt } from '../contract/model-attempt.js';

/** Live state of a run: phase, turn, pending calls, usage. Shared by the workflow and every client. */
export const stateQuery = defineQuery<RunState>('state');

/** Lets a call that waits for approval run (optionally with edited arguments). */
export const approveUpdate = defineUpdate<ApprovalDecision, [ApproveArgs]>('approve');

/** Refuses a call that waits for approval; the model sees the reason. */
export const rejectUpdate = defineUpdate<ApprovalDecision, [RejectArgs]>('reject');

/** Gives the run a user message: the next turn delivers it; a session wakes up for it. */
export const sendUpdate = defineUpdate<SendReceipt, [SendArgs]>('send');

/** Ends a session gracefully once it is idle (or after the current turn's answer). */
export const endSessionUpdate = defineUpdate<void, []>('endSession');

/** {@link approveUpdate} as a signal, for clients without updates: a refusal is recorded in the state. */
export const approveSignal = defineSignal<[ApproveArgs]>('approve');

/** {@link rejectUpdate} as a signal, for clients without updates. */
export const rejectSignal = defineSignal<[RejectArgs]>('reject');

/** {@link sendUpdate} as a signal, for clients without updates. */
export const sendSignal = defineSignal<[SendArgs]>('send');

/** {@link endSessionUpdate} as a signal, for clients without updates. */
export const endSessionSignal = defineSignal<[]>('endSession');

/** Sent by a model turn's attempt after the first (see `ModelAttempt`); not for clients. */
export const modelAttemptSignal = defineSignal<[ModelAttempt]>(MODEL_ATTEMPT_SIGNAL);
