import { homedir } from 'node:os';
import path from 'node:path';
import type { PayloadCodec } from '@temporalio/common';
import { createActivities } from '../activities/create-activities.js';
import { LiveHub } from '../stream/live-hub.js';
import { ConfigError, defaultStateDirectory } from '../config.js';
import { API_KEY_PLACEHOLDER } from '../model/client.js';
import type { ModelPacer } from '../model/model-pacer.js';
import { PgModelLimiter } from '../model/pg-model-limiter.js';
import { ModelCallLimiter } from '../model/rate-limit.js';
import { createSanitizer, secretsFromEnvironment } from '../safety/sanitize.js';
import { fileTools } from '../tools/builtin/file-tools.js';
import type { FileTools } from '../tools/builtin/file-tools.js';
import type { Workspace } from '../tools/workspace.js';
import type { Tool } from '../tools/define-tool.js';
import { FileIdempotencyStore } from '../tools/idempotency.js';
import type { Logger } from '../logger.js';
import type { McpServers } from '../mcp/mcp-servers.js';
import { ToolRegistry } from '../tools/registry.js';
import type { ToolSource } from '../tools/registry.js';
import { refuseUnprotectedKeelDirectories } from '../tools/workspace-keel-state.js';
import type { ResolvedKeelOptions } from './keel-options.js';
import type { RunWorkspaces } from '../tools/run-workspaces.js';
import { openRunWorkspaceTools } from './run-workspace-tools.js';

/** Keel's activities once their dependencies are ready, and what must be closed with the worker. */
export interface Prepared {
  /** The activities, keyed by their short names. */
  activities: ReturnType<typeof createActivities>;
  /** The runs' workspaces, when each run has its own (`runWorkspaces`): the worker sweeps them. */
  workspaces?: RunWorkspaces;
  /**
   * When those lie on this worker alone: tells the activities the worker's own task queue, which the
   * worker then polls for the calls of the runs whose workspaces it holds.
   */
  serveOwnQueue?: (taskQueue: string) => void;
  /** Stops the MCP server processes and sessions. */
  close(): Promise<void>;
}

/**
 * Opens what the activities need (the workspace, the side-effect store) and checks what must hold
 * before a worker polls: Keel's own records are not inside the workspace where a tool could write them.
 */
export async function prepareActivities(
  options: ResolvedKeelOptions,
  codecs: () => readonly PayloadCodec[] = () => [],
): Promise<Prepared> {
  // The worker's servers and its agents' own, started together: one name may serve only one of them.
  const servers = [
    ...(options.mcpServers ?? []),
    ...(options.agents ?? []).flatMap((agent) => agent.mcpServers ?? []),
  ];
  // The MCP SDK is loaded only for a worker with servers (about 0.13 s of CPU at every start otherwise).
  const mcp =
    servers.length === 0
      ? undefined
      : new (await import('../mcp/mcp-servers.js')).McpServers(
          servers,
          options.logger ? { logger: options.logger } : {},
        );
  const pacing = options.modelPacing;
  const shared =
    pacing?.store === undefined ||
    (pacing.maxConcurrent === undefined && pacing.tokensPerMinute === undefined)
      ? undefined
      : new PgModelLimiter({
          url: pacing.store,
          pool: pacing.pool,
          ...(pacing.maxConcurrent !== undefined && { maxConcurrent: pacing.maxConcurrent }),
          ...(pacing.tokensPerMinute !== undefined && { tokensPerMinute: pacing.tokensPerMinute }),
          ...(options.logger && { logger: options.logger }),
        });
  try {
    await shared?.start();
    const limiter: ModelPacer | undefined =
      shared ?? (pacing && pacing.store === undefined ? new ModelCallLimiter(pacing) : undefined);
    const prepared = await prepareWith(options, mcp, limiter, codecs);
    return {
      ...prepared,
      close: async () => {
        try {
          await prepared.close();
        } finally {
          await shared?.close();
        }
      },
    };
  } catch (error) {
    await mcp?.close();
    await shared?.close();
    throw error;
  }
}

