import { ConfigError } from '../config-error.js';
import type { Logger } from '../logger.js';
import { redactingLogger } from '../safety/redacting-logger.js';
import { createSanitizer, secretsFromEnvironment } from '../safety/sanitize.js';
import type { Sanitizer } from '../safety/sanitize.js';
import type { Tool } from '../tools/define-tool.js';
import { mcpConfigSecrets } from './config-secrets.js';
import { createMcpTool } from './mcp-tool.js';
import { parseMcpServerConfigs } from './server-config.js';
import type { McpServerConfig } from './server-config.js';
import { McpServerConnection } from './server-connection.js';
import { mcpToolName } from './tool-name.js';

/** Options of {@link McpServers}. */
export interface McpServersOptions {
  /** The worker log; server stderr lines and call failures go here, secrets of the configuration redacted. */
  logger?: Logger;
}

/**
 * The MCP servers a worker offers the tools of: one connection per server (one process per stdio
 * server), Keel tools for their tools, and their shutdown. Create it once per worker, call
 * {@link listTools} at worker start, add the tools to the registry, and {@link close} it on shutdown.
 */
export class McpServers {
  readonly #connections: McpServerConnection[];
  readonly #logger: Logger;
  readonly #secrets: string[];
  readonly #sanitizer: Sanitizer;
  #tools = new Map<string, Tool>();
  readonly #noted = new Set<string>();

  /** Validates the configurations (throws a `ConfigError` naming every problem); connects on first use. */
  constructor(configs: readonly McpServerConfig[], options: McpServersOptions = {}) {
    const servers = parseMcpServerConfigs(configs);
    this.#secrets = mcpConfigSecrets(servers);
    this.#sanitizer = createSanitizer({ secrets: [...this.#secrets, ...secretsFromEnvironment()] });
    this.#logger = redactingLogger(options.logger ?? console, this.#sanitizer);
    this.#connections = servers.map((config) => new McpServerConnection(config, this.#logger));
  }

  /** Values of the configurations to keep out of observations, history and logs: pass them to the worker's sanitizer. */
  secrets(): string[] {
    return [...this.#secrets];
  }

  /**
   * Connects to every server and lists its tools as Keel tools named `<server>__<tool>`, keeping only
   * those in the server's `allowTools`. A tool whose name cannot be a function name is left out with a
   * warning; a server that cannot be reached, or an allow-list or approval list naming a tool the
   * server does not offer, is a `ConfigError`.
   */
  async listTools(): Promise<Tool[]> {
    const perServer = await Promise.all(this.#connections.map((connection) => this.#toolsOf(connection)));
    const tools = perServer.flat();
    this.#tools = new Map(tools.map((tool) => [tool.name, tool]));
    return tools;
  }

  /** The tool of this (prefixed) name from the last {@link listTools}. */
  tool(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  /** The process id of a stdio server's current process; undefined for HTTP servers and before first use. */
  async pid(server: string): Promise<number | undefined> {
    return this.#connections.find((connection) => connection.name === server)?.pid();
  }

  /** Ends every session and stops every stdio server process; later calls fail as tool errors. */
  async close(): Promise<void> {
    await Promise.all(this.#connections.map((connection) => connection.close()));
  }

  async #toolsOf(connection: McpServerConnection): Promise<Tool[]> {
    const config = connection.config;
    let listed;
    try {
      listed = await connection.listTools();
    } catch (error) {
      this.#logger.error(`MCP server ${config.name} could not be started or reached`, { error });
      throw new ConfigError(
        `MCP server ${config.name} could not be started or reached: ${this.#sanitizer.message(String((error as Error).message ?? error))}`,
      );
    }
    const offered = new Set(listed.map((tool) => tool.name));
    for (const [field, names] of [
      ['allowTools', config.allowTools ?? []],
      ['needsApproval', Array.isArray(config.needsApproval) ? config.needsApproval : []],
    ] as const) {
      const missing = names.filter((name) => !offered.has(name));
      if (missing.length > 0) {
        throw new ConfigError(
          `MCP server ${config.name}: ${field} names ${missing.join(', ')}, which the server does not offer ` +
            `(it offers ${[...offered].join(', ') || 'no tools'})`,
        );
      }
    }
    const tools: Tool[] = [];
    for (const definition of listed) {
      if (config.allowTools !== undefined && !config.allowTools.includes(definition.name)) continue;
      const name = mcpToolName(config.name, definition.name);
      if (name === undefined) {
        const message = `MCP server ${config.name}: its tool ${JSON.stringify(definition.name)} cannot be offered, as ${config.name}__${definition.name} is not a valid tool name (1-64 letters, digits, '_' or '-')`;
        if (config.allowTools !== undefined) throw new ConfigError(message);
        this.#listingNote(message);
        continue;
      }
      try {
        // The call-time log is the worker's; what listing finds is said once, not at every run's listing.
        tools.push(
          createMcpTool(connection, definition, name, {
            ...this.#logger,
            info: (message) => this.#listingNote(message, 'info'),
          }),
        );
      } catch (error) {
        const message = `MCP server ${config.name}: the input schema of its tool ${definition.name} is not usable: ${(error as Error).message}`;
        if (config.allowTools !== undefined) throw new ConfigError(message);
        this.#listingNote(message);
      }
    }
    return tools;
  }

  /** Logs what a listing found, once per worker: servers are listed again for every run. */
  #listingNote(message: string, level: 'info' | 'warn' = 'warn'): void {
    if (this.#noted.has(message)) return;
    this.#noted.add(message);
    this.#logger[level](message);
  }
}
