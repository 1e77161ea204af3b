import { pathToFileURL } from 'node:url';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { ClientConnectConfig } from '@temporalio/envconfig';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import { DEFAULT_HEARTBEAT_INTERVAL_SECONDS, STICKY_QUEUE_TIMEOUT_SECONDS } from './contract/defaults.js';
import { ConfigError, workerConfigFromEnvironment } from './config.js';
import { unreachableTemporal } from './config-error.js';
import type { WorkerConfig } from './config.js';
import type { Logger } from './logger.js';
import { createOpenAIClient } from './model/client.js';
import { secretsFromEnvironment } from './safety/sanitize.js';
import { registerSearchAttributes } from './search-attributes-setup.js';
import { fileTools } from './tools/builtin/file-tools.js';
import { createHttpFetchTool } from './tools/builtin/http-fetch.js';
import { createRunCommandTool } from './tools/builtin/run-command.js';
import { findCgroups } from './tools/builtin/run-command/cgroups.js';
import { checkSandbox } from './tools/builtin/run-command/check-sandbox.js';
import type { Tool } from './tools/define-tool.js';
import { closeIdempotencyStore, openIdempotencyStore } from './tools/open-idempotency-store.js';
import { postgresUrlPassword } from './postgres-url.js';
import { openPayloadStore } from './payload-store/open-payload-store.js';
import type { Workspace } from './tools/workspace.js';
import { KeelPlugin } from './plugin/keel-plugin.js';
import { workflowCode } from './prebuilt-bundle.js';
import { dataConverterFor } from './data-converter.js';
import { exitWhenWritten } from './exit-when-written.js';
import { loadToolsModule } from './plugin/tools-module.js';
import type { KeelOptions } from './plugin/keel-options.js';
import { startTelemetry } from './telemetry/start-telemetry.js';
import type { WorkerTelemetry } from './telemetry/start-telemetry.js';
import { KeelTelemetryPlugin } from './telemetry/telemetry-plugin.js';

/**
 * The tools a worker configured by `config` offers: the built-in ones, plus `run_command` and
 * `http_fetch` when the operator enabled them (they are off unless given an allow-list).
 */
