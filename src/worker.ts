import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { ClientConnectConfig } from '@temporalio/envconfig';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import type OpenAI from 'openai';
import { createActivities } from './activities/create-activities.js';
import type { Agent } from './agents/agent.js';
import { DEFAULT_HEARTBEAT_INTERVAL_SECONDS, STICKY_QUEUE_TIMEOUT_SECONDS } from './contract/defaults.js';
import { ConfigError, defaultStateDirectory, workerConfigFromEnvironment } from './config.js';
import { unreachableTemporal } from './config-error.js';
import type { WorkerConfig } from './config.js';
import type { RunBudgets, RunLimits } from './contract/run-input.js';
import type { ModelPrice } from './contract/usage.js';
import type { Logger } from './logger.js';
import type { PollSchedule } from './model/background.js';
import { API_KEY_PLACEHOLDER, createOpenAIClient } from './model/client.js';
import type { ModelMode } from './model/config.js';
import { ModelCallLimiter } from './model/rate-limit.js';
import type { ModelCallLimiterOptions } from './model/rate-limit.js';
import { createSanitizer, secretsFromEnvironment } from './safety/sanitize.js';
import { registerSearchAttributes } from './search-attributes-setup.js';
import { editFile, listDirectory, readFile, searchFiles, writeFile } from './tools/builtin/index.js';
import { createHttpFetchTool } from './tools/builtin/http-fetch.js';
import { createRunCommandTool } from './tools/builtin/run-command.js';
import { checkSandbox } from './tools/builtin/run-command/check-sandbox.js';
import type { Tool } from './tools/define-tool.js';
import { FileIdempotencyStore } from './tools/idempotency.js';
import type { IdempotencyStore } from './tools/idempotency.js';
import { ToolRegistry } from './tools/registry.js';
import { Workspace } from './tools/workspace.js';
import { refuseUnprotectedKeelDirectories } from './tools/workspace-keel-state.js';

/** The built-in tools every worker offers unless told otherwise: the workspace file tools. */
export const builtinTools: readonly Tool[] = [readFile, listDirectory, searchFiles, writeFile, editFile];

/**
 * The tools a worker configured by `config` offers: the built-in ones, plus `run_command` and
 * `http_fetch` when the operator enabled them (they are off unless given an allow-list).
 */
export function configuredTools(config: Pick<WorkerConfig, 'runCommand' | 'httpFetch'>): readonly Tool[] {
  return [
    ...builtinTools,
    ...(config.runCommand ? [createRunCommandTool(config.runCommand)] : []),
    ...(config.httpFetch ? [createHttpFetchTool(config.httpFetch)] : []),
  ];
}

/**
 * At worker start, when `run_command` is enabled: proves once that commands can be sandboxed here
 * and refuses to start when they cannot, unless the operator turned the sandbox off, which is said
 * loudly instead.
 */
export async function checkRunCommandSandbox(
  config: Pick<WorkerConfig, 'runCommand'>,
  logger: Pick<Logger, 'warn'> = console,
): Promise<void> {
  if (config.runCommand === undefined) return;
  if (config.runCommand.sandbox === 'off') {
    logger.warn(
      'WARNING: run_command runs commands WITHOUT a sandbox (KEEL_RUN_COMMAND_SANDBOX=off): they run as the ' +
        "worker's user, see the whole host (the worker's environment and its API keys in /proc included), " +
        'reach the network, and a process that leaves its session outlives the call and the worker.',
    );
    return;
  }
  try {
    await checkSandbox(config.runCommand);
  } catch (error) {
    throw new ConfigError(
      `run_command is enabled (KEEL_RUN_COMMAND_ALLOW) but commands cannot be sandboxed on this machine: ` +
        `${(error as Error).message}. The sandbox needs bubblewrap (Debian: apt-get install bubblewrap; or set ` +
        'KEEL_RUN_COMMAND_BWRAP) and permission to create user namespaces (in Docker: --security-opt ' +
        'seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined). To run ' +
        'commands without any isolation instead, set KEEL_RUN_COMMAND_SANDBOX=off.',
    );
  }
}

