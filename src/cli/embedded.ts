import path from 'node:path';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { ClientConnectConfig } from '@temporalio/envconfig';
import { ConfigError } from '../config-error.js';
import { optionalInteger, readEnvironment } from '../env.js';
import { keelSearchAttributes } from '../workflows/search-attributes.js';
import { dataDirectory } from './io.js';
import {
  answers,
  answersWithin,
  awaitStartingServer,
  logTail,
  startLocalServer,
  withStartLock,
} from './local-server.js';
import { recordedServer, removeServerRecord, serverRecordPath } from './server-record.js';
import type { ServerRecord } from './server-record.js';
import { INSTALL_HINT, locateTemporalCli } from './temporal-cli.js';
import { dynamicConfigArguments, missingServerSettings } from '../server-settings.js';

/** Ports of the local server: Temporal's usual ones unless `KEEL_LOCAL_PORT` / `KEEL_LOCAL_UI_PORT` say otherwise. */
export function localPorts(environment: NodeJS.ProcessEnv = process.env): { port: number; uiPort: number } {
  const ports = readEnvironment(
    { KEEL_LOCAL_PORT: optionalInteger(1, 65_535), KEEL_LOCAL_UI_PORT: optionalInteger(1, 65_535) },
    environment,
  );
  return { port: ports.KEEL_LOCAL_PORT ?? 7233, uiPort: ports.KEEL_LOCAL_UI_PORT ?? 8233 };
}

/** The Temporal cluster the CLI talks to. */
export interface TemporalTarget extends ClientConnectConfig {
  namespace: string;
  /** Where to watch runs, when known. */
  uiUrl: string | undefined;
  /**
   * Set only when this process runs a server attached to itself (the SDK's downloaded CLI, which
   * cannot be detached): stopping it stops the server. A server Keel starts with a `temporal` CLI
   * runs on its own (see `keel server`) and is not stopped by the command that started it.
   */
  embedded: { stop(): Promise<void> } | undefined;
  /** The local server's data directory (`KEEL_DATA_DIR`), when the target is the local server. */
  dataDirectory: string | undefined;
}

/** How long a recorded server that runs gets to answer after one probe missed. */
const RECHECK_MS = 5_000;

/** The local server a command uses, and who runs it. */
export type LocalServer =
  /** Keel's own (`server.json`), started now or earlier. */
  | { kind: 'keel'; record: ServerRecord; started: boolean }
  /** One that answers on the local port but that Keel did not start: used, never managed. */
  | { kind: 'foreign'; address: string; uiUrl: string }
  /** Downloaded through the SDK and attached to this process: it stops with it. */
  | { kind: 'attached'; address: string; uiUrl: string; stop(): Promise<void> };

/**
 * The local server for `dataDirectory`, without starting one: Keel's recorded server when its PID
 * is verified and it answers, else whatever answers on the local port; undefined when none does.
 * A stale `server.json` (its process gone, its PID reused) is removed, and nothing is signalled.
 */
export async function findLocalServer(options: {
  dataDirectory: string;
  say: (line: string) => void;
  environment?: NodeJS.ProcessEnv;
}): Promise<LocalServer | undefined> {
  const environment = options.environment ?? process.env;
  const recorded = await recordedServer(options.dataDirectory);
  if (recorded.state === 'stale') {
    await removeServerRecord(options.dataDirectory);
    options.say(`Removed a stale ${serverRecordPath(options.dataDirectory)}: ${recorded.reason}.`);
  }
  const { port, uiPort } = localPorts(environment);
  if (recorded.state === 'alive') {
    let { record } = recorded;
    let answering = await answers(record.address);
    if (!answering && record.starting === true) {
      // Its start was interrupted (or runs in another command right now): it is Keel's, wait for it.
      options.say(`Keel's local Temporal server (PID ${record.pid}) is starting; waiting for it to answer…`);
      const started = await awaitStartingServer(options.dataDirectory, record);
      if (started !== undefined) [record, answering] = [started, true];
    }
    // One probe can miss on a loaded machine (it connects within a second): a server that runs is
    // given a few more before it is called unanswering.
    if (!answering) answering = await answersWithin(record.address, RECHECK_MS);
    if (!answering)
      throw new ConfigError(
        `Keel's local Temporal server (PID ${record.pid}) runs but does not answer on ${record.address}; ` +
          `\`keel server stop\` ends it. The end of its log (${record.logFile}):\n${await logTail(record.logFile)}`,
      );
    if (environment.KEEL_LOCAL_PORT !== undefined && record.port !== port)
      options.say(
        `KEEL_LOCAL_PORT=${port} is ignored: Keel's server for ${options.dataDirectory} runs on ${record.address}.`,
      );
    const missing = missingServerSettings(record.args);
    if (missing.length > 0)
      options.say(
        `Keel's local Temporal server (PID ${record.pid}) runs without ${missing.join(', ')}, which Keel ` +
          'now starts it with (without it every workflow task waits about 40 ms); `keel server stop`, and ' +
          'the next command starts it again with it.',
      );
    return { kind: 'keel', record, started: false };
  }
  const address = `127.0.0.1:${port}`;
  if (await answers(address)) return { kind: 'foreign', address, uiUrl: `http://localhost:${uiPort}` };
  return undefined;
}

/**
 * The local server for `dataDirectory`, started when none answers (see {@link findLocalServer}):
 * with a `temporal` CLI (see `locateTemporalCli`), in its own session and process group, outliving
 * this command; with the SDK's download (when `allowDownload`), attached to this process.
 */
