import { TOOL_NAME_PATTERN } from '../contract/defaults.js';

/** Between a server's name and its tool's name in the name the model sees. */
export const MCP_TOOL_SEPARATOR = '__';

/**
 * The name the model calls an MCP tool by, `<server>__<tool>`, so two servers' tools never collide
 * with each other or with Keel's own tools. Undefined when it does not fit the function-name pattern
 * (too long, or a tool name with characters such as `.` or `/`): such a tool cannot be offered.
 */
export function mcpToolName(server: string, tool: string): string | undefined {
  const name = `${server}${MCP_TOOL_SEPARATOR}${tool}`;
  return TOOL_NAME_PATTERN.test(name) ? name : undefined;
}
