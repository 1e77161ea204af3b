import { z } from 'zod';
import { ConfigError } from '../config-error.js';
import { MAX_TOOL_TIMEOUT_SECONDS } from '../contract/defaults.js';
import { formatIssues } from '../contract/format-issues.js';

/**
 * A server's name: letters and digits, single `-` or `_` between them, at most 32. No `__`, so the
 * first `__` in a tool name always ends the server's part (see `mcpToolName`).
 */
export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*$/;

const serverName = z
  .string()
  .max(32, 'a server name has at most 32 characters')
  .regex(MCP_SERVER_NAME_PATTERN, "use letters and digits, with single '-' or '_' between them");

const common = {
  /** Names the server in tool names (`<name>__<tool>`), logs and errors. */
  name: serverName,
  /** The server's own tool names to offer; all of its tools when absent. */
  allowTools: z.array(z.string().min(1)).optional(),
  /** `true`: every call of this server's tools waits for a person; a list: calls of those tools do. */
  needsApproval: z.union([z.boolean(), z.array(z.string().min(1))]).optional(),
  /** Seconds one call may take before it is cancelled; 60 when absent. */
  timeoutSeconds: z.number().positive().max(MAX_TOOL_TIMEOUT_SECONDS).optional(),
};

/** A server Keel starts as a child process and talks to over stdin/stdout. */
export const McpStdioServerConfig = z.strictObject({
  ...common,
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  /**
   * Variables for the server process, on top of a minimal inherited set (HOME, PATH, …): the worker's
   * own environment, its API keys included, is not passed on. Values with credential-like names
   * (`API_KEY`, `GITHUB_TOKEN`) are treated as secrets.
   */
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
});
/** A server Keel starts as a child process and talks to over stdin/stdout. */
export type McpStdioServerConfig = z.infer<typeof McpStdioServerConfig>;

/** A server reached over Streamable HTTP. */
export const McpHttpServerConfig = z.strictObject({
  ...common,
  url: z.url({ protocol: /^https?$/, error: 'an http:// or https:// URL' }),
  /** Sent with every request (`Authorization`, …). Values are treated as secrets. */
  headers: z.record(z.string(), z.string()).optional(),
});
/** A server reached over Streamable HTTP. */
export type McpHttpServerConfig = z.infer<typeof McpHttpServerConfig>;

/** One MCP server a worker offers the tools of: stdio (`command`) or Streamable HTTP (`url`). */
export const McpServerConfig = z.union([McpStdioServerConfig, McpHttpServerConfig]);
/** One MCP server a worker offers the tools of: stdio (`command`) or Streamable HTTP (`url`). */
export type McpServerConfig = z.infer<typeof McpServerConfig>;

/** Whether a server is started as a child process. */
export function isStdioServer(config: McpServerConfig): config is McpStdioServerConfig {
  return 'command' in config;
}

/**
 * Validates a list of server configurations, with one clear error for all that is wrong: each server
 * is stdio or HTTP by whether it has `command` or `url`, and names are unique.
 */
export function parseMcpServerConfigs(value: unknown): McpServerConfig[] {
  if (!Array.isArray(value)) throw new ConfigError('mcpServers must be a list of MCP server configurations');
  const problems: string[] = [];
  const servers: McpServerConfig[] = [];
  value.forEach((entry: unknown, index) => {
    const record = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : {};
    const label =
      typeof record.name === 'string' ? `mcpServers[${index}] (${record.name})` : `mcpServers[${index}]`;
    const hasCommand = 'command' in record;
    const hasUrl = 'url' in record;
    if (hasCommand === hasUrl) {
      problems.push(
        `${label}: give either command (a stdio server) or url (a Streamable HTTP server)${hasCommand ? ', not both' : ''}`,
      );
      return;
    }
    const parsed = (hasCommand ? McpStdioServerConfig : McpHttpServerConfig).safeParse(entry);
    if (!parsed.success) {
      problems.push(...formatIssues(parsed.error).map((line) => `${label}.${line}`));
      return;
    }
    if (servers.some((server) => server.name === parsed.data.name)) {
      problems.push(`${label}: the name ${parsed.data.name} is used by another server`);
      return;
    }
    servers.push(parsed.data);
  });
  if (problems.length > 0) {
    throw new ConfigError(
      `Invalid MCP server configuration:\n${problems.map((line) => `- ${line}`).join('\n')}`,
    );
  }
  return servers;
}

/**
 * A list of server configurations inside another schema (the plugin's options, an agent): checked by
 * {@link parseMcpServerConfigs}, so each problem gets its readable message there too.
 */
export const McpServerList = z
  .array(z.unknown())
  .readonly()
  .superRefine((servers, context) => {
    try {
      parseMcpServerConfigs(servers);
    } catch (error) {
      context.addIssue({ code: 'custom', message: (error as Error).message });
    }
  })
  .transform((servers) => servers as McpServerConfig[]);
