import type { AgentProfile } from '../contract/agent-profile.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { Agent } from './agent.js';
import { AgentDefinitionError } from './agent-definition-error.js';
import { toolOwners, visibleTools } from './agent-tools.js';
import { agentVersion } from './agent-version.js';
import { guardrailNames } from './guardrails.js';

/**
 * The profiles of a worker's agents, by name, each with its version. Checked once, when the worker
 * is built: two agents with one name, or an agent naming a tool the worker lacks, is an error.
 */
export function describeAgents(agents: readonly Agent[], registry: ToolRegistry): Map<string, AgentProfile> {
  const profiles = new Map<string, AgentProfile>();
  const ownerOf = toolOwners(agents);
  const byName = new Map(agents.map((agent) => [agent.name, agent]));
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
    const subAgents = (agent.subAgents ?? []).map((name) => {
      const sub = byName.get(name);
      if (sub === undefined || name === agent.name)
        throw new AgentDefinitionError(
          `Agent ${agent.name} names sub-agent ${name}, which is ${name === agent.name ? 'itself' : 'not an agent of this worker'}; it has ${[...byName.keys()].join(', ')}`,
        );
      // The model tells calls apart by name: a sub-agent must not shadow a tool.
      if (registry.get(name) !== undefined)
        throw new AgentDefinitionError(
          `Agent ${agent.name}'s sub-agent ${name} has the name of a tool of this worker`,
        );
      return {
        name,
        description: sub.description ?? `Agent ${name}: ${sub.instructions.split('\n')[0]!.slice(0, 200)}`,
      };
    });
    const guardrails = guardrailNames(agent.guardrails);
    profiles.set(agent.name, {
      name: agent.name,
      version: agentVersion(agent.instructions, tools, agent.output, subAgents, guardrails),
      instructions: agent.instructions,
      ...(agent.model !== undefined ? { model: agent.model } : {}),
      ...(agent.tools !== undefined ? { tools: [...agent.tools] } : {}),
      ...(agent.approvalTools !== undefined ? { approvalTools: [...agent.approvalTools] } : {}),
      ...(agent.limits !== undefined ? { limits: agent.limits } : {}),
      ...(agent.budgets !== undefined ? { budgets: agent.budgets } : {}),
      ...(agent.maxOutputTokens !== undefined ? { maxOutputTokens: agent.maxOutputTokens } : {}),
      ...(agent.output !== undefined ? { output: agent.output } : {}),
      ...(subAgents.length > 0 ? { subAgents } : {}),
      ...(guardrails !== undefined ? { guardrails } : {}),
    });
  }
  return profiles;
}
