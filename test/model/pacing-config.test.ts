import { describe, expect, it } from 'vitest';
import { ConfigError, workerConfigFromEnvironment } from '../../src/config.js';
import { describePostgresUrl } from '../../src/postgres-url.js';
import { configuredSecrets } from '../../src/worker.js';

const withKey = { OPENAI_API_KEY: 'sk-test-key' };

/** The ConfigError reading `environment` throws; fails the test when it throws nothing or something else. */
function configError(environment: NodeJS.ProcessEnv): ConfigError {
  try {
    workerConfigFromEnvironment({ ...withKey, ...environment });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, but nothing was thrown');
}

describe('KEEL_MODEL_PACING_STORE', () => {
  it('shares the pacing limits through the database, pooled by task queue unless named', () => {
    const store = 'postgres://keel:s3cret@db.internal:5432/keel';
    expect(
      workerConfigFromEnvironment({
        ...withKey,
        KEEL_MODEL_CONCURRENCY: '8',
        KEEL_MODEL_PACING_STORE: store,
        KEEL_TASK_QUEUE: 'agents',
      }).modelPacing,
    ).toEqual({ maxConcurrent: 8, store, pool: 'agents' });
    expect(
      workerConfigFromEnvironment({
        ...withKey,
        KEEL_MODEL_PACING_STORE: store,
        KEEL_MODEL_PACING_POOL: 'openai',
      }).modelPacing,
    ).toEqual({ store, pool: 'openai' });
  });

  it('leaves pacing per worker when unset', () => {
    expect(workerConfigFromEnvironment({ ...withKey, KEEL_MODEL_CONCURRENCY: '2' }).modelPacing).toEqual({
      maxConcurrent: 2,
    });
  });

  it('refuses a URL that is not postgres://, naming the setting and never quoting the password', () => {
    const wrongScheme = configError({ KEEL_MODEL_PACING_STORE: 'mysql://keel:hunter2-pw@db/keel' });
    expect(wrongScheme.message).toContain('KEEL_MODEL_PACING_STORE');
    expect(wrongScheme.message).toContain('"mysql:"');
    expect(wrongScheme.message).not.toContain('hunter2-pw');

    const noUrl = configError({ KEEL_MODEL_PACING_STORE: 'keel:hunter2-pw at db' });
    expect(noUrl.message).toContain('KEEL_MODEL_PACING_STORE');
    expect(noUrl.message).not.toContain('hunter2-pw');

    const noHost = configError({ KEEL_MODEL_PACING_STORE: 'postgres:keel:hunter2-pw@db' });
    expect(noHost.message).toContain('no host');
    expect(noHost.message).not.toContain('hunter2-pw');
  });

  it("keeps the store's password out of observations and logs", () => {
    const config = workerConfigFromEnvironment({
      ...withKey,
      KEEL_MODEL_PACING_STORE: 'postgres://keel:p%40ss-w0rd@db/keel',
    });
    expect(configuredSecrets(config)).toContain('p@ss-w0rd');
  });
});

describe('describePostgresUrl', () => {
  it('shows no password and no parameters, and nothing of a value without a host', () => {
    expect(describePostgresUrl('postgres://keel:pw@127.0.0.1:5432/db?sslmode=require')).toBe(
      'postgres://keel:***@127.0.0.1:5432/db?…',
    );
    expect(describePostgresUrl('postgres://keel@db/x')).toBe('postgres://keel@db/x');
    expect(describePostgresUrl('not a url pw')).not.toContain('pw');
  });
});

describe('a password with an unencoded / in a store URL', () => {
  // The URL parser ends the host at the /, so the rest of the password would read as the path.
  const url = 'postgres://keel:2024/Xy9@db.internal:5432/keel';

  it('is refused for both stores, and never shown', () => {
    for (const name of ['KEEL_IDEMPOTENCY_STORE', 'KEEL_MODEL_PACING_STORE']) {
      const error = configError({ [name]: url });
      expect(error.message).toContain(name);
      expect(error.message).toContain('Percent-encode');
      expect(error.message).not.toContain('Xy9');
    }
  });

  it('is not shown in a description either', () => {
    expect(describePostgresUrl(url)).not.toContain('Xy9');
    expect(describePostgresUrl('postgres://keel:2024%2FXy9@db.internal:5432/keel')).toBe(
      'postgres://keel:***@db.internal:5432/keel',
    );
  });
});