async function prepareWith(
  options: ResolvedKeelOptions,
  mcp: McpServers | undefined,
  modelLimiter: ModelPacer | undefined,
  codecs: () => readonly PayloadCodec[],
): Promise<Prepared> {
  const stateDirectory = options.stateDirectory ?? defaultStateDirectory();
  const keelDirectories = [
    ...(options.idempotencyStore && options.stateDirectory === undefined
      ? []
      : [
          { variable: 'KEEL_STATE_DIR', path: stateDirectory, holds: "the worker's records of side effects" },
        ]),
    ...(options.dataDirectory === undefined
      ? []
      : [{ variable: 'KEEL_DATA_DIR', path: options.dataDirectory, holds: "the local server's database" }]),
  ];
  const perRun =
    options.runWorkspaces === undefined
      ? undefined
      : await openRunWorkspaceTools(options, options.runWorkspaces, keelDirectories);
  // A worker has a workspace only when it says so: a library worker with its own tools needs none.
  const workspace =
    perRun !== undefined || (options.workspace === undefined && typeof options.tools !== 'function')
      ? undefined
      : await openWorkspace(options.workspace ?? process.cwd(), options.workspaceProtect);
  const tools =
    perRun !== undefined
      ? perRun.described
      : typeof options.tools === 'function'
        ? options.tools(workspace!.opened)
        : (options.tools ?? workspace?.files ?? []);
  if (workspace !== undefined) {
    await refuseUnprotectedKeelDirectories(workspace.opened, keelDirectories, {
      commands: tools.some((tool) => tool.name === 'run_command'),
    });
  }
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
      ...(workspace === undefined ? [] : [{ path: workspace.opened.root, label: '.' }]),
      ...(perRun === undefined ? [] : [{ path: perRun.workspaces.root, label: '<workspaces>' }]),
      { path: process.cwd(), label: '<worker>' },
      { path: homedir(), label: '~' },
    ],
  });
  // MCP tools are chosen by each server's `allowTools`, not by `enabledTools`; a server that cannot
  // be reached at start is a configuration error, later only a warning (its last listing stays).
  const sources = mcp === undefined ? [] : [await mcpToolSource(mcp, options.logger ?? console)];
  const registryOf = (offered: readonly Tool[]): ToolRegistry =>
    new ToolRegistry(enableTools(offered, options.enabledTools), sources);
  // Workspaces on this worker's disk alone pin each run's calls to it (see `serveOwnQueue`).
  const pinned = options.runWorkspaces?.shared === false ? options.runWorkspaces : undefined;
  let ownQueue: string | undefined;
  // Listens only once a turn streams: a worker that never runs one opens no port.
  const live = options.stream === false ? undefined : new LiveHub({ ...options.stream, codecs });
  let registry: ToolRegistry;
  let activities: Prepared['activities'];
  try {
    registry = registryOf(tools);
    activities = createActivities({
      registry,
      ...(perRun ? { registryFor: (workflowId: string) => perRun.registryFor(workflowId, registryOf) } : {}),
      ...(pinned
        ? { workspaceAffinity: { failoverSeconds: pinned.failoverSeconds, ownQueue: () => ownQueue } }
        : {}),
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.budgets ? { budgets: options.budgets } : {}),
      ...(options.prices ? { prices: options.prices } : {}),
      ...(options.conversation ? { conversation: options.conversation } : {}),
      ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
      ...(options.agents ? { agents: options.agents } : {}),
      ...(modelLimiter ? { modelLimiter } : {}),
      searchAttributes: options.searchAttributes,
      // Every request sets `maxRetries: 0`, so any client will do (Azure's too) and Temporal retries.
      openai: options.openai,
      defaultModel: options.defaultModel,
      modelMode: options.modelMode,
      ...(options.pollSchedule ? { pollSchedule: options.pollSchedule } : {}),
      sanitizer,
      idempotencyStore:
        options.idempotencyStore ?? new FileIdempotencyStore(path.join(stateDirectory, 'idempotency')),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(live !== undefined ? { live } : {}),
    });
  } catch (error) {
    // A bad tool or agent definition is the operator's to fix, like any other setting.
    throw error instanceof ConfigError ? error : new ConfigError((error as Error).message);
  }
  return {
    activities,
    ...(perRun ? { workspaces: perRun.workspaces } : {}),
    ...(pinned
      ? {
          serveOwnQueue: (taskQueue: string) => {
            ownQueue = taskQueue;
          },
        }
      : {}),
    close: async () => {
      await live?.close();
      await mcp?.close();
    },
  };
}

/** The worker's workspace and the file tools bound to it, opened once at start. */
async function openWorkspace(
  root: string,
  protect: readonly string[] | undefined,
): Promise<{ files: FileTools; opened: Workspace }> {
  const files = fileTools({ root, ...(protect ? { protect } : {}) });
  const opened = await files.workspace().catch((error: unknown) => {
    throw new ConfigError(`The workspace ${root} cannot be used: ${(error as Error).message}`);
  });
  return { files, opened };
}

/** The tools named in `enabled` (all when absent); an unknown name is a configuration error. */
function enableTools(tools: readonly Tool[], enabled: readonly string[] | undefined): readonly Tool[] {
  if (enabled === undefined) return tools;
  const unknown = enabled.filter((name) => !tools.some((tool) => tool.name === name));
  if (unknown.length > 0) {
    throw new ConfigError(
      `enabledTools (KEEL_TOOLS) names unknown tool(s) ${unknown.join(', ')}; this worker has ${tools.map((tool) => tool.name).join(', ')}`,
    );
  }
  return tools.filter((tool) => enabled.includes(tool.name));
}

/** How long a run's start waits for the MCP servers to be listed again before it takes the last listing. */
export const MCP_REFRESH_DEADLINE_MS = 5_000;

/**
 * An MCP servers' tools as a registry source: listed at start, then again for every run. Runs that
 * start together share one listing; one that takes longer than {@link MCP_REFRESH_DEADLINE_MS} (a
 * hung server) leaves the run with the last listing, and updates it for later runs when it ends.
 */
async function mcpToolSource(mcp: McpServers, logger: Pick<Logger, 'warn'>): Promise<ToolSource> {
  let tools: readonly Tool[] = await mcp.listTools();
  let listing: Promise<void> | undefined;
  const listAgain = (): Promise<void> =>
    (listing ??= mcp
      .listTools()
      .then(
        (listed) => {
          tools = listed;
        },
        (error: unknown) => {
          logger.warn(
            `MCP tools could not be listed again; runs get the last listing: ${(error as Error).message}`,
          );
        },
      )
      .finally(() => {
        listing = undefined;
      }));
  return {
    current: () => tools,
    async refresh() {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, MCP_REFRESH_DEADLINE_MS);
      });
      try {
        await Promise.race([listAgain(), deadline]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
