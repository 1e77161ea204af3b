import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { ConfigError } from '../config-error.js';
import { describePostgresUrl, postgresErrorReason } from '../postgres-url.js';
import type { ModelPacer, ModelPacerPermit } from './model-pacer.js';
import { bucketTokens, createTables, liveLeases, PACING_LOCK_CLASS, setBucket } from './pg-pacing-tables.js';
import { abortableSleep, abortReason, DEFAULT_WAIT_TICK_MS } from './rate-limit.js';
import type { AcquireOptions } from './rate-limit.js';

/** Options for {@link PgModelLimiter}. Each limit is off when absent. */
export interface PgModelLimiterOptions {
  /** The database shared by the workers: a `postgres://` URL. */
  url: string;
  /** Workers with the same database and pool name share one set of limits. */
  pool: string;
  /** Most model calls in flight at once across all of the pool's workers. */
  maxConcurrent?: number;
  /** Tokens (input + output) per minute all of the pool's workers together may spend. */
  tokensPerMinute?: number;
  /** How often a waiting call asks again, and most time between `onWait` calls; 1000 ms when absent. */
  waitTickMs?: number;
  /** How long a slot outlives its holder's last renewal (a crashed worker's slot); 30 s when absent. */
  leaseMs?: number;
  /** Wall clock in ms shared by all workers; the database's own clock when absent. Injectable for tests. */
  now?: () => number;
  /** Resolves after `milliseconds`, rejects once `signal` aborts; `setTimeout` when absent. */
  sleep?: (milliseconds: number, signal: AbortSignal) => Promise<void>;
  /** Where a failed renewal or release is reported (the slot then expires on its own). */
  logger?: { warn(message: string): void };
  /** The setting the URL came from, named in errors; `KEEL_MODEL_PACING_STORE` when absent. */
  setting?: string;
}

/** Default time a slot outlives its holder's last renewal. */
export const DEFAULT_LEASE_MS = 30_000;

/**
 * Paces model calls across every worker that shares a PostgreSQL database and a pool name, so that
 * the limits hold for the whole fleet rather than for each process.
 *
 * A slot is a lease row with an expiry, renewed while its call runs: a worker that dies holding one
 * frees it after at most `leaseMs`. Tokens are one bucket row per pool that holds `tokensPerMinute`
 * and refills continuously. Every decision is one transaction serialized by an advisory lock on the
 * pool. Waiting callers poll every `waitTickMs`; unlike the per-worker limiter they are not served
 * first come, first served across workers.
 */
export class PgModelLimiter implements ModelPacer {
  readonly #pool: pg.Pool;
  readonly #name: string;
  readonly #maxConcurrent: number | undefined;
  readonly #capacity: number | undefined;
  readonly #waitTickMs: number;
  readonly #leaseMs: number;
  readonly #now: (() => number) | undefined;
  readonly #sleep: (milliseconds: number, signal: AbortSignal) => Promise<void>;
  readonly #logger: { warn(message: string): void };
  /** The store's URL, only to mask its password in database errors. */
  readonly #url: string;
  readonly #where: string;
  readonly #closing = new AbortController();
  #schema: Promise<void> | undefined;

  constructor(options: PgModelLimiterOptions) {
    const setting = options.setting ?? 'KEEL_MODEL_PACING_STORE';
    this.#url = options.url;
    this.#where = `the model pacing store (${setting}) ${describePostgresUrl(options.url)}`;
    this.#name = options.pool;
    this.#maxConcurrent = positiveInteger(options, 'maxConcurrent');
    this.#capacity = positiveInteger(options, 'tokensPerMinute');
    this.#waitTickMs = positiveInteger(options, 'waitTickMs') ?? DEFAULT_WAIT_TICK_MS;
    this.#leaseMs = positiveInteger(options, 'leaseMs') ?? DEFAULT_LEASE_MS;
    this.#now = options.now;
    this.#sleep = options.sleep ?? abortableSleep;
    this.#logger = options.logger ?? console;
    this.#pool = new pg.Pool({ connectionString: options.url, max: 4, connectionTimeoutMillis: 10_000 });
    // A connection whose server went away must not crash the worker: its queries fail (and say so),
    // the pool drops it, and the next transaction connects again.
    this.#pool.on('error', () => undefined);
    this.#pool.on('connect', (client) => client.on('error', () => undefined));
  }

  /** Creates the tables when missing; a database that cannot be used is a ConfigError naming the setting. */
  async start(): Promise<void> {
    try {
      await this.#ensureSchema();
    } catch (error) {
      throw new ConfigError(`${this.#where} cannot be used: ${postgresErrorReason(error, this.#url)}`);
    }
  }

