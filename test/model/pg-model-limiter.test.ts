import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
import type { ModelPacerPermit } from '../../src/model/model-pacer.js';
import { PgModelLimiter } from '../../src/model/pg-model-limiter.js';
import type { PgModelLimiterOptions } from '../../src/model/pg-model-limiter.js';
import { freePort } from '../support/free-port.js';
import { startPostgres } from '../support/postgres.js';
import type { Postgres } from '../support/postgres.js';

let postgres: Postgres;
let admin: pg.Client;
const opened: PgModelLimiter[] = [];
let pools = 0;

beforeAll(async () => {
  postgres = await startPostgres({ password: 'pacing-secret' });
  admin = await connectAdmin();
}, 120_000);

afterAll(async () => {
  await admin?.end();
  await postgres?.close();
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((limiter) => limiter.close()));
});

/** A pool name of its own for each test, so that tests never share limits. */
function freshPool(): string {
  pools += 1;
  return `test-${pools}`;
}

/** One limiter, as one worker machine would have: its own connections to the shared database. */
function limiter(options: Omit<PgModelLimiterOptions, 'url'>): PgModelLimiter {
  const created = new PgModelLimiter({ url: postgres.url(), waitTickMs: 5, ...options });
  opened.push(created);
  return created;
}

/** The test's own connection, for looking at the tables; the database is killed once on purpose. */
async function connectAdmin(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: postgres.url() });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Leases in the table for `pool`, expired or not: what a crashed or aborted caller may leave behind. */
async function leaseRows(pool: string): Promise<number> {
  const result = await admin.query<{ count: string }>(
    'SELECT count(*) AS count FROM keel_model_pacing_leases WHERE pool = $1',
    [pool],
  );
  return Number(result.rows[0]!.count);
}

/** A promise that resolves the first time the returned `onWait` is called (as `onWait`: the caller was refused once). */
function firstWait(): { refused: Promise<void>; onWait: () => void } {
  let resolve!: () => void;
  const refused = new Promise<void>((done) => (resolve = done));
  return { refused, onWait: () => resolve() };
}

/** With {@link failed}, `.then(ok, failed)`: a call's value or error, never a rejection, to await later. */
function ok<T>(value: T): { value?: T; error?: unknown } {
  return { value };
}

/** See {@link ok}. */
function failed(error: unknown): { value?: never; error?: unknown } {
  return { error };
}

/** The permit a call was granted, or its error thrown. */
async function granted<T>(settled: Promise<{ value?: T; error?: unknown }>): Promise<T> {
  const { value, error } = await settled;
  if (error !== undefined) throw error as Error;
  return value!;
}