export function configuredTools(
  config: Pick<WorkerConfig, 'runCommand' | 'httpFetch'>,
  workspace: Workspace,
): readonly Tool[] {
  return [
    ...fileTools(workspace),
    ...(config.runCommand ? [createRunCommandTool(config.runCommand, workspace)] : []),
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
        'reach the network, a process that leaves its session outlives the call and the worker, and no ' +
        'limit (KEEL_RUN_COMMAND_MEMORY_MB, …_PROCESSES, …_CPU_SECONDS, …_FILE_MB, …_TMP_MB) applies.',
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
  const cgroups = await findCgroups();
  if (cgroups.kind === 'none')
    logger.warn(
      'run_command: no cgroup can be made for each command here, so memory is limited per process (its ' +
        "address space) instead of for all of a command's processes together, and the process limit holds " +
        `only for a worker that is not root (${cgroups.reason}). Run the worker as root in its container, or ` +
        'give it a delegated cgroup v2 (systemd: Delegate=yes); see docs/safety.md.',
    );
}

/** Secrets in the configuration that live outside the worker's own environment variables. */
export function configuredSecrets(
  config: Pick<WorkerConfig, 'runCommand' | 'idempotencyStore' | 'modelPacing'> &
    Partial<Pick<WorkerConfig, 'payloadStore'>>,
): string[] {
  const storePassword =
    config.idempotencyStore === undefined ? undefined : postgresUrlPassword(config.idempotencyStore.url);
  const pacingPassword =
    config.modelPacing.store === undefined ? undefined : postgresUrlPassword(config.modelPacing.store);
  const blobs = config.payloadStore?.location;
  const blobsPassword = blobs?.kind === 'postgres' ? postgresUrlPassword(blobs.url) : undefined;
  return [
    ...secretsFromEnvironment(config.runCommand?.environment ?? {}),
    ...[storePassword, pacingPassword, blobsPassword].filter((password) => password !== undefined),
  ];
}

/** Path of the workflow entry point, next to this file (`.ts` under tsx or vitest, `.js` once built). */
export { workflowsPath } from './prebuilt-bundle.js';

/** Everything {@link createKeelWorker} needs: Keel's options, and where the worker polls. */
export type KeelWorkerOptions = KeelOptions & {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  /**
   * A prebuilt workflow bundle (tests build one per file). When absent: dist/workflow-bundle.js, which
   * `npm run build` makes, if it is current; else Keel's workflows are bundled now (seconds, said on stderr).
   */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Extra `Worker.create` options (shutdown grace, concurrency); `plugins` are added to Keel's. */
  workerOptions?: Partial<WorkerOptions>;
  /** Tracing and content capture (see docs/observability.md); Keel's metrics are counted either way. */
  telemetry?: Pick<WorkerTelemetry, 'captureContent' | 'tracing'>;
};

/**
 * A worker hosting only Keel: the `agentRun` workflow and, through {@link KeelPlugin}, Keel's
 * activities. Prepares (opens the workspace, runs the start-up checks) before it returns.
 */
export async function createKeelWorker(options: KeelWorkerOptions): Promise<Worker> {
  const { connection, namespace, taskQueue, workflowBundle, workerOptions, telemetry, ...keelOptions } =
    options;
  // This worker hosts Keel alone, as `keel worker` did before the prefix: it also serves older runs.
  const plugin = new KeelPlugin({ legacyActivityNames: true, ...keelOptions });
  await plugin.prepare();
  const say = (line: string): void => void process.stderr.write(line + '\n');
  return await Worker.create({
    connection,
    namespace: namespace ?? 'default',
    taskQueue,
    ...(workflowBundle
      ? { workflowBundle }
      : await workflowCode(say, workerOptions?.dataConverter?.failureConverterPath)),
    stickyQueueScheduleToStartTimeout: `${STICKY_QUEUE_TIMEOUT_SECONDS}s`,
    maxHeartbeatThrottleInterval: `${DEFAULT_HEARTBEAT_INTERVAL_SECONDS}s`,
    ...workerOptions,
    plugins: [
      plugin,
      new KeelTelemetryPlugin({
        captureContent: telemetry?.captureContent ?? false,
        ...(keelOptions.prices ? { prices: keelOptions.prices } : {}),
        ...(telemetry?.tracing ? { tracing: telemetry.tracing } : {}),
      }),
      ...(workerOptions?.plugins ?? []),
    ],
  }).catch(async (error: unknown) => {
    await plugin.close();
    throw error;
  });
}

/**
 * Keel's options as the environment configures them (`KEEL_*`, `OPENAI_*`): the one mapping from
 * {@link WorkerConfig} that `keel worker`, `keel run` and `npm start` share. A PostgreSQL
 * side-effect store is opened here; `runWorker` closes it when the worker stops.
 */
export async function keelOptionsFromConfig(
  config: WorkerConfig,
  extra: Pick<KeelOptions, 'searchAttributes'> = {},
): Promise<KeelOptions> {
  const own = config.toolsModule === undefined ? undefined : await loadToolsModule(config.toolsModule);
  return {
    openai: createOpenAIClient(config.model),
    defaultModel: config.model.defaultModel,
    modelMode: config.model.mode,
    stream: config.stream,
    // Per-run workspaces replace the shared one (KEEL_WORKSPACE_MODE=per-run).
    ...(config.runWorkspaces ? { runWorkspaces: config.runWorkspaces } : { workspace: config.workspace }),
    workspaceProtect: config.workspaceProtect,
    stateDirectory: config.stateDirectory,
    ...(config.idempotencyStore
      ? { idempotencyStore: await openIdempotencyStore(config.idempotencyStore) }
      : {}),
    tools: (workspace) => [...configuredTools(config, workspace), ...(own?.tools ?? [])],
    ...(own?.agents ? { agents: own.agents } : {}),
    ...(own?.mcpServers ? { mcpServers: own.mcpServers } : {}),
    ...(config.tools ? { enabledTools: config.tools } : {}),
    limits: config.limits,
    budgets: config.budgets,
    ...(config.prices ? { prices: config.prices } : {}),
    conversation: config.conversation,
    maxOutputTokens: config.maxOutputTokens,
    modelPacing: config.modelPacing,
    secrets: configuredSecrets(config),
    ...extra,
  };
}

/** What a worker process may add to its environment configuration. */
export interface RunWorkerOptions {
  tools?: KeelOptions['tools'];
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Called once the worker is created and about to poll. */
  onReady?: (worker: Worker) => void;
  /** Where to connect; Temporal's environment configuration (`TEMPORAL_ADDRESS`, …) when absent. */
  target?: ClientConnectConfig;
  /** The local server's data directory, when the CLI runs that server (see {@link KeelWorkerOptions}). */
  dataDirectory?: string;
  /** Extra `Worker.create` options on top of the configured ones (tests limit concurrency with it). */
  workerOptions?: Partial<WorkerOptions>;
  /**
   * Whether to install the SDK runtime when `KEEL_METRICS_PROMETHEUS` asks for its Prometheus endpoint
   * (default true); false in a process that installed its own, since that happens once per process.
   */
  installRuntime?: boolean;
  /** Where the worker's own lines go (default `console`; `keel worker --json` keeps stdout for JSON). */
  console?: Pick<Console, 'log' | 'info' | 'warn' | 'error' | 'debug'>;
}

/**
 * Runs a worker configured from the environment until SIGINT/SIGTERM: the SDK's runtime turns those
 * into a graceful shutdown, in-flight activities get `KEEL_SHUTDOWN_GRACE_SECONDS` to finish, and
 * the rest are cancelled and retried by another worker.
 */
export async function runWorker(config: WorkerConfig, options: RunWorkerOptions = {}): Promise<void> {
  const say = options.console ?? console;
  await checkRunCommandSandbox(config, say);
  const { connectionOptions, namespace } = options.target ?? loadClientConnectConfig();
  const address = connectionOptions.address ?? 'localhost:7233';
  // Before the first connection: the runtime (with its Prometheus endpoint) is made once per process.
  const telemetry = await startTelemetry(config.telemetry, {
    installRuntime: options.installRuntime ?? true,
  });
  const connection = await NativeConnection.connect(connectionOptions).catch(async (error: unknown) => {
    await telemetry.shutdown();
    throw unreachableTemporal(address, error, connectionOptions);
  });
  const payloadStore = await openPayloadStore(config.payloadStore).catch(async (error: unknown) => {
    await connection.close();
    throw error;
  });
  const sweeper = payloadStore.startSweeping(connection, namespace ?? 'default', say);
  try {
    const searchAttributes = await registerSearchAttributes(connectionOptions, namespace ?? 'default', say);
    const keelOptions = await keelOptionsFromConfig(config, { searchAttributes });
    try {
      const worker = await createKeelWorker({
        ...keelOptions,
        ...(options.tools ? { tools: options.tools } : {}),
        ...(options.dataDirectory === undefined ? {} : { dataDirectory: options.dataDirectory }),
        connection,
        namespace: namespace ?? 'default',
        taskQueue: config.taskQueue,
        telemetry,
        ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
        workerOptions: {
          dataConverter: dataConverterFor(config.codec, payloadStore.dataConverter),
          shutdownGraceTime: `${config.shutdownGraceSeconds}s`,
          maxHeartbeatThrottleInterval: `${config.heartbeatIntervalSeconds}s`,
          ...options.workerOptions,
        },
      });
      say.log(
        `Keel worker on task queue "${config.taskQueue}" (namespace ${namespace ?? 'default'}, ` +
          `server ${address}), ` +
          (config.runWorkspaces
            ? `a workspace per run in ${config.runWorkspaces.root} `
            : `workspace ${config.workspace} `) +
          `(protected: ${config.workspaceProtect.join(', ') || 'nothing'}), ` +
          `default model ${config.model.defaultModel} (${config.model.mode} mode)` +
          (config.codec ? `, payloads encrypted with key "${config.codec.activeKeyId}"` : '') +
          '. Ctrl-C to stop.',
      );
      options.onReady?.(worker);
      await worker.run();
    } finally {
      await closeIdempotencyStore(keelOptions.idempotencyStore);
    }
  } finally {
    await sweeper.stop();
    await payloadStore.close();
    await connection.close();
    await telemetry.shutdown();
  }
}

/** Entry point of `npm start`: a worker configured from the environment. */
export async function main(): Promise<void> {
  await runWorker(workerConfigFromEnvironment());
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // Exits once the worker stopped, or failed to start (see exitWhenWritten): a supervisor restarts it.
  main().then(
    () => exitWhenWritten(0),
    (error: unknown) => {
      console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
      exitWhenWritten(1);
    },
  );
}