  /** Waits for a slot and for the shared bucket to cover `estimatedTokens`, then returns the permit. */
  async acquire(estimatedTokens: number, options: AcquireOptions = {}): Promise<ModelPacerPermit> {
    if (!Number.isFinite(estimatedTokens) || estimatedTokens < 0)
      throw new RangeError(`estimatedTokens must be a finite number of at least 0, got ${estimatedTokens}`);
    const { signal, onWait } = options;
    const id = randomUUID();
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      const taken = await this.#tryTake(id, estimatedTokens).catch((error: unknown) => {
        throw new Error(
          `A model call could not be paced by ${this.#where}: ${postgresErrorReason(error, this.#url)}`,
          {
            cause: error,
          },
        );
      });
      if (taken) break;
      onWait?.();
      await this.#sleep(this.#waitTickMs, signal ?? new AbortController().signal);
    }
    const permit = this.#permit(id, estimatedTokens);
    if (signal?.aborted) {
      // Aborted while the grant was on its way: hold nothing, and spend nothing, as no call was made.
      await permit.release(0);
      throw abortReason(signal);
    }
    return permit;
  }

  /** Slots in use now (expired leases not counted), and the tokens in the bucket (null when unpaced). */
  async stats(): Promise<{ inFlight: number; tokensAvailable: number | null }> {
    return this.#transaction(async (client, now) => {
      const inFlight = await liveLeases(client, this.#name, now);
      const tokens =
        this.#capacity === undefined
          ? null
          : Math.floor(await bucketTokens(client, this.#name, this.#capacity, now));
      return { inFlight, tokensAvailable: tokens };
    });
  }

  /** Stops renewing and closes the connections; slots still held expire after `leaseMs`. */
  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    await this.#pool.end();
  }

  async #tryTake(id: string, estimatedTokens: number): Promise<boolean> {
    return this.#transaction(async (client, now) => {
      // Counted (and expired leases swept) even without a concurrency limit, so that crashed
      // holders' rows do not pile up.
      const live = await liveLeases(client, this.#name, now);
      if (this.#maxConcurrent !== undefined && live >= this.#maxConcurrent) return false;
      if (this.#capacity !== undefined) {
        const tokens = await bucketTokens(client, this.#name, this.#capacity, now);
        // A call estimated above the whole capacity goes through once the bucket is full, into debt.
        if (tokens < Math.min(estimatedTokens, this.#capacity)) return false;
        await setBucket(client, this.#name, tokens - estimatedTokens, now);
      }
      await client.query('INSERT INTO keel_model_pacing_leases (pool, id, expires_at) VALUES ($1, $2, $3)', [
        this.#name,
        id,
        now + this.#leaseMs,
      ]);
      return true;
    });
  }

  #permit(id: string, estimatedTokens: number): ModelPacerPermit {
    const done = new AbortController();
    const renewals = AbortSignal.any([done.signal, this.#closing.signal]);
    this.#renew(id, renewals).catch(() => undefined);
    let released: Promise<void> | undefined;
    return {
      release: (actualTokens?: number) => {
        const known = actualTokens !== undefined && Number.isFinite(actualTokens) && actualTokens >= 0;
        released ??= (async () => {
          done.abort();
          try {
            await this.#transaction(async (client, now) => {
              await client.query('DELETE FROM keel_model_pacing_leases WHERE pool = $1 AND id = $2', [
                this.#name,
                id,
              ]);
              if (known && this.#capacity !== undefined) {
                const tokens = await bucketTokens(client, this.#name, this.#capacity, now);
                await setBucket(
                  client,
                  this.#name,
                  Math.min(this.#capacity, tokens - (actualTokens - estimatedTokens)),
                  now,
                );
              }
            });
          } catch (error) {
            this.#logger.warn(
              `A model call's slot could not be given back to ${this.#where}; it expires within ${this.#leaseMs} ms: ${postgresErrorReason(error, this.#url)}`,
            );
          }
          if (actualTokens !== undefined && !known)
            throw new RangeError(`actualTokens must be a finite number of at least 0, got ${actualTokens}`);
        })();
        return released;
      },
    };
  }

  /** Pushes the lease's expiry forward a third of the lease at a time, until the call is over. */
  async #renew(id: string, signal: AbortSignal): Promise<void> {
    for (;;) {
      try {
        await this.#sleep(Math.max(1, Math.floor(this.#leaseMs / 3)), signal);
      } catch {
        return;
      }
      try {
        await this.#transaction(async (client, now) => {
          await client.query(
            'UPDATE keel_model_pacing_leases SET expires_at = $3 WHERE pool = $1 AND id = $2',
            [this.#name, id, now + this.#leaseMs],
          );
        });
      } catch (error) {
        if (signal.aborted) return;
        this.#logger.warn(
          `A model call's slot could not be renewed in ${this.#where}; it expires within ${this.#leaseMs} ms unless a later renewal succeeds: ${postgresErrorReason(error, this.#url)}`,
        );
      }
    }
  }

  /** Runs `work` in one transaction holding the pool's advisory lock, with the shared clock's `now`. */
  async #transaction<T>(work: (client: pg.PoolClient, now: number) => Promise<T>): Promise<T> {
    await this.#ensureSchema();
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [PACING_LOCK_CLASS, this.#name]);
      const now =
        this.#now?.() ??
        Number(
          (await client.query<{ now: string }>('SELECT extract(epoch FROM clock_timestamp()) * 1000 AS now'))
            .rows[0]!.now,
        );
      const result = await work(client, now);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      // A failed ROLLBACK means a broken connection: the pool must not hand it out again.
      const rolledBack = await client.query('ROLLBACK').then(
        () => true,
        () => false,
      );
      client.release(rolledBack ? undefined : true);
      throw error;
    }
  }

  /** Creates the tables once per limiter; a failure is tried again by the next call. */
  #ensureSchema(): Promise<void> {
    this.#schema ??= createTables(this.#pool).catch((error: unknown) => {
      this.#schema = undefined;
      throw error;
    });
    return this.#schema;
  }
}

function positiveInteger(
  options: PgModelLimiterOptions,
  name: 'maxConcurrent' | 'tokensPerMinute' | 'waitTickMs' | 'leaseMs',
): number | undefined {
  const value = options[name];
  if (value === undefined || (Number.isSafeInteger(value) && value > 0)) return value;
  throw new ConfigError(
    `The shared model limiter's ${name} must be a positive integer, got ${String(value)}.`,
  );
}