export async function ensureLocalServer(options: {
  dataDirectory: string;
  say: (line: string) => void;
  environment?: NodeJS.ProcessEnv;
  allowDownload: boolean;
}): Promise<LocalServer> {
  const environment = options.environment ?? process.env;
  const found = await findLocalServer(options);
  if (found !== undefined) return found;
  // Another command may be starting the server for this data directory right now: under the lock,
  // after it is done, its server is found instead of a second one started.
  return withStartLock(
    options.dataDirectory,
    async () => (await findLocalServer(options)) ?? startServer({ ...options, environment }),
  );
}

async function startServer(options: {
  dataDirectory: string;
  say: (line: string) => void;
  environment: NodeJS.ProcessEnv;
  allowDownload: boolean;
}): Promise<LocalServer> {
  const { environment } = options;
  const { port, uiPort } = localPorts(environment);
  const executable = await locateTemporalCli({
    environment,
    say: options.say,
    allowDownload: options.allowDownload,
  });
  const address = `127.0.0.1:${port}`;
  if (executable.type === 'existing-path') {
    options.say(
      `Starting a local Temporal server (${executable.path}) on ${address}, data in ${options.dataDirectory}…`,
    );
    const record = await startLocalServer({
      dataDirectory: options.dataDirectory,
      binary: executable.path,
      port,
      uiPort,
      environment,
    });
    options.say(
      `It runs as PID ${record.pid} (Web UI ${record.uiUrl}) and keeps running after this command ends, ` +
        'for later commands: `keel server stop` ends it.',
    );
    return { kind: 'keel', record, started: true };
  }
  const dbFilename = path.join(options.dataDirectory, 'temporal.db');
  options.say(`Starting a local Temporal server on ${address}, data in ${dbFilename}…`);
  // The SDK's dev server (@temporalio/testing, which brings the worker) is loaded only to start one.
  const { createLocalEnvironment } = await import('./dev-server.js');
  const environmentHandle = await createLocalEnvironment(
    {
      server: {
        executable: { type: 'cached-download' },
        ip: '127.0.0.1',
        port,
        ui: true,
        uiPort,
        dbFilename,
        searchAttributes: [...keelSearchAttributes],
        log: { format: 'pretty', level: 'error' },
        extraArgs: dynamicConfigArguments(),
      },
    },
    options.say,
  ).catch((error: unknown) => {
    throw new ConfigError(
      `Could not start a local Temporal server with the temporal CLI the Temporal SDK downloads (${(error as Error).message}): ${INSTALL_HINT}.`,
    );
  });
  return {
    kind: 'attached',
    address,
    uiUrl: `http://localhost:${uiPort}`,
    stop: () => environmentHandle.teardown(),
  };
}

/**
 * With `TEMPORAL_ADDRESS` (or a Temporal config profile) set, that cluster. Otherwise the local dev
 * server (see {@link ensureLocalServer}): Keel's own for `<dataDirectory>` (`server.json`), else
 * one already listening on localhost:7233 (see {@link localPorts}), else, for `run` and `worker`,
 * one started now, persisted under `<dataDirectory>/temporal.db` with its Web UI on port 8233.
 */
export async function resolveTarget(options: {
  dataDirectory: string;
  say: (line: string) => void;
  /** Start a local server when none is running (`run`, `worker`); the other commands only look. */
  start: boolean;
  environment?: NodeJS.ProcessEnv;
}): Promise<TemporalTarget> {
  const environment = options.environment ?? process.env;
  const { connectionOptions, namespace } = loadClientConnectConfig({
    overrideEnvVars: environment as Record<string, string>,
  });
  if (connectionOptions.address !== undefined) {
    return {
      connectionOptions,
      namespace: namespace ?? 'default',
      uiUrl: undefined,
      embedded: undefined,
      dataDirectory: undefined,
    };
  }
  const server = options.start
    ? await ensureLocalServer({ ...options, environment, allowDownload: true })
    : await findLocalServer({ ...options, environment });
  if (server === undefined) {
    const { port } = localPorts(environment);
    throw new ConfigError(
      `No Temporal server at 127.0.0.1:${port}: start one with \`keel server start\` (or \`keel worker\`, ` +
        '`temporal server start-dev`), or set TEMPORAL_ADDRESS.',
    );
  }
  if (server.kind === 'keel' && !server.started)
    options.say(
      `Using Keel's local Temporal server on ${server.record.address} (PID ${server.record.pid}, UI ${server.record.uiUrl}).`,
    );
  if (server.kind === 'foreign')
    options.say(`Using the Temporal server already running on ${server.address} (UI ${server.uiUrl}).`);
  const [address, uiUrl] =
    server.kind === 'keel' ? [server.record.address, server.record.uiUrl] : [server.address, server.uiUrl];
  return {
    connectionOptions: { address },
    namespace: 'default',
    uiUrl,
    embedded: server.kind === 'attached' ? { stop: () => server.stop() } : undefined,
    dataDirectory: options.dataDirectory,
  };
}

/** Whether a Temporal server answers for the local data directory (Keel's own) or on the local port. */
export async function localServerRunning(): Promise<boolean> {
  const found = await findLocalServer({ dataDirectory: dataDirectory(), say: () => undefined }).catch(
    () => undefined,
  );
  return found !== undefined;
}