describe('PgModelLimiter', () => {
  it('never has more than maxConcurrent permits out across two workers, under a race of acquires', async () => {
    const pool = freshPool();
    const workers = [limiter({ pool, maxConcurrent: 2 }), limiter({ pool, maxConcurrent: 2 })];
    let out = 0;
    let most = 0;
    const seenInDatabase: number[] = [];
    await Promise.all(
      Array.from({ length: 24 }, async (_, index) => {
        const permit = await workers[index % 2]!.acquire(1);
        out += 1;
        most = Math.max(most, out);
        // Hold the slot across a round trip to the database, so that holders overlap.
        seenInDatabase.push((await workers[(index + 1) % 2]!.stats()).inFlight);
        out -= 1;
        await permit.release(1);
      }),
    );
    expect(most).toBeLessThanOrEqual(2);
    expect(Math.max(...seenInDatabase)).toBeLessThanOrEqual(2);
    expect(await leaseRows(pool)).toBe(0);
  });

  it('makes a worker wait while the other worker holds every slot, and serves it once one is given back', async () => {
    const pool = freshPool();
    const [a, b] = [limiter({ pool, maxConcurrent: 2 }), limiter({ pool, maxConcurrent: 2 })];
    const held = [await a.acquire(1), await a.acquire(1)];
    const wait = firstWait();
    const third = b.acquire(1, { onWait: wait.onWait }).then(ok, failed);
    await wait.refused;
    expect(await leaseRows(pool)).toBe(2);
    await held[0]!.release();
    const permit = await granted(third);
    expect(await leaseRows(pool)).toBe(2);
    await Promise.all([held[1]!.release(), permit.release()]);
    expect(await leaseRows(pool)).toBe(0);
  });

  it('frees the slot of a worker that died holding it once its lease expires, and not before', async () => {
    const pool = freshPool();
    let clock = 1_000_000;
    const now = (): number => clock;
    const crashed = new PgModelLimiter({ url: postgres.url(), pool, maxConcurrent: 1, leaseMs: 10_000, now });
    await crashed.acquire(1);
    // The worker is gone: its connections close and nobody releases or renews its lease.
    await crashed.close();
    const survivor = limiter({ pool, maxConcurrent: 1, leaseMs: 10_000, now });
    let refusals = 0;
    const permit = await survivor.acquire(1, {
      onWait: () => {
        refusals += 1;
        // Refused while the lease is live; then the clock passes its expiry.
        if (refusals === 2) clock += 10_000;
      },
    });
    expect(refusals).toBe(2);
    expect(await leaseRows(pool)).toBe(1);
    await permit.release();
    expect(await leaseRows(pool)).toBe(0);
  });

  it('renews the lease of a call that is still running, so a long call keeps its slot', async () => {
    const pool = freshPool();
    let clock = 1_000_000;
    const now = (): number => clock;
    let renew!: () => void;
    // The holder's renewal timer fires when the test says so; its polling timer is a real short one.
    const sleep = (milliseconds: number, signal: AbortSignal): Promise<void> =>
      new Promise((resolve, reject) => {
        if (milliseconds === 5) return void setTimeout(resolve, milliseconds);
        renew = resolve;
        signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      });
    const holder = limiter({ pool, maxConcurrent: 1, leaseMs: 9_000, now, sleep });
    const permit = await holder.acquire(1);
    const expiry = async (): Promise<number> =>
      Number(
        (
          await admin.query<{ e: number }>(
            'SELECT expires_at AS e FROM keel_model_pacing_leases WHERE pool = $1',
            [pool],
          )
        ).rows[0]!.e,
      );
    expect(await expiry()).toBe(1_009_000);
    clock += 8_000;
    renew();
    while ((await expiry()) !== 1_017_000) await new Promise((resolve) => setImmediate(resolve));
    clock += 8_000; // past the first expiry, inside the renewed one
    const other = limiter({ pool, maxConcurrent: 1, leaseMs: 9_000, now });
    const wait = new AbortController();
    const refused = firstWait();
    const waiting = other.acquire(1, { signal: wait.signal, onWait: refused.onWait }).then(ok, failed);
    const first = await Promise.race([
      refused.refused.then(() => 'refused'),
      waiting.then(async ({ value }) => {
        await value?.release();
        return 'granted';
      }),
    ]);
    expect(first).toBe('refused');
    wait.abort();
    expect((await waiting).error).toBeDefined();
    await permit.release();
    expect(await leaseRows(pool)).toBe(0);
  });

  it('shares the token budget: two workers together spend no more than tokensPerMinute', async () => {
    const pool = freshPool();
    let clock = 1_000_000;
    const now = (): number => clock;
    const workers = [
      limiter({ pool, tokensPerMinute: 100, now }),
      limiter({ pool, tokensPerMinute: 100, now }),
    ];
    const stop = new AbortController();
    const permits: ModelPacerPermit[] = [];
    const errors: unknown[] = [];
    const refusals: Promise<void>[] = [];
    const ends: Promise<void>[] = [];
    for (let index = 0; index < 8; index += 1) {
      const wait = firstWait();
      const end = firstWait();
      refusals.push(wait.refused);
      ends.push(end.refused);
      // A granted call counts as settled for the first wait below, as a refused one does.
      workers[index % 2]!.acquire(30, { signal: stop.signal, onWait: wait.onWait }).then(
        (permit) => {
          permits.push(permit);
          wait.onWait();
          end.onWait();
        },
        (error: unknown) => {
          errors.push(error);
          end.onWait();
        },
      );
    }
    // The clock stands still: nothing refills, so once every call was served or refused, that is final.
    await Promise.all(refusals);
    expect(permits).toHaveLength(3);
    expect((await workers[0]!.stats()).tokensAvailable).toBe(10);
    // A fifth of a minute refills 20 tokens: one more call of 30 fits, and no second one.
    clock += 12_000;
    expect(await waitForGrants(permits, 4)).toBe(4);
    stop.abort();
    await Promise.all(ends);
    expect(permits).toHaveLength(4);
    expect(errors).toHaveLength(4);
    // An actual usage above the estimate is charged after the fact.
    await permits[0]!.release(80);
    expect((await workers[1]!.stats()).tokensAvailable).toBe(-50);
    for (const permit of permits.slice(1)) await permit.release(30);
    expect(await leaseRows(pool)).toBe(0);
  });

  it('gives up a wait when its signal aborts, holding nothing', async () => {
    const pool = freshPool();
    const [a, b] = [limiter({ pool, maxConcurrent: 1 }), limiter({ pool, maxConcurrent: 1 })];
    const held = await a.acquire(1);
    const abort = new AbortController();
    const wait = firstWait();
    const waiting = b.acquire(1, { signal: abort.signal, onWait: wait.onWait }).then(ok, failed);
    await wait.refused;
    abort.abort(new Error('the activity was cancelled'));
    expect((await waiting).error).toMatchObject({ message: 'the activity was cancelled' });
    expect(await leaseRows(pool)).toBe(1);
    await held.release();
    expect(await leaseRows(pool)).toBe(0);
    // The slot it did not take is free for the next caller.
    await (await b.acquire(1)).release();
  });

  it('ends a wait when onWait throws, holding nothing', async () => {
    const pool = freshPool();
    const [a, b] = [limiter({ pool, maxConcurrent: 1 }), limiter({ pool, maxConcurrent: 1 })];
    const held = await a.acquire(1);
    await expect(
      b.acquire(1, {
        onWait: () => {
          throw new Error('heartbeat failed');
        },
      }),
    ).rejects.toThrow('heartbeat failed');
    expect(await leaseRows(pool)).toBe(1);
    await held.release();
  });

  it('creates its tables once when many workers start together', async () => {
    const pool = freshPool();
    await Promise.all(Array.from({ length: 6 }, () => limiter({ pool, maxConcurrent: 1 }).start()));
    expect(await leaseRows(pool)).toBe(0);
  });

  it('fails a waiting call with an error naming the setting, not the password, once the database is gone', async () => {
    const pool = freshPool();
    const [a, b] = [limiter({ pool, maxConcurrent: 1 }), limiter({ pool, maxConcurrent: 1 })];
    const held = await a.acquire(1);
    const wait = firstWait();
    const waiting = b.acquire(1, { onWait: wait.onWait }).then(ok, failed);
    await wait.refused;
    await postgres.kill();
    try {
      const { error } = await waiting;
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain('KEEL_MODEL_PACING_STORE');
      expect((error as Error).message).toContain(':***@127.0.0.1');
      expect((error as Error).message).not.toContain('pacing-secret');
    } finally {
      await postgres.start();
      await admin.end().catch(() => undefined);
      admin = await connectAdmin();
    }
    // Back again: the same limiters connect anew, and the slot given back is free.
    await held.release();
    await (await b.acquire(1)).release();
    expect(await leaseRows(pool)).toBe(0);
  });

  it('names the setting and hides the password when the database cannot be used', async () => {
    const unreachable = new PgModelLimiter({
      url: `postgres://keel:very-secret-pw@127.0.0.1:${await freePort()}/pacing`,
      pool: 'x',
      maxConcurrent: 1,
    });
    const refused = await startError(unreachable);
    await unreachable.close();
    expect(refused).toBeInstanceOf(ConfigError);
    expect(refused.message).toContain('KEEL_MODEL_PACING_STORE');
    expect(refused.message).toContain('postgres://keel:***@127.0.0.1');
    expect(refused.message).not.toContain('very-secret-pw');

    const wrongPassword = new PgModelLimiter({
      url: postgres.url().replace('pacing-secret', 'wrong-secret-pw'),
      pool: 'x',
      maxConcurrent: 1,
    });
    const denied = await startError(wrongPassword);
    await wrongPassword.close();
    expect(denied).toBeInstanceOf(ConfigError);
    expect(denied.message).toMatch(/KEEL_MODEL_PACING_STORE.*password authentication failed/su);
    expect(denied.message).not.toContain('wrong-secret-pw');
  });
});

/** Waits until `granted` holds `count` permits (each grant is a database round trip away), then returns its length. */
async function waitForGrants(granted: readonly ModelPacerPermit[], count: number): Promise<number> {
  while (granted.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
  return granted.length;
}

/** Why `limiter.start()` failed; a start that succeeds fails the test. */
async function startError(limiter: PgModelLimiter): Promise<Error> {
  try {
    await limiter.start();
  } catch (error) {
    return error as Error;
  }
  throw new Error('the limiter started against a database it should not reach');
}
