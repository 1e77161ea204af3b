import pg from 'pg';
import type {
  Payload,
  StorageDriver,
  StorageDriverClaim,
  StorageDriverRetrieveContext,
  StorageDriverStoreContext,
} from '@temporalio/common';
import { SCHEMA_NAME } from '../postgres-url.js';
import { claimOf, fromBlob, PayloadStoreError, readClaim, toBlob } from './blob.js';
import type { BlobSweep, OwnerKnown } from './blob-sweep.js';

/** The name a reference in history gives for blobs in PostgreSQL; a reader needs a driver of that name. */
export const POSTGRES_DRIVER_NAME = 'keel.postgres';

/** The schema of the blob table when none is given: the one Keel's other PostgreSQL stores use. */
export const DEFAULT_PAYLOAD_STORE_SCHEMA = 'keel';

/**
 * Payloads as rows of `<schema>.payload_blobs` in PostgreSQL (the database Keel's side-effect store
 * may already use), keyed by run scope and SHA-256: storing the same payload again (a retried task)
 * is one upsert that renews its time. The table is made at start under an advisory lock.
 */
export class PostgresDriver implements StorageDriver, BlobSweep {
  readonly name = POSTGRES_DRIVER_NAME;
  readonly type = 'keel.postgres';
  readonly #pool: pg.Pool;
  readonly #schema: string;
  readonly #table: string;

  constructor(url: string, schema = DEFAULT_PAYLOAD_STORE_SCHEMA) {
    if (!SCHEMA_NAME.test(schema)) {
      throw new TypeError(
        `PostgresDriver schema must be letters, digits and _, not ${JSON.stringify(schema)}`,
      );
    }
    this.#schema = schema;
    this.#table = `"${schema}".payload_blobs`;
    this.#pool = new pg.Pool({
      connectionString: url,
      application_name: 'keel',
      connectionTimeoutMillis: 10_000,
      allowExitOnIdle: true,
    });
    // A connection dropped while idle is replaced by the next query; unheard, its error would end the process.
    this.#pool.on('error', () => undefined);
  }

  /** Connects and makes the schema and table when missing. */
  async open(): Promise<void> {
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
        `keel.payload_blobs:${this.#schema}`,
      ]);
      const schema = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.#schema]);
      if (schema.rowCount === 0) await client.query(`CREATE SCHEMA IF NOT EXISTS "${this.#schema}"`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.#table} (
           scope text NOT NULL,
           sha256 text NOT NULL,
           namespace text,
           workflow_id text,
           data bytea NOT NULL,
           stored_at timestamptz NOT NULL,
           PRIMARY KEY (scope, sha256)
         )`,
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(error as Error);
      throw error;
    }
    client.release();
  }

  async store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    return Promise.all(
      payloads.map(async (payload) => {
        const blob = toBlob(payload, context.target);
        // The data is written again too: a row someone changed is repaired by the next store of it.
        await this.#pool.query(
          `INSERT INTO ${this.#table} (scope, sha256, namespace, workflow_id, data, stored_at)
           VALUES ($1, $2, $3, $4, $5, now())
           ON CONFLICT (scope, sha256) DO UPDATE SET data = EXCLUDED.data, stored_at = EXCLUDED.stored_at`,
          [
            blob.scope,
            blob.sha256,
            blob.owner?.namespace ?? null,
            blob.owner?.workflowId ?? null,
            blob.bytes,
          ],
        );
        return claimOf(blob);
      }),
    );
  }

  async retrieve(_context: StorageDriverRetrieveContext, claims: StorageDriverClaim[]): Promise<Payload[]> {
    return Promise.all(
      claims.map(async (claim) => {
        const key = readClaim(claim, this.name);
        const found = await this.#pool.query<{ data: Buffer }>(
          `SELECT data FROM ${this.#table} WHERE scope = $1 AND sha256 = $2`,
          [key.scope, key.sha256],
        );
        const where = `${this.#table} (scope ${key.scope})`;
        const row = found.rows[0];
        if (row === undefined) {
          throw new PayloadStoreError(
            `The stored payload ${key.sha256} is missing from ${where}: it was deleted, or this worker uses ` +
              'another database than the one that stored it (KEEL_PAYLOAD_STORE).',
          );
        }
        return fromBlob(row.data, key, where);
      }),
    );
  }

  async sweep(ownerKnown: OwnerKnown, keepMs: number): Promise<number> {
    const old = await this.#pool.query<{
      scope: string;
      namespace: string | null;
      workflow_id: string | null;
    }>(
      `SELECT scope, max(namespace) AS namespace, max(workflow_id) AS workflow_id FROM ${this.#table}
       GROUP BY scope HAVING max(stored_at) < now() - make_interval(secs => $1)`,
      [keepMs / 1000],
    );
    let deleted = 0;
    for (const row of old.rows) {
      const owner =
        row.namespace === null || row.workflow_id === null
          ? undefined
          : { namespace: row.namespace, workflowId: row.workflow_id };
      if (owner !== undefined && (await ownerKnown(owner))) continue;
      // Deleted only if still old: a store since the query keeps them.
      const result = await this.#pool.query(
        `DELETE FROM ${this.#table} WHERE scope = $1
           AND (SELECT max(stored_at) FROM ${this.#table} WHERE scope = $1) < now() - make_interval(secs => $2)`,
        [row.scope, keepMs / 1000],
      );
      deleted += result.rowCount ?? 0;
    }
    return deleted;
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}