/** Secrets in the configuration that live outside the worker's own environment variables. */
export function configuredSecrets(config: Pick<WorkerConfig, 'runCommand'>): string[] {
  return secretsFromEnvironment(config.runCommand?.environment ?? {});
}

/** Path of the workflow entry point, next to this file (`.ts` under tsx or vitest, `.js` once built). */
export const workflowsPath = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? './workflows/index.ts' : './workflows/index.js', import.meta.url),
);

/** Everything {@link createKeelWorker} needs. */
export interface KeelWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  /** Directory the tools may touch. */
  workspace: string;
  /** What the tools may read but never write (`KEEL_WORKSPACE_PROTECT`); `.git` and `.keel` when absent. */
  workspaceProtect?: readonly string[];
  /** The local server's data directory (`KEEL_DATA_DIR`) when the CLI runs it: refused inside the workspace unprotected. */
  dataDirectory?: string;
  /** A configured `openai` client (`maxRetries: 0`, see `createOpenAIClient`). */
  openai: OpenAI;
  defaultModel: string;
  /** How model turns are requested (see `ModelMode`). */
  modelMode: ModelMode;
  /** Background polling schedule; the default suits real models. */
  pollSchedule?: PollSchedule;
  /** Where tools' side effects are remembered; a file store under `stateDirectory` when absent. */
  idempotencyStore?: IdempotencyStore;
  /** The worker's own records (see `KEEL_STATE_DIR`); used when no `idempotencyStore` is given. */
  stateDirectory?: string;
  /** Tools to offer; {@link builtinTools} when absent. */
  tools?: readonly Tool[];
  /** Named agents runs may ask for (`{ agent: "triage" }`), built with `defineAgent`. */
  agents?: readonly Agent[];
  /** Names of the tools to enable (`KEEL_TOOLS`); all of `tools` when absent. */
  enabledTools?: readonly string[];
  /** Limits for runs that set none (`KEEL_MAX_TURNS` and so on). */
  limits?: Partial<RunLimits>;
  /** Whether the namespace has Keel's search attributes (see `ensureSearchAttributes`). */
  searchAttributes?: boolean;
  /** Budgets for runs that set none (`KEEL_MAX_TOTAL_TOKENS` and so on). */
  budgets?: Partial<RunBudgets>;
  /** US dollars per million tokens by model (`KEEL_MODEL_PRICES`), for cost budgets. */
  prices?: Record<string, ModelPrice>;
  /** Paces this worker's model calls: most in flight, tokens per minute (`KEEL_MODEL_CONCURRENCY`, …). */
  modelPacing?: ModelCallLimiterOptions;
  /** Values to keep out of observations and history, beyond the worker's secret-looking env variables. */
  secrets?: readonly string[];
  logger?: Logger;
  /** A prebuilt workflow bundle (tests build one per file); bundled from source when absent. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Extra `Worker.create` options (shutdown grace, concurrency). */
  workerOptions?: Partial<WorkerOptions>;
}

/** Creates a worker hosting the `agentRun` workflow and Keel's activities. */
export async function createKeelWorker(options: KeelWorkerOptions): Promise<Worker> {
  const workspace = await Workspace.open(options.workspace, {
    ...(options.workspaceProtect ? { protect: options.workspaceProtect } : {}),
  }).catch((error: unknown) => {
    throw new ConfigError(`The workspace ${options.workspace} cannot be used: ${(error as Error).message}`);
  });
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
    { commands: (options.tools ?? builtinTools).some((tool) => tool.name === 'run_command') },
  );
  const sanitizer = createSanitizer({
    // The model key counts even when it came from elsewhere than the environment (a vault, a file).
    secrets: [
      ...secretsFromEnvironment(),
      ...(options.secrets ?? []),
      ...(options.openai.apiKey === API_KEY_PLACEHOLDER || !options.openai.apiKey
        ? []
        : [options.openai.apiKey]),
    ],
    paths: [
      { path: workspace.root, label: '.' },
      { path: process.cwd(), label: '<worker>' },
      { path: homedir(), label: '~' },
    ],
  });
  const activities = createActivities({
    registry: new ToolRegistry(enableTools(options.tools ?? builtinTools, options.enabledTools)),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.budgets ? { budgets: options.budgets } : {}),
    ...(options.prices ? { prices: options.prices } : {}),
    ...(options.modelPacing ? { modelLimiter: new ModelCallLimiter(options.modelPacing) } : {}),
    searchAttributes: options.searchAttributes ?? false,
    workspace,
    openai: options.openai,
    defaultModel: options.defaultModel,
    modelMode: options.modelMode,
    ...(options.pollSchedule ? { pollSchedule: options.pollSchedule } : {}),
    sanitizer,
    idempotencyStore:
      options.idempotencyStore ?? new FileIdempotencyStore(path.join(stateDirectory, 'idempotency')),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.agents ? { agents: options.agents } : {}),
  });
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue,
    activities,
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath }),
    stickyQueueScheduleToStartTimeout: `${STICKY_QUEUE_TIMEOUT_SECONDS}s`,
    maxHeartbeatThrottleInterval: `${DEFAULT_HEARTBEAT_INTERVAL_SECONDS}s`,
    ...options.workerOptions,
  });
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

