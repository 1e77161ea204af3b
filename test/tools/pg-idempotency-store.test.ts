import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runOnce, SideEffectInDoubtError } from '../../src/tools/idempotency.js';
import { PostgresIdempotencyStore } from '../../src/tools/pg-idempotency-store.js';
import { describePostgresUrl } from '../../src/postgres-url.js';
import type { PostgresIdempotencyStoreOptions } from '../../src/tools/pg-idempotency-store.js';
import { startPostgres } from '../support/postgres.js';
import type { Postgres } from '../support/postgres.js';

let server: Postgres;
const opened: PostgresIdempotencyStore[] = [];
let schemas = 0;

beforeAll(async () => {
  server = await startPostgres({ password: 's3cret:pass@word' });
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});
afterAll(async () => {
  await server.close();
});

/** A store on the test server, in a schema of its own unless given one. */
function store(options: Partial<PostgresIdempotencyStoreOptions> = {}): PostgresIdempotencyStore {
  schemas += 1;
  const made = new PostgresIdempotencyStore({ url: server.url(), schema: `test_${schemas}`, ...options });
  opened.push(made);
  return made;
}

async function query<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: server.url() });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

describe('PostgresIdempotencyStore', () => {
  it('gives a key to its first claimer, then says it is claimed, done with its result, or free again', async () => {
    const records = store();
    expect(await records.claim('wf:call_1:charge')).toBeUndefined();
    expect(await records.claim('wf:call_1:charge')).toEqual({ state: 'claimed' });
    const result = { receipt: 'r-1', amount: 1.5, lines: ['ä', '\u0000', '\ud800'], nothing: null };
    await records.complete('wf:call_1:charge', result);
    expect(await records.claim('wf:call_1:charge')).toEqual({ state: 'done', result });

    expect(await records.claim('wf:call_2:charge')).toBeUndefined();
    await records.release('wf:call_2:charge');
    expect(await records.claim('wf:call_2:charge')).toBeUndefined();
  });

  it('keeps keys apart, ones that differ only in a NUL or a lone surrogate too', async () => {
    const records = store();
    for (const key of ['a', 'a\u0000', 'a\ud800', 'a\udc00', 'a\ufffd'])
      expect(await records.claim(key)).toBeUndefined();
    await records.complete('a', 'first');
    expect(await records.claim('a\ud800')).toEqual({ state: 'claimed' });
  });

  it('runs an effect once through runOnce, and refuses a retry of one interrupted as in doubt', async () => {
    const records = store();
    let runs = 0;
    const effect = () => (runs += 1);
    expect(await runOnce(records, 'wf:call_1:charge', effect)).toBe(1);
    expect(await runOnce(records, 'wf:call_1:charge', effect)).toBe(1);
    expect(runs).toBe(1);
    await records.claim('wf:call_2:charge');
    await expect(runOnce(records, 'wf:call_2:charge', effect)).rejects.toBeInstanceOf(SideEffectInDoubtError);
    expect(runs).toBe(1);
  });

  it('lets exactly one claim win each key when two stores (two machines) race for many keys', async () => {
    const schema = 'race';
    const [first, second] = [store({ schema }), store({ schema })];
    const keys = Array.from({ length: 200 }, (_, index) => `wf:call_${index}:charge`);
    const winners = await Promise.all(
      keys.map(async (key) => {
        const claims = await Promise.all([first, second, first, second].map((records) => records.claim(key)));
        return claims.filter((claim) => claim === undefined).length;
      }),
    );
    expect(winners).toEqual(keys.map(() => 1));
  });

  it('creates its schema and table once when many stores start at the same time', async () => {
    const schema = 'started_together';
    const stores = Array.from({ length: 8 }, () => store({ schema }));
    await Promise.all(stores.map((records) => records.open()));
    const claims = await Promise.all(stores.map((records) => records.claim('k')));
    expect(claims.filter((claim) => claim === undefined)).toHaveLength(1);
    expect(await query('SELECT 1 FROM pg_tables WHERE schemaname = $1', [schema])).toHaveLength(1);
  });

  it('keeps its records when the store is closed and opened again', async () => {
    const before = store({ schema: 'kept' });
    await before.claim('done');
    await before.complete('done', { receipt: 'r-1' });
    await before.claim('claimed');
    await before.close();
    opened.splice(opened.indexOf(before), 1);
    const after = store({ schema: 'kept' });
    expect(await after.claim('done')).toEqual({ state: 'done', result: { receipt: 'r-1' } });
    expect(await after.claim('claimed')).toEqual({ state: 'claimed' });
  });

  it('keeps records for the time given, 7 days by default', async () => {
    await store({ schema: 'default_ttl' }).claim('k');
    await store({ schema: 'one_hour', ttlMs: 3_600_000 }).claim('k');
    const lifetime = async (schema: string) =>
      (
        await query<{ seconds: number }>(
          `SELECT extract(epoch FROM expires_at - written_at)::float AS seconds FROM "${schema}".idempotency`,
        )
      )[0]?.seconds;
    expect(await lifetime('default_ttl')).toBe(7 * 24 * 3600);
    expect(await lifetime('one_hour')).toBe(3600);
  });

  it('treats an expired record as absent, and deletes expired records', async () => {
    const expiring = store({ schema: 'expiring', ttlMs: 0 });
    expect(await expiring.claim('claimed')).toBeUndefined();
    expect(await expiring.claim('claimed')).toBeUndefined();
    await expiring.complete('done', 'result');
    expect(await expiring.claim('done')).toBeUndefined();
    expect(await expiring.deleteExpired()).toBe(2);
    expect(await query('SELECT 1 FROM expiring.idempotency')).toHaveLength(0);

    const lasting = store({ schema: 'expiring' });
    await lasting.claim('kept');
    expect(await lasting.deleteExpired()).toBe(0);
    expect(await lasting.claim('kept')).toEqual({ state: 'claimed' });
  });

  it('deletes expired records when it starts', async () => {
    const expiring = store({ schema: 'swept_at_start', ttlMs: 0 });
    await expiring.claim('a');
    await expiring.complete('b', 'result');
    expect(await query('SELECT 1 FROM swept_at_start.idempotency')).toHaveLength(2);
    await store({ schema: 'swept_at_start' }).open();
    expect(await query('SELECT 1 FROM swept_at_start.idempotency')).toHaveLength(0);
  });

  it('works again once PostgreSQL is back after a crash, with the records it had', async () => {
    const records = store({ schema: 'crash' });
    await records.claim('before');
    await records.complete('before', 'kept');
    await server.kill();
    await server.start();
    // The pool's connections died with the server: the next call opens a new one.
    expect(await records.claim('before')).toEqual({ state: 'done', result: 'kept' });
    expect(await records.claim('after')).toBeUndefined();
  });

  it('fails while PostgreSQL is down and works again once it is back', async () => {
    const records = store({ schema: 'down' });
    await records.open();
    await server.stop();
    try {
      await expect(records.claim('k')).rejects.toThrow();
    } finally {
      await server.start();
    }
    expect(await records.claim('k')).toBeUndefined();
  });

  it('tells runOnce the effect result even when the record cannot be written, and keeps the claim', async () => {
    const records = store({ schema: 'unrecorded' });
    const failures: unknown[] = [];
    try {
      const result = await runOnce(
        records,
        'wf:call_1:charge',
        async () => {
          await server.stop();
          return 'charged';
        },
        (error) => failures.push(error),
      );
      expect(result).toBe('charged');
      expect(failures).toHaveLength(1);
    } finally {
      await server.start();
    }
    await expect(runOnce(records, 'wf:call_1:charge', () => 'again')).rejects.toBeInstanceOf(
      SideEffectInDoubtError,
    );
  });

  it('never shows the password: not in its errors, not in a described URL', async () => {
    const wrong = store({ url: server.url().replace(encodeURIComponent(server.password), 'wrong%2Fpw') });
    const error = (await wrong.open().catch((caught: unknown) => caught)) as Error;
    expect(error.message).toMatch(/password authentication failed/u);
    expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain('wrong');
    expect(describePostgresUrl(server.url())).toBe(
      `postgres://temporal:***@127.0.0.1:${server.port}/postgres`,
    );
    expect(() => new PostgresIdempotencyStore({ url: 'mysql://u:hunter2@h/db' })).toThrow(
      /^PostgresIdempotencyStore needs a postgres:\/\/ or postgresql:\/\/ URL$/u,
    );
    expect(() => new PostgresIdempotencyStore({ url: server.url(), schema: 'a"; DROP' })).toThrow(TypeError);
  });
});
