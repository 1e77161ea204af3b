export { McpServers } from './mcp-servers.js';
export type { McpServersOptions } from './mcp-servers.js';
export {
  McpHttpServerConfig,
  McpServerConfig,
  McpStdioServerConfig,
  MCP_SERVER_NAME_PATTERN,
  parseMcpServerConfigs,
} from './server-config.js';
export { MCP_TOOL_SEPARATOR, mcpToolName } from './tool-name.js';
export { mcpConfigSecrets } from './config-secrets.js';
export { mcpToolParameters } from './input-schema.js';
export type { McpToolParameters } from './input-schema.js';
