import { ConfigError } from '../config-error.js';
import { DEFAULT_IDEMPOTENCY_SCHEMA, PostgresIdempotencyStore } from './pg-idempotency-store.js';
import type { PostgresIdempotencyStoreOptions } from './pg-idempotency-store.js';
import { describePostgresUrl, postgresErrorReason } from '../postgres-url.js';

/**
 * The PostgreSQL store `KEEL_IDEMPOTENCY_STORE` names, connected and its table made, at worker start:
 * a database that cannot be used is a configuration error then, not a failed tool call later. The
 * error shows the URL without its password.
 */
export async function openIdempotencyStore(
  options: PostgresIdempotencyStoreOptions,
): Promise<PostgresIdempotencyStore> {
  const store = new PostgresIdempotencyStore(options);
  try {
    await store.open();
    return store;
  } catch (error) {
    await store.close().catch(() => undefined);
    const reason = postgresErrorReason(error, options.url);
    throw new ConfigError(
      `KEEL_IDEMPOTENCY_STORE: the side-effect store at ${describePostgresUrl(options.url)} cannot be used ` +
        `(${reason}). Check the URL, that PostgreSQL runs and takes this user and password, and that the user ` +
        `may create the schema ${JSON.stringify(options.schema ?? DEFAULT_IDEMPOTENCY_SCHEMA)} and its table (or that they exist).`,
    );
  }
}

/** Closes a store {@link openIdempotencyStore} opened; any other store is its owner's to close. */
export async function closeIdempotencyStore(store: unknown): Promise<void> {
  if (store instanceof PostgresIdempotencyStore) await store.close();
}
