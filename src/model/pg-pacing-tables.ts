import type pg from 'pg';

/** The first key of the two-key advisory locks: Keel's model pacing, apart from anybody else's locks. */
export const PACING_LOCK_CLASS = 0x6b65_656c; // "keel"
/** The second key of the lock that serializes creating the tables. */
const SCHEMA_LOCK = -1;
const MS_PER_MINUTE = 60_000;

/** A slot is a lease row that expires; tokens are one bucket row per pool. */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS keel_model_pacing_leases (
    pool text NOT NULL,
    id text NOT NULL,
    expires_at double precision NOT NULL,
    PRIMARY KEY (pool, id)
  );
  CREATE TABLE IF NOT EXISTS keel_model_pacing_buckets (
    pool text PRIMARY KEY,
    tokens double precision NOT NULL,
    refilled_at double precision NOT NULL
  );`;

/**
 * Creates the pacing tables when missing. `IF NOT EXISTS` alone can still collide when two workers
 * start at once (a duplicate type), so the creation waits on a lock of its own.
 */
export async function createTables(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [PACING_LOCK_CLASS, SCHEMA_LOCK]);
    await client.query(SCHEMA);
    await client.query('COMMIT');
    client.release();
  } catch (error) {
    client.release(true);
    throw error;
  }
}

/** Frees the pool's leases expired by `now` and counts the rest. */
export async function liveLeases(client: pg.PoolClient, pool: string, now: number): Promise<number> {
  await client.query('DELETE FROM keel_model_pacing_leases WHERE pool = $1 AND expires_at <= $2', [
    pool,
    now,
  ]);
  const result = await client.query<{ count: string }>(
    'SELECT count(*) AS count FROM keel_model_pacing_leases WHERE pool = $1',
    [pool],
  );
  return Number(result.rows[0]!.count);
}

/** The bucket's tokens as of `now`: full when the pool has none yet, refilled since it was last written. */
export async function bucketTokens(
  client: pg.PoolClient,
  pool: string,
  capacity: number,
  now: number,
): Promise<number> {
  const result = await client.query<{ tokens: number; refilled_at: number }>(
    'SELECT tokens, refilled_at FROM keel_model_pacing_buckets WHERE pool = $1',
    [pool],
  );
  const row = result.rows[0];
  if (row === undefined) return capacity;
  const refilled = (Math.max(0, now - row.refilled_at) * capacity) / MS_PER_MINUTE;
  return Math.min(capacity, row.tokens + refilled);
}

/** Writes the bucket's tokens as of `now`. */
export async function setBucket(
  client: pg.PoolClient,
  pool: string,
  tokens: number,
  now: number,
): Promise<void> {
  await client.query(
    `INSERT INTO keel_model_pacing_buckets (pool, tokens, refilled_at) VALUES ($1, $2, $3)
     ON CONFLICT (pool) DO UPDATE SET tokens = EXCLUDED.tokens, refilled_at = EXCLUDED.refilled_at`,
    [pool, tokens, now],
  );
}
