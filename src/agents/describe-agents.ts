import type { AgentProfile } from '../contract/agent-profile.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { Agent } from './agent.js';
import { AgentDefinitionError } from './agent-definition-error.js';
import { toolOwners, visibleTools } from './agent-tools.js';
import { agentVersion } from './agent-version.js';

/**
 * The profiles of a worker's agents, by name, each with its version. Checked once, when the worker
 * is built: two agents with one name, or an agent naming a tool the worker lacks, is an error.
 */
export function describeAgents(agents: readonly Agent[], registry: ToolRegistry): Map<string, AgentProfile> {
  const profiles = new Map<string, AgentProfile>();
  const ownerOf = toolOwners(agents);
  for (const agent of agents) {
    if (profiles.has(agent.name)) throw new AgentDefinitionError(`Agent ${agent.name} is defined twice`);
    // Another agent's own MCP tools are not this agent's to offer.
    const offered = visibleTools(registry.names(), ownerOf, agent.name);
    const names = [...(agent.tools ?? offered), ...(agent.approvalTools ?? [])];
    const missing = names.filter((name) => !offered.includes(name));
    if (missing.length > 0) {
      const available = offered.join(', ') || 'no tools';
      throw new AgentDefinitionError(
        `Agent ${agent.name} names tool(s) ${[...new Set(missing)].join(', ')} that this worker does not have; it has ${available}`,
      );
    }
    const tools = (agent.tools ?? offered).map((name) => registry.get(name)!);
    profiles.set(agent.name, {
      name: agent.name,
      version: agentVersion(agent.instructions, tools, agent.output),
      instructions: agent.instructions,
      ...(agent.model !== undefined ? { model: agent.model } : {}),
      ...(agent.tools !== undefined ? { tools: [...agent.tools] } : {}),
      ...(agent.approvalTools !== undefined ? { approvalTools: [...agent.approvalTools] } : {}),
      ...(agent.limits !== undefined ? { limits: agent.limits } : {}),
      ...(agent.budgets !== undefined ? { budgets: agent.budgets } : {}),
      ...(agent.maxOutputTokens !== undefined ? { maxOutputTokens: agent.maxOutputTokens } : {}),
      ...(agent.output !== undefined ? { output: agent.output } : {}),
    });
  }
  return profiles;
}
