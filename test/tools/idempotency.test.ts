import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  FileIdempotencyStore,
  MemoryIdempotencyStore,
  runOnce,
  SideEffectInDoubtError,
} from '../../src/tools/idempotency.js';
import type { IdempotencyStore } from '../../src/tools/idempotency.js';

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'keel-idempotency-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const stores: Array<[string, () => IdempotencyStore]> = [
  ['FileIdempotencyStore', () => new FileIdempotencyStore(path.join(directory, 'records'))],
  ['MemoryIdempotencyStore', () => new MemoryIdempotencyStore()],
];

describe.each(stores)('runOnce with %s', (_name, makeStore) => {
  it('runs the effect once and gives every later call its stored result', async () => {
    const store = makeStore();
    let runs = 0;
    const effect = () => {
      runs += 1;
      return Promise.resolve({ receipt: 'r-1' });
    };
    expect(await runOnce(store, 'wf:call_1:charge', effect)).toEqual({ receipt: 'r-1' });
    expect(await runOnce(store, 'wf:call_1:charge', effect)).toEqual({ receipt: 'r-1' });
    expect(runs).toBe(1);
  });

  it('keeps keys apart', async () => {
    const store = makeStore();
    expect(await runOnce(store, 'wf:call_1:charge', () => 'first')).toBe('first');
    expect(await runOnce(store, 'wf:call_2:charge', () => 'second')).toBe('second');
  });

  it('lets exactly one of many concurrent callers run the effect', async () => {
    const store = makeStore();
    let runs = 0;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        runOnce(store, 'wf:call_1:charge', async () => {
          runs += 1;
          await new Promise((resolve) => setImmediate(resolve));
          return 'done';
        }),
      ),
    );
    expect(runs).toBe(1);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).not.toHaveLength(0);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(SideEffectInDoubtError);
    }
  });

  it('refuses to repeat an effect whose attempt died before recording its result', async () => {
    const store = makeStore();
    expect(await store.claim('wf:call_1:charge')).toBeUndefined();
    let runs = 0;
    const retry = runOnce(store, 'wf:call_1:charge', () => {
      runs += 1;
      return 'again';
    });
    await expect(retry).rejects.toThrow(SideEffectInDoubtError);
    await expect(retry).rejects.toThrow(/may or may not have happened/);
    expect(runs).toBe(0);
  });

  it('releases the key when the effect throws, so a retry may try again', async () => {
    const store = makeStore();
    await expect(
      runOnce(store, 'wf:call_1:charge', () => Promise.reject(new Error('card declined'))),
    ).rejects.toThrow('card declined');
    expect(await runOnce(store, 'wf:call_1:charge', () => 'charged')).toBe('charged');
  });

  it('stores an undefined result as null', async () => {
    const store = makeStore();
    expect(await runOnce(store, 'wf:call_1:noop', () => undefined)).toBeUndefined();
    expect(await runOnce(store, 'wf:call_1:noop', () => 'never')).toBeNull();
  });
});

describe('FileIdempotencyStore', () => {
  it('keeps records across store instances (a new worker process sees them)', async () => {
    const records = path.join(directory, 'records');
    await runOnce(new FileIdempotencyStore(records), 'wf:call_1:charge', () => ({ receipt: 'r-9' }));
    let runs = 0;
    const result = await runOnce(new FileIdempotencyStore(records), 'wf:call_1:charge', () => {
      runs += 1;
      return { receipt: 'other' };
    });
    expect(result).toEqual({ receipt: 'r-9' });
    expect(runs).toBe(0);
  });

  it('names files by a hash of the key, so any key is a safe file name', async () => {
    const store = new FileIdempotencyStore(path.join(directory, 'records'));
    await runOnce(store, '../../etc/passwd:call/1', () => 'ok');
    const files = await readdir(path.join(directory, 'records'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^[0-9a-f]{64}\.json$/);
  });

  it('treats an empty record (a claim whose writer died mid-write) as a claim', async () => {
    const records = path.join(directory, 'records');
    const store = new FileIdempotencyStore(records);
    await store.claim('wf:call_1:charge');
    const [file] = await readdir(records);
    await writeFile(path.join(records, file!), '');
    await expect(runOnce(store, 'wf:call_1:charge', () => 'again')).rejects.toThrow(SideEffectInDoubtError);
  });

  it('keeps its records private: the directory 0700, every record 0600, claimed or done', async () => {
    const records = path.join(directory, 'state', 'records');
    const store = new FileIdempotencyStore(records);
    const mode = async (file: string) => (await stat(file)).mode & 0o777;
    await store.claim('wf:call_1:charge');
    const [claimed] = await readdir(records);
    expect(await mode(records)).toBe(0o700);
    expect(await mode(path.join(directory, 'state'))).toBe(0o700);
    expect(await mode(path.join(records, claimed!))).toBe(0o600);
    await store.complete('wf:call_1:charge', { receipt: 'r-1' });
    expect(await readdir(records)).toEqual([claimed]);
    expect(await mode(path.join(records, claimed!))).toBe(0o600);
  });

  it('closes a records directory that an older version left readable by others', async () => {
    const records = path.join(directory, 'records');
    await mkdir(records);
    await chmod(records, 0o755);
    await runOnce(new FileIdempotencyStore(records), 'wf:call_1:charge', () => 'ok');
    expect((await stat(records)).mode & 0o777).toBe(0o700);
  });
});
