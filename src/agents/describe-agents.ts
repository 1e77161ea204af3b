import type { AgentProfile } from '../contract/agent-profile.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { Agent } from './agent.js';
import { AgentDefinitionError } from './agent-definition-error.js';
import { agentVersion } from './agent-version.js';

/**
 * The profiles of a worker's agents, by name, each with its version. Checked once, when the worker
 * is built: two agents with one name, or an agent naming a tool the worker lacks, is an error.
 */
export function describeAgents(agents: readonly Agent[], registry: ToolRegistry): Map<string, AgentProfile> {
  const profiles = new Map<string, AgentProfile>();
  for (const agent of agents) {
    if (profiles.has(agent.name)) throw new AgentDefinitionError(`Agent ${agent.name} is defined twice`);
    const names = [...(agent.tools ?? registry.names()), ...(agent.approvalTools ?? [])];
    const missing = names.filter((name) => registry.get(name) === undefined);
    if (missing.length > 0) {
      const available = registry.names().join(', ') || 'no tools';
      throw new AgentDefinitionError(
        `Agent ${agent.name} names tool(s) ${[...new Set(missing)].join(', ')} that this worker does not have; it has ${available}`,
      );
    }
    const tools = (agent.tools ?? registry.names()).map((name) => registry.get(name)!);
    profiles.set(agent.name, {
      name: agent.name,
      version: agentVersion(agent.instructions, tools),
      instructions: agent.instructions,
      ...(agent.model !== undefined ? { model: agent.model } : {}),
      ...(agent.tools !== undefined ? { tools: [...agent.tools] } : {}),
      ...(agent.approvalTools !== undefined ? { approvalTools: [...agent.approvalTools] } : {}),
      ...(agent.limits !== undefined ? { limits: agent.limits } : {}),
      ...(agent.budgets !== undefined ? { budgets: agent.budgets } : {}),
    });
  }
  return profiles;
}
