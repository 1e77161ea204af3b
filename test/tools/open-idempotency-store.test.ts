import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, workerConfigFromEnvironment } from '../../src/config.js';
import { PostgresIdempotencyStore } from '../../src/tools/pg-idempotency-store.js';
import { closeIdempotencyStore } from '../../src/tools/open-idempotency-store.js';
import { configuredSecrets, keelOptionsFromConfig } from '../../src/worker.js';
import { freePort } from '../support/free-port.js';
import { startPostgres } from '../support/postgres.js';
import type { Postgres } from '../support/postgres.js';

const PASSWORD = 'hunter2-Secret';
let server: Postgres;

beforeAll(async () => {
  server = await startPostgres({ password: PASSWORD });
});
afterAll(async () => {
  await server.close();
});

/** Keel's options for a worker configured with `KEEL_IDEMPOTENCY_STORE=url`, as at worker start. */
function optionsFor(url: string) {
  return keelOptionsFromConfig(
    workerConfigFromEnvironment({ OPENAI_API_KEY: 'sk-test-key', KEEL_IDEMPOTENCY_STORE: url }),
  );
}

async function startError(url: string): Promise<ConfigError> {
  const error = await optionsFor(url).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe('KEEL_IDEMPOTENCY_STORE at worker start', () => {
  it('opens the PostgreSQL store, its table made, and counts its password as a secret', async () => {
    const options = await optionsFor(server.url());
    try {
      expect(options.idempotencyStore).toBeInstanceOf(PostgresIdempotencyStore);
      expect(await options.idempotencyStore!.claim('k')).toBeUndefined();
    } finally {
      await closeIdempotencyStore(options.idempotencyStore);
    }
    const config = workerConfigFromEnvironment({ OPENAI_API_KEY: 'k', KEEL_IDEMPOTENCY_STORE: server.url() });
    expect(configuredSecrets(config)).toContain(PASSWORD);
  });

  it('refuses a wrong password, naming the setting and not the password', async () => {
    const error = await startError(server.url().replace(PASSWORD, 'wrong-Secret'));
    expect(error.message).toMatch(
      new RegExp(
        `^KEEL_IDEMPOTENCY_STORE: the side-effect store at postgres://temporal:\\*\\*\\*@127\\.0\\.0\\.1:${server.port}/postgres ` +
          'cannot be used \\(password authentication failed for user "temporal"\\)',
        'u',
      ),
    );
    expect(error.message).not.toContain('wrong-Secret');
  });

  it('refuses a database that does not exist, and a port where nothing listens', async () => {
    expect((await startError(server.url('missing'))).message).toContain('database "missing" does not exist');
    const nobody = server.url().replace(`:${server.port}/`, `:${await freePort()}/`);
    const refused = await startError(nobody);
    expect(refused.message).toMatch(/^KEEL_IDEMPOTENCY_STORE: .*\(connect ECONNREFUSED 127\.0\.0\.1:\d+\)/u);
    expect(refused.message).not.toContain(PASSWORD);
  });

  it('refuses a user that may not create the table', async () => {
    const client = new pg.Client({ connectionString: server.url() });
    await client.connect();
    try {
      await client.query(`CREATE ROLE reader LOGIN PASSWORD 'reader-pw'`);
    } finally {
      await client.end();
    }
    const error = await startError(server.url().replace(`temporal:${PASSWORD}`, 'reader:reader-pw'));
    expect(error.message).toMatch(/\(permission denied for schema keel\)/u);
    expect(error.message).not.toContain('reader-pw');
  });
});
