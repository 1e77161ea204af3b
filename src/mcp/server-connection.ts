import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Progress, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { MAX_TOOL_TIMEOUT_SECONDS } from '../contract/defaults.js';
import type { Logger } from '../logger.js';
import { isStdioServer } from './server-config.js';
import type { McpServerConfig } from './server-config.js';

/** How Keel introduces itself to MCP servers. */
const CLIENT_INFO = { name: 'keel', version: '0.1.0' };

/** Milliseconds a server gets to start and answer `initialize`, and to list its tools. */
const CONNECT_TIMEOUT_MS = 30_000;

/** Pages of `tools/list` read at most, against a server that never stops paging. */
const MAX_TOOL_PAGES = 100;

/** Characters of one stderr line of a server kept in the worker log. */
const MAX_LOG_LINE = 2_000;

/** One live session: its client and, for a stdio server, the process behind it. */
interface Session {
  client: Client;
  transport: StdioClientTransport | StreamableHTTPClientTransport;
  /** Set once Keel itself ends the session, so its closing is not reported as the server's doing. */
  ending: boolean;
}

/** Options of one {@link McpServerConnection.callTool}. */
export interface CallOptions {
  /** Cancels the request: the SDK sends `notifications/cancelled` to the server and the call rejects. */
  signal: AbortSignal;
  /** Progress notifications the server sends for this call. */
  onProgress?: (progress: Progress) => void;
}

/**
 * The worker's connection to one MCP server: started on first use, shared by every call (one stdio
 * process per server per worker), and started again on the next use after the process died or the
 * HTTP session failed. A call in flight when a stdio server dies fails at once (the SDK rejects
 * pending requests when the pipe closes).
 */
export class McpServerConnection {
  readonly #config: McpServerConfig;
  readonly #logger: Logger;
  #session: Promise<Session> | undefined;
  /** The started session {@link #session} resolved to, once it has. */
  #live: Session | undefined;
  #closed = false;

  constructor(config: McpServerConfig, logger: Logger) {
    this.#config = config;
    this.#logger = logger;
  }

  /** The server's name. */
  get name(): string {
    return this.#config.name;
  }

  /** The configuration this connection was made from. */
  get config(): McpServerConfig {
    return this.#config;
  }

  /** The process id of a running stdio server; undefined for HTTP servers and before the first use. */
  async pid(): Promise<number | undefined> {
    const session = await this.#session?.catch(() => undefined);
    return session?.transport instanceof StdioClientTransport
      ? (session.transport.pid ?? undefined)
      : undefined;
  }

  /** Every tool the server lists (following its pages). */
  async listTools(): Promise<McpTool[]> {
    const { client } = await this.#current();
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const result = await client.listTools(cursor === undefined ? {} : { cursor }, {
        timeout: CONNECT_TIMEOUT_MS,
      });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined) return tools;
    }
    throw new Error(`the server listed more than ${MAX_TOOL_PAGES} pages of tools`);
  }

  /** Calls a tool. Rejects with the SDK's error (an `McpError` for protocol errors) or the signal's reason. */
  async callTool(name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    const session = await this.#current();
    try {
      return (await session.client.callTool({ name, arguments: args }, undefined, {
        signal: options.signal,
        // The caller's signal carries Keel's timeout; the SDK's own (60 s by default) must not cut in first.
        timeout: MAX_TOOL_TIMEOUT_SECONDS * 1000,
        ...(options.onProgress ? { onprogress: options.onProgress } : {}),
      })) as CallToolResult;
    } catch (error) {
      // Anything but a protocol answer or our own cancellation may mean a broken session: start afresh.
      if (!(error instanceof McpError) && !options.signal.aborted) this.#drop(session);
      throw error;
    }
  }

  /** Ends the session (a stdio server's process with it); later calls are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    const session = await this.#session?.catch(() => undefined);
    this.#session = undefined;
    this.#live = undefined;
    if (session !== undefined) await endSession(session);
  }

  #current(): Promise<Session> {
    if (this.#closed) return Promise.reject(new Error(`the connection to MCP server ${this.name} is closed`));
    if (this.#session === undefined) {
      const started = this.#start();
      this.#session = started;
      // A failed start is not kept: the next use tries again.
      started.catch(() => {
        if (this.#session === started) this.#session = undefined;
      });
    }
    return this.#session;
  }

  async #start(): Promise<Session> {
    const config = this.#config;
    const transport = isStdioServer(config)
      ? new StdioClientTransport({
          command: config.command,
          ...(config.args ? { args: config.args } : {}),
          ...(config.env ? { env: config.env } : {}),
          ...(config.cwd ? { cwd: config.cwd } : {}),
          stderr: 'pipe',
        })
      : new StreamableHTTPClientTransport(new URL(config.url), {
          ...(config.headers ? { requestInit: { headers: config.headers } } : {}),
        });
    if (transport instanceof StdioClientTransport && transport.stderr)
      this.#logLines(transport.stderr as Readable);
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const session: Session = { client, transport, ending: false };
    client.onclose = () => {
      if (session.ending) return;
      this.#logger.warn(`MCP server ${this.name} closed the connection; it is started again on next use`);
      this.#drop(session);
    };
    client.onerror = (error) => {
      this.#logger.warn(`MCP server ${this.name}: ${error.message}`);
    };
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    } catch (error) {
      // A process that started but did not answer must not be left running.
      await endSession(session);
      throw error;
    }
    if (this.#closed) {
      await endSession(session);
      throw new Error(`the connection to MCP server ${this.name} is closed`);
    }
    this.#live = session;
    return session;
  }

  /** Forgets a session (if it is still the current one) and ends it in the background. */
  #drop(session: Session): void {
    if (this.#live !== session) return;
    this.#live = undefined;
    this.#session = undefined;
    endSession(session).catch((error: unknown) =>
      this.#logger.warn(`MCP server ${this.name} did not close cleanly`, { error }),
    );
  }

  #logLines(stream: Readable): void {
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    lines.on('line', (line) => this.#logger.info(`MCP server ${this.name}: ${line.slice(0, MAX_LOG_LINE)}`));
  }
}

/** Ends a session: an HTTP session is terminated on the server, a stdio process is stopped (TERM, then KILL). */
async function endSession(session: Session): Promise<void> {
  session.ending = true;
  if (session.transport instanceof StreamableHTTPClientTransport) {
    await session.transport.terminateSession().catch(() => undefined);
  }
  await session.client.close();
}