/** What a worker process may add to its environment configuration. */
export interface RunWorkerOptions {
  tools?: readonly Tool[];
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Called once the worker is created and about to poll. */
  onReady?: (worker: Worker) => void;
  /** Where to connect; Temporal's environment configuration (`TEMPORAL_ADDRESS`, …) when absent. */
  target?: ClientConnectConfig;
  /** The local server's data directory, when the CLI runs that server (see {@link KeelWorkerOptions}). */
  dataDirectory?: string;
  /** Extra `Worker.create` options on top of the configured ones (tests limit concurrency with it). */
  workerOptions?: Partial<WorkerOptions>;
}

/**
 * Runs a worker configured from the environment until SIGINT/SIGTERM: the SDK's runtime turns those
 * into a graceful shutdown, in-flight activities get `KEEL_SHUTDOWN_GRACE_SECONDS` to finish, and
 * the rest are cancelled and retried by another worker.
 */
export async function runWorker(config: WorkerConfig, options: RunWorkerOptions = {}): Promise<void> {
  await checkRunCommandSandbox(config);
  const { connectionOptions, namespace } = options.target ?? loadClientConnectConfig();
  const address = connectionOptions.address ?? 'localhost:7233';
  const connection = await NativeConnection.connect(connectionOptions).catch((error: unknown) => {
    throw unreachableTemporal(address, error);
  });
  try {
    const searchAttributes = await registerSearchAttributes(
      connectionOptions,
      namespace ?? 'default',
      console,
    );
    const worker = await createKeelWorker({
      connection,
      namespace: namespace ?? 'default',
      searchAttributes,
      limits: config.limits,
      budgets: config.budgets,
      ...(config.prices ? { prices: config.prices } : {}),
      modelPacing: config.modelPacing,
      ...(config.tools ? { enabledTools: config.tools } : {}),
      taskQueue: config.taskQueue,
      workspace: config.workspace,
      workspaceProtect: config.workspaceProtect,
      ...(options.dataDirectory === undefined ? {} : { dataDirectory: options.dataDirectory }),
      stateDirectory: config.stateDirectory,
      openai: createOpenAIClient(config.model),
      defaultModel: config.model.defaultModel,
      modelMode: config.model.mode,
      tools: options.tools ?? configuredTools(config),
      secrets: configuredSecrets(config),
      ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
      workerOptions: {
        shutdownGraceTime: `${config.shutdownGraceSeconds}s`,
        maxHeartbeatThrottleInterval: `${config.heartbeatIntervalSeconds}s`,
        ...options.workerOptions,
      },
    });
    console.log(
      `Keel worker on task queue "${config.taskQueue}" (namespace ${namespace ?? 'default'}, ` +
        `server ${address}), workspace ${config.workspace} ` +
        `(protected: ${config.workspaceProtect.join(', ') || 'nothing'}), ` +
        `default model ${config.model.defaultModel} (${config.model.mode} mode). Ctrl-C to stop.`,
    );
    options.onReady?.(worker);
    await worker.run();
  } finally {
    await connection.close();
  }
}

/** Entry point of `npm start`: a worker configured from the environment. */
export async function main(): Promise<void> {
  await runWorker(workerConfigFromEnvironment());
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
    process.exitCode = 1;
  });
}
