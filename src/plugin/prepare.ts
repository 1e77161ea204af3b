import { homedir } from 'node:os';
import path from 'node:path';
import { createActivities } from '../activities/create-activities.js';
import { ConfigError, defaultStateDirectory } from '../config.js';
import { API_KEY_PLACEHOLDER } from '../model/client.js';
import { ModelCallLimiter } from '../model/rate-limit.js';
import { createSanitizer, secretsFromEnvironment } from '../safety/sanitize.js';
import { fileTools } from '../tools/builtin/file-tools.js';
import type { Tool } from '../tools/define-tool.js';
import { FileIdempotencyStore } from '../tools/idempotency.js';
import type { Logger } from '../logger.js';
import { McpServers } from '../mcp/mcp-servers.js';
import { ToolRegistry } from '../tools/registry.js';
import type { ToolSource } from '../tools/registry.js';
import { refuseUnprotectedKeelDirectories } from '../tools/workspace-keel-state.js';
import type { ResolvedKeelOptions } from './keel-options.js';

/** Keel's activities once their dependencies are ready, and what must be closed with the worker. */
export interface Prepared {
  /** The activities, keyed by their short names. */
  activities: ReturnType<typeof createActivities>;
  /** Stops the MCP server processes and sessions. */
  close(): Promise<void>;
}

/**
 * Opens what the activities need (the workspace, the side-effect store) and checks what must hold
 * before a worker polls: Keel's own records are not inside the workspace where a tool could write them.
 */
export async function prepareActivities(options: ResolvedKeelOptions): Promise<Prepared> {
  const mcp =
    options.mcpServers === undefined || options.mcpServers.length === 0
      ? undefined
      : new McpServers(options.mcpServers, options.logger ? { logger: options.logger } : {});
  try {
    return await prepareWith(options, mcp);
  } catch (error) {
    await mcp?.close();
    throw error;
  }
}

async function prepareWith(options: ResolvedKeelOptions, mcp: McpServers | undefined): Promise<Prepared> {
  const files = fileTools({
    root: options.workspace ?? process.cwd(),
    ...(options.workspaceProtect ? { protect: options.workspaceProtect } : {}),
  });
  const workspace = await files.workspace().catch((error: unknown) => {
    throw new ConfigError(`The workspace ${options.workspace} cannot be used: ${(error as Error).message}`);
  });
  const tools =
    typeof options.tools === 'function'
      ? options.tools(workspace)
      : (options.tools ?? (options.workspace === undefined ? [] : files));
  const stateDirectory = options.stateDirectory ?? defaultStateDirectory();
  await refuseUnprotectedKeelDirectories(
    workspace,
    [
      ...(options.idempotencyStore && options.stateDirectory === undefined
        ? []
        : [
            {
              variable: 'KEEL_STATE_DIR',
              path: stateDirectory,
              holds: "the worker's records of side effects",
            },
          ]),
      ...(options.dataDirectory === undefined
        ? []
        : [{ variable: 'KEEL_DATA_DIR', path: options.dataDirectory, holds: "the local server's database" }]),
    ],
    { commands: tools.some((tool) => tool.name === 'run_command') },
  );
  const apiKey = options.openai.apiKey;
  const sanitizer = createSanitizer({
    // The model key counts even when it came from elsewhere than the environment (a vault, a file).
    secrets: [
      ...secretsFromEnvironment(),
      ...(options.secrets ?? []),
      ...(mcp?.secrets() ?? []),
      ...(apiKey === API_KEY_PLACEHOLDER || !apiKey ? [] : [apiKey]),
    ],
    paths: [
      { path: workspace.root, label: '.' },
      { path: process.cwd(), label: '<worker>' },
      { path: homedir(), label: '~' },
    ],
  });
  // MCP tools are chosen by each server's `allowTools`, not by `enabledTools`; a server that cannot
  // be reached at start is a configuration error, later only a warning (its last listing stays).
  const sources = mcp === undefined ? [] : [await mcpToolSource(mcp, options.logger ?? console)];
  let registry: ToolRegistry;
  try {
    registry = new ToolRegistry(enableTools(tools, options.enabledTools), sources);
  } catch (error) {
    throw error instanceof ConfigError ? error : new ConfigError((error as Error).message);
  }
  const activities = createActivities({
    registry,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.budgets ? { budgets: options.budgets } : {}),
    ...(options.prices ? { prices: options.prices } : {}),
    ...(options.agents ? { agents: options.agents } : {}),
    ...(options.modelPacing ? { modelLimiter: new ModelCallLimiter(options.modelPacing) } : {}),
    searchAttributes: options.searchAttributes,
    // Temporal retries a model turn: retries inside the SDK would multiply attempts and hide failures.
    openai: options.openai.withOptions({ maxRetries: 0 }),
    defaultModel: options.defaultModel,
    modelMode: options.modelMode,
    ...(options.pollSchedule ? { pollSchedule: options.pollSchedule } : {}),
    sanitizer,
    idempotencyStore:
      options.idempotencyStore ?? new FileIdempotencyStore(path.join(stateDirectory, 'idempotency')),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return { activities, close: async () => mcp?.close() };
}

/** The tools named in `enabled` (all when absent); an unknown name is a configuration error. */
function enableTools(tools: readonly Tool[], enabled: readonly string[] | undefined): readonly Tool[] {
  if (enabled === undefined) return tools;
  const unknown = enabled.filter((name) => !tools.some((tool) => tool.name === name));
  if (unknown.length > 0) {
    throw new ConfigError(
      `KEEL_TOOLS names unknown tool(s) ${unknown.join(', ')}; this worker has ${tools.map((tool) => tool.name).join(', ')}`,
    );
  }
  return tools.filter((tool) => enabled.includes(tool.name));
}

/** An MCP servers' tools as a registry source: listed at start, then again for every run. */
async function mcpToolSource(mcp: McpServers, logger: Pick<Logger, 'warn'>): Promise<ToolSource> {
  let tools: readonly Tool[] = await mcp.listTools();
  return {
    current: () => tools,
    async refresh() {
      try {
        tools = await mcp.listTools();
      } catch (error) {
        logger.warn(
          `MCP tools could not be listed again; runs get the last listing: ${(error as Error).message}`,
        );
      }
    },
  };
}
