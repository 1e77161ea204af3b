import { Client, WorkflowNotFoundError } from '@temporalio/client';
import type { ConnectionLike } from '@temporalio/client';
import { ExternalStorage } from '@temporalio/common';
import type { DataConverter } from '@temporalio/common';
import { ConfigError } from '../config-error.js';
import type { Logger } from '../logger.js';
import { describePostgresUrl, postgresUrlPassword } from '../postgres-url.js';
import type { BlobSweep, OwnerKnown } from './blob-sweep.js';
import { DirectoryDriver } from './directory-driver.js';
import type { PayloadStoreConfig } from './payload-store-config.js';
import { DEFAULT_PAYLOAD_STORE_SCHEMA, PostgresDriver } from './postgres-driver.js';

/** Blobs are looked at for deletion this often by every worker with a store (deleting is idempotent). */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/** A payload store opened for a worker or client: what goes into its `DataConverter`, and its upkeep. */
export interface OpenedPayloadStore {
  /** Spread into the `DataConverter` given to `Worker.create`, `new Client` and the replayer: `{}` without a store. */
  dataConverter: Pick<DataConverter, 'externalStorage'>;
  /** Deletes old blobs of runs Temporal no longer has, now and hourly, until stopped; nothing without a store. */
  startSweeping(
    connection: ConnectionLike,
    namespace: string,
    logger: Pick<Logger, 'info' | 'warn'>,
  ): { stop(): Promise<void> };
  /** Ends the store's connections. */
  close(): Promise<void>;
}

/**
 * The store `KEEL_PAYLOAD_STORE` names, checked at start (the directory writable, the database
 * reachable and its table made): a store that cannot be used is a configuration error now, naming
 * the setting and never the password, not a failed task later. Without one, payloads stay inline.
 */
export async function openPayloadStore(config: PayloadStoreConfig | undefined): Promise<OpenedPayloadStore> {
  if (config === undefined) {
    return {
      dataConverter: {},
      startSweeping: () => ({ stop: () => Promise.resolve() }),
      close: () => Promise.resolve(),
    };
  }
  const { location } = config;
  const driver =
    location.kind === 'directory'
      ? new DirectoryDriver(location.path)
      : new PostgresDriver(location.url, config.schema ?? DEFAULT_PAYLOAD_STORE_SCHEMA);
  try {
    await driver.open();
  } catch (error) {
    await driver.close().catch(() => undefined);
    let reason = String((error as Error).message ?? error).split('\n')[0] ?? '';
    if (location.kind === 'directory') {
      throw new ConfigError(
        `KEEL_PAYLOAD_STORE: the payload store directory ${location.path} cannot be used (${reason}). ` +
          'Create it, or mount the shared storage there, and give the worker read and write access.',
      );
    }
    const password = postgresUrlPassword(location.url);
    if (password !== undefined) reason = reason.replaceAll(password, '***');
    throw new ConfigError(
      `KEEL_PAYLOAD_STORE: the payload store at ${describePostgresUrl(location.url)} cannot be used (${reason}). ` +
        'Check the URL, that PostgreSQL runs and takes this user and password, and that the user may create ' +
        `the schema ${JSON.stringify(config.schema ?? DEFAULT_PAYLOAD_STORE_SCHEMA)} and its table (or that they exist).`,
    );
  }
  return {
    dataConverter: {
      externalStorage: new ExternalStorage({
        drivers: [driver],
        payloadSizeThreshold: config.thresholdBytes,
      }),
    },
    startSweeping: (connection, namespace, logger) =>
      sweepEvery(driver, ownerKnownIn(connection, namespace), config.keepHours * 3_600_000, logger),
    close: () => driver.close(),
  };
}

/**
 * Whether Temporal still holds a history for the workflow (running, or ended within retention). Only
 * "not found" counts as gone; any other answer (the server unreachable, another namespace) keeps the blobs.
 */
export function ownerKnownIn(connection: ConnectionLike, namespace: string): OwnerKnown {
  const client = new Client({ connection, namespace });
  return async (owner) => {
    if (owner.namespace !== namespace) return true;
    try {
      await client.workflow.getHandle(owner.workflowId).describe();
      return true;
    } catch (error) {
      return !(error instanceof WorkflowNotFoundError);
    }
  };
}

function sweepEvery(
  store: BlobSweep,
  ownerKnown: OwnerKnown,
  keepMs: number,
  logger: Pick<Logger, 'info' | 'warn'>,
): { stop(): Promise<void> } {
  let sweeping: Promise<void> | undefined;
  const sweep = (): void => {
    sweeping ??= store
      .sweep(ownerKnown, keepMs)
      .then(
        (deleted) => {
          if (deleted > 0) logger.info(`Deleted ${deleted} stored payload(s) of runs Temporal no longer has`);
        },
        (error: unknown) => logger.warn(`Sweeping the payload store failed: ${(error as Error).message}`),
      )
      .finally(() => {
        sweeping = undefined;
      });
  };
  sweep();
  const timer = setInterval(sweep, SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await sweeping;
    },
  };
}
