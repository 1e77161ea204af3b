import { MCP_TOOL_SEPARATOR } from '../mcp/tool-name.js';
import type { Agent } from './agent.js';

/** The agent a tool belongs to (its own MCP server offers it), or undefined for the worker's tools. */
export type ToolOwner = (toolName: string) => string | undefined;

/** Who owns which tool: the tools of an agent's own MCP servers (`<server>__<tool>`) are that agent's. */
export function toolOwners(agents: readonly Agent[]): ToolOwner {
  const owners = new Map<string, string>();
  for (const agent of agents)
    for (const server of agent.mcpServers ?? []) owners.set(server.name, agent.name);
  return (toolName) => {
    const end = toolName.indexOf(MCP_TOOL_SEPARATOR);
    return end < 0 ? undefined : owners.get(toolName.slice(0, end));
  };
}

/** The names a run of `agent` (undefined: a run without one) may be offered: the worker's and its own. */
export function visibleTools(
  names: readonly string[],
  ownerOf: ToolOwner,
  agent: string | undefined,
): string[] {
  return names.filter((name) => {
    const owner = ownerOf(name);
    return owner === undefined || owner === agent;
  });
}
