import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { ClientConnectConfig } from '@temporalio/envconfig';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConfigError } from '../config-error.js';
import { optionalInteger, readEnvironment } from '../env.js';
import { keelSearchAttributes } from '../workflows/search-attributes.js';
import { findTemporalCli } from './temporal-cli.js';

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
  /** Set when this process started the server: stopping it stops the server too. */
  embedded: { stop(): Promise<void> } | undefined;
  /** The local server's data directory (`KEEL_DATA_DIR`), when the target is the local server. */
  dataDirectory: string | undefined;
}

/**
 * With `TEMPORAL_ADDRESS` (or a Temporal config profile) set, that cluster. Otherwise a local dev
 * server: one already listening on localhost:7233 (see {@link localPorts}), or one this process
 * starts, persisted under `<dataDirectory>/temporal.db` so runs survive restarts, with its Web UI on
 * port 8233.
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
  const { port, uiPort } = localPorts(environment);
  const local = { address: `127.0.0.1:${port}` };
  const uiUrl = `http://localhost:${uiPort}`;
  if (await reachable(local)) {
    options.say(`Using the Temporal server already running on ${local.address} (UI ${uiUrl}).`);
    return {
      connectionOptions: local,
      namespace: 'default',
      uiUrl,
      embedded: undefined,
      dataDirectory: options.dataDirectory,
    };
  }
  if (!options.start) {
    throw new ConfigError(
      `No Temporal server at ${local.address}: start one with \`keel worker\` (or \`temporal server start-dev\`), or set TEMPORAL_ADDRESS.`,
    );
  }
  const binary = await findTemporalCli(environment);
  await mkdir(options.dataDirectory, { recursive: true });
  const dbFilename = path.join(options.dataDirectory, 'temporal.db');
  options.say(
    binary === undefined
      ? 'No temporal CLI found (PATH, TEMPORAL_CLI_PATH); downloading it through the Temporal SDK…'
      : `Starting a local Temporal server (${binary}), data in ${dbFilename}…`,
  );
  const environmentHandle = await TestWorkflowEnvironment.createLocal({
    server: {
      executable:
        binary === undefined ? { type: 'cached-download' } : { type: 'existing-path', path: binary },
      ip: '127.0.0.1',
      port,
      ui: true,
      uiPort,
      dbFilename,
      searchAttributes: [...keelSearchAttributes],
      log: { format: 'pretty', level: 'error' },
    },
  });
  return {
    connectionOptions: local,
    namespace: 'default',
    uiUrl,
    embedded: { stop: () => environmentHandle.teardown() },
    dataDirectory: options.dataDirectory,
  };
}

/** Whether a Temporal server answers on the local server's port. */
export function localServerRunning(): Promise<boolean> {
  return reachable({ address: `127.0.0.1:${localPorts().port}` });
}

async function reachable(options: { address: string }): Promise<boolean> {
  try {
    const connection = await Connection.connect({ ...options, connectTimeout: '1s' });
    await connection.close();
    return true;
  } catch {
    return false;
  }
}
