import { createHash } from 'node:crypto';
import pg from 'pg';
import type { IdempotencyRecord, IdempotencyStore } from './idempotency.js';
import { SCHEMA_NAME } from '../postgres-url.js';

/** How {@link PostgresIdempotencyStore} connects and keeps its records. */
export interface PostgresIdempotencyStoreOptions {
  /** `postgres://user:password@host:port/database`; any `pg` connection string. */
  url: string;
  /** The schema holding the table, created when missing (default `keel`). */
  schema?: string;
  /** How long a record is kept after it was last written (default 7 days); see {@link DEFAULT_IDEMPOTENCY_TTL_MS}. */
  ttlMs?: number;
}

/**
 * Records live 7 days by default. A record still `claimed` when it expires is an effect whose
 * outcome nobody knows: once it is gone, a retry of that call runs the effect again instead of
 * being told it is in doubt. So the time must exceed the longest a call's retries can come (the
 * tool activity's retries, a run's whole duration); a longer time only costs table rows.
 */
export const DEFAULT_IDEMPOTENCY_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** The schema of the store's table when none is given. */
export const DEFAULT_IDEMPOTENCY_SCHEMA = 'keel';

/** Expired records are deleted at most this often, by a claim, besides being ignored at once. */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/**
 * An {@link IdempotencyStore} in a PostgreSQL table, for workers on several machines: claims are
 * one `INSERT … ON CONFLICT` each, so exactly one of any number of callers wins a key. The schema
 * and table are created on first use (under an advisory lock, so workers starting together do not
 * trip over each other). Records expire `ttlMs` after they were written: an expired record counts
 * as absent at once (a new claim takes it over), and expired rows are deleted by a sweep at start
 * and at most hourly after. Keys are stored as their SHA-256, results as JSON text.
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  readonly #pool: pg.Pool;
  readonly #table: string;
  readonly #schema: string;
  readonly #ttlMs: number;
  #ready: Promise<void> | undefined;
  #lastSweep = 0;
  #sweeping: Promise<void> | undefined;

  constructor(options: PostgresIdempotencyStoreOptions) {
    // The URL is never quoted: it may hold a password.
    if (!/^postgres(?:ql)?:\/\//u.test(options.url)) {
      throw new TypeError('PostgresIdempotencyStore needs a postgres:// or postgresql:// URL');
    }
    this.#schema = options.schema ?? DEFAULT_IDEMPOTENCY_SCHEMA;
    if (!SCHEMA_NAME.test(this.#schema)) {
      throw new TypeError(
        `PostgresIdempotencyStore schema must be letters, digits and _, not ${JSON.stringify(this.#schema)}`,
      );
    }
    this.#ttlMs = options.ttlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
    if (!Number.isFinite(this.#ttlMs) || this.#ttlMs < 0) {
      throw new RangeError(`PostgresIdempotencyStore ttlMs must be 0 or more, not ${this.#ttlMs}`);
    }
    this.#table = `"${this.#schema}".idempotency`;
    this.#pool = new pg.Pool({
      connectionString: options.url,
      application_name: 'keel',
      connectionTimeoutMillis: 10_000,
      // An idle pool does not hold the process open: a worker that forgot `close` still exits.
      allowExitOnIdle: true,
    });
    // A connection the server dropped while idle (a restart) is discarded by the pool and the next
    // query opens a new one; without a listener its error would end the process. A query on a
    // connection that drops under it fails: the executor reports that call as failed.
    this.#pool.on('error', () => undefined);
  }

  /** Connects and creates the schema and table if missing; the first call of any method does it too. */
  open(): Promise<void> {
    this.#ready ??= this.#create();
    // A failed attempt (the database down) is tried again by the next call.
    this.#ready.catch(() => (this.#ready = undefined));
    return this.#ready;
  }

  async claim(key: string): Promise<IdempotencyRecord | undefined> {
    await this.open();
    const hash = keyHash(key);
    this.#sweepIfDue();
    for (;;) {
      const claimed = await this.#query(
        `INSERT INTO ${this.#table} AS record (key_hash, state, written_at, expires_at)
         VALUES ($1, 'claimed', now(), now() + make_interval(secs => $2))
         ON CONFLICT (key_hash) DO UPDATE
           SET state = 'claimed', result = NULL, written_at = EXCLUDED.written_at,
               expires_at = EXCLUDED.expires_at
           WHERE record.expires_at <= now()`,
        [hash, this.#ttlMs / 1000],
      );
      if (claimed.rowCount === 1) return undefined;
      const existing = await this.#query<{ state: string; result: string | null }>(
        `SELECT state, result FROM ${this.#table} WHERE key_hash = $1`,
        [hash],
      );
      const row = existing.rows[0];
      // Released (or swept) between the two statements: claim again.
      if (row === undefined) continue;
      return row.state === 'done'
        ? { state: 'done', result: JSON.parse(row.result ?? 'null') as unknown }
        : { state: 'claimed' };
    }
  }

  async complete(key: string, result: unknown): Promise<void> {
    await this.open();
    await this.#query(
      `INSERT INTO ${this.#table} AS record (key_hash, state, result, written_at, expires_at)
       VALUES ($1, 'done', $2, now(), now() + make_interval(secs => $3))
       ON CONFLICT (key_hash) DO UPDATE
         SET state = 'done', result = EXCLUDED.result, written_at = EXCLUDED.written_at,
             expires_at = EXCLUDED.expires_at`,
      [keyHash(key), JSON.stringify(result ?? null), this.#ttlMs / 1000],
    );
  }

  async release(key: string): Promise<void> {
    await this.open();
    await this.#query(`DELETE FROM ${this.#table} WHERE key_hash = $1 AND state = 'claimed'`, [keyHash(key)]);
  }

  /** Deletes the expired records now; resolves with how many there were. */
  async deleteExpired(): Promise<number> {
    await this.open();
    return this.#deleteExpired();
  }

  async #deleteExpired(): Promise<number> {
    this.#lastSweep = Date.now();
    const deleted = await this.#query(`DELETE FROM ${this.#table} WHERE expires_at <= now()`);
    return deleted.rowCount ?? 0;
  }

  /** Ends the pool's connections, after a sweep under way. */
  async close(): Promise<void> {
    await this.#sweeping;
    await this.#pool.end();
  }

  async #create(): Promise<void> {
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      // Concurrent `CREATE … IF NOT EXISTS` of one name can still fail on a catalog unique index.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`keel.idempotency:${this.#schema}`]);
      // Created only when missing: a user without CREATE rights may still use a schema made for it.
      const schema = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.#schema]);
      if (schema.rowCount === 0) await client.query(`CREATE SCHEMA IF NOT EXISTS "${this.#schema}"`);
      const table = await client.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [
        this.#table,
      ]);
      if (table.rows[0]?.found === null) {
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${this.#table} (
             key_hash text PRIMARY KEY,
             state text NOT NULL CHECK (state IN ('claimed', 'done')),
             result text,
             written_at timestamptz NOT NULL,
             expires_at timestamptz NOT NULL
           )`,
        );
        await client.query(
          `CREATE INDEX IF NOT EXISTS idempotency_expires_at ON ${this.#table} (expires_at)`,
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(error as Error);
      throw error;
    }
    client.release();
    await this.#deleteExpired();
  }

  #query<Row extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<Row>> {
    return this.#pool.query<Row>(text, values);
  }

  #sweepIfDue(): void {
    if (this.#sweeping !== undefined || Date.now() - this.#lastSweep < SWEEP_INTERVAL_MS) return;
    // In the background, so no claim waits for it; a failure waits for the next one.
    this.#sweeping = this.deleteExpired()
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => (this.#sweeping = undefined));
  }
}

/** The key's SHA-256 over its UTF-16 code units: exact for any string, lone surrogates and NULs too. */
function keyHash(key: string): string {
  return createHash('sha256').update(key, 'utf16le').digest('hex');
}
