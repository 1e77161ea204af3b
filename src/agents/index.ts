export type { Agent } from './agent.js';
export { AgentDefinition } from './agent-definition.js';
export { AgentDefinitionError } from './agent-definition-error.js';
export { agentVersion } from './agent-version.js';
export { defineAgent } from './define-agent.js';
export { structuredOutput } from './structured-output.js';
