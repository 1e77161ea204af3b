import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../config-error.js';
import type { Variable } from '../env.js';
import { optionalPostgresUrl } from '../postgres-url.js';

/** Where large payloads are kept: a directory (shared storage for several machines) or PostgreSQL. */
export type PayloadStoreLocation = { kind: 'directory'; path: string } | { kind: 'postgres'; url: string };

/** `KEEL_PAYLOAD_STORE` and its companions: large payloads kept outside Temporal's history. */
export interface PayloadStoreConfig {
  location: PayloadStoreLocation;
  /** `KEEL_PAYLOAD_STORE_THRESHOLD_BYTES`: payloads of at least this many bytes are stored outside. */
  thresholdBytes: number;
  /** `KEEL_PAYLOAD_STORE_SCHEMA`: the PostgreSQL schema of the blob table (default `keel`). */
  schema?: string;
  /** `KEEL_PAYLOAD_STORE_KEEP_HOURS`: the least age of a blob the sweep may delete. */
  keepHours: number;
}

/**
 * 128 KiB: half the SDK's own default. A reference costs about 200 bytes of history, a stored
 * payload a round trip to the store; below this the round trip is not worth the bytes saved.
 */
export const DEFAULT_PAYLOAD_STORE_THRESHOLD_BYTES = 128 * 1024;

/**
 * 30 days. A blob is deleted only once Temporal no longer knows its run (its history is gone) and
 * it is older than this, so a start whose workflow does not exist yet keeps its input.
 */
export const DEFAULT_PAYLOAD_STORE_KEEP_HOURS = 30 * 24;

/** `KEEL_PAYLOAD_STORE`: `file:///absolute/directory` or a `postgres://` URL, optional. */
export const payloadStoreLocation: Variable<PayloadStoreLocation | undefined> = {
  parse(name, raw) {
    const value = raw?.trim() || undefined;
    if (value === undefined) return undefined;
    if (/^postgres(?:ql)?:/iu.test(value)) {
      const url = optionalPostgresUrl.parse(name, value);
      return url === undefined ? undefined : { kind: 'postgres', url };
    }
    const expected = `${name} must be file:///absolute/directory or a postgres://user:password@host:port/database URL`;
    if (!value.startsWith('file:')) {
      // Not quoted whole: a mistyped PostgreSQL URL may hold a password.
      throw new ConfigError(`${expected}; its value starts with neither (not shown: it may hold a password)`);
    }
    let directory: string;
    try {
      directory = fileURLToPath(value);
    } catch (error) {
      throw new ConfigError(`${expected}, not ${JSON.stringify(value)}: ${(error as Error).message}`);
    }
    if (path.normalize(directory) === '/') throw new ConfigError(`${expected}, not the root directory`);
    return { kind: 'directory', path: path.normalize(directory) };
  },
};
