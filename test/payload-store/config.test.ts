import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { ConfigError, payloadStoreFromEnvironment, workerConfigFromEnvironment } from '../../src/config.js';
import { openPayloadStore } from '../../src/payload-store/open-payload-store.js';
import { configuredSecrets, runWorker } from '../../src/worker.js';
import { freePort } from '../support/free-port.js';

const directories: string[] = [];
afterAll(async () => {
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

describe('KEEL_PAYLOAD_STORE', () => {
  it('is off when unset, a directory for file:// and PostgreSQL for postgres://, 128 KiB and up by default', () => {
    expect(payloadStoreFromEnvironment({})).toBeUndefined();
    expect(payloadStoreFromEnvironment({ KEEL_PAYLOAD_STORE: 'file:///srv/keel/blobs/' })).toEqual({
      location: { kind: 'directory', path: '/srv/keel/blobs/' },
      thresholdBytes: 131_072,
      keepHours: 720,
    });
    expect(
      payloadStoreFromEnvironment({
        KEEL_PAYLOAD_STORE: 'postgres://keel:pw@db:5432/keel',
        KEEL_PAYLOAD_STORE_THRESHOLD_BYTES: '65536',
        KEEL_PAYLOAD_STORE_SCHEMA: 'blobs',
        KEEL_PAYLOAD_STORE_KEEP_HOURS: '48',
      }),
    ).toEqual({
      location: { kind: 'postgres', url: 'postgres://keel:pw@db:5432/keel' },
      thresholdBytes: 65_536,
      schema: 'blobs',
      keepHours: 48,
    });
  });

  it('refuses other values without quoting them, and companions without a store', () => {
    const refused = (environment: NodeJS.ProcessEnv) => {
      try {
        payloadStoreFromEnvironment(environment);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    const s3 = refused({ KEEL_PAYLOAD_STORE: 's3://key:hunter2@bucket' });
    expect(s3).toMatch(/^KEEL_PAYLOAD_STORE must be file:\/\/\/absolute\/directory or a postgres:\/\//);
    expect(s3).not.toContain('hunter2');
    expect(refused({ KEEL_PAYLOAD_STORE: 'postgres://keel:hunter2@' })).not.toContain('hunter2');
    expect(refused({ KEEL_PAYLOAD_STORE: 'file:///' })).toMatch(/not the root directory/);
    expect(refused({ KEEL_PAYLOAD_STORE_THRESHOLD_BYTES: '1000000' })).toBe(
      'KEEL_PAYLOAD_STORE_THRESHOLD_BYTES applies to a payload store: set KEEL_PAYLOAD_STORE too',
    );
    expect(
      refused({ KEEL_PAYLOAD_STORE: 'file:///srv/blobs', KEEL_PAYLOAD_STORE_THRESHOLD_BYTES: '10' }),
    ).toMatch(/^KEEL_PAYLOAD_STORE_THRESHOLD_BYTES must be/);
    expect(refused({ KEEL_PAYLOAD_STORE: 'file:///srv/blobs', KEEL_PAYLOAD_STORE_SCHEMA: 'x' })).toMatch(
      /KEEL_PAYLOAD_STORE_SCHEMA applies to a postgres:\/\/ payload store/,
    );
  });

  it('counts the database password among the secrets the worker redacts', () => {
    const config = workerConfigFromEnvironment({
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      KEEL_PAYLOAD_STORE: 'postgres://keel:blob%2Fpass@db:5432/keel',
    });
    expect(configuredSecrets(config)).toContain('blob/pass');
  });

  it('stops a worker at start when the database cannot be reached, naming the setting and not the password', async () => {
    const port = await freePort();
    const config = workerConfigFromEnvironment({
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      KEEL_PAYLOAD_STORE: `postgres://keel:hunter2-pw@127.0.0.1:${port}/keel`,
    });
    const failure = runWorker(config, {
      target: {
        connectionOptions: { address: inject('temporalAddress') },
        namespace: inject('temporalNamespace'),
      },
      console: {
        log: () => undefined,
        info: () => undefined,
        warn: () => undefined,
        error: () => undefined,
        debug: () => undefined,
      },
    });
    await expect(failure).rejects.toBeInstanceOf(ConfigError);
    const message = await failure.catch((error: unknown) => (error as Error).message);
    expect(message).toMatch(
      new RegExp(
        `^KEEL_PAYLOAD_STORE: the payload store at postgres://keel:\\*\\*\\*@127\\.0\\.0\\.1:${port}/keel cannot be used \\(.*ECONNREFUSED`,
      ),
    );
    expect(message).not.toContain('hunter2');
  });

  it('refuses a directory the worker cannot use', async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'keel-blobs-'));
    directories.push(parent);
    const file = path.join(parent, 'not-a-directory');
    await writeFile(file, '');
    await expect(
      openPayloadStore({
        location: { kind: 'directory', path: file },
        thresholdBytes: 131_072,
        keepHours: 720,
      }),
    ).rejects.toThrow(
      new RegExp(`^KEEL_PAYLOAD_STORE: the payload store directory ${file} cannot be used \\(EEXIST`),
    );
  });
});
