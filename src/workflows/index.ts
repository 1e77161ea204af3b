export { agentRun } from './agent-run.js';
export { stateQuery } from './messages.js';
