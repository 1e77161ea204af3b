export { agentRun } from './agent-run.js';
export { evalRun } from './eval-run.js';
export * from './eval-messages.js';
export * from './messages.js';
// Types only (erased at build): a workflow author's bundle gets no module beyond the workflow's own.
export type * from '../contract/index.js';
export type * from '../contract/run-messages.js';
