import { formatIssues } from '../contract/format-issues.js';
import { AgentDefinition } from './agent-definition.js';
import type { Agent } from './agent.js';
import { AgentDefinitionError } from './agent-definition-error.js';

/**
 * Defines a named agent a worker offers, so another service starts `{ agent: "triage", task }`
 * without knowing its prompt or tools. Throws {@link AgentDefinitionError} for a malformed definition.
 */
export function defineAgent(definition: AgentDefinition): Agent {
  const parsed = AgentDefinition.safeParse(definition);
  if (!parsed.success) {
    const name = typeof definition?.name === 'string' ? ` ${definition.name}` : '';
    throw new AgentDefinitionError(`Agent${name} is invalid:\n${formatIssues(parsed.error).join('\n')}`);
  }
  return Object.freeze(parsed.data);
}
