import { createHash } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from './tool-error.js';

/** What a store knows about one key. */
export type IdempotencyRecord = { state: 'claimed' } | { state: 'done'; result: unknown };

/**
 * Durable memory of side effects, one record per key. `claim` must be atomic across processes that
 * share the store: exactly one caller wins a key.
 */
export interface IdempotencyStore {
  /** Claims `key`: undefined if this caller got it, else the record that was already there. */
  claim(key: string): Promise<IdempotencyRecord | undefined>;
  /** Records the effect's result under a key this caller claimed. */
  complete(key: string, result: unknown): Promise<void>;
  /** Gives a claimed key up again, after an effect that failed without taking place. */
  release(key: string): Promise<void>;
}

/** An earlier attempt began the effect and was interrupted: it may or may not have happened. */
export class SideEffectInDoubtError extends ToolError {
  override name = 'SideEffectInDoubtError';
}

/**
 * Runs `effect` at most once per key. The key is claimed before the effect runs and the result is
 * stored after it, so a retry of the same call returns the stored result instead of repeating the
 * effect. If an attempt died between the two, the retry refuses with {@link SideEffectInDoubtError}
 * rather than risk doing it twice. An effect that throws must not have happened: its claim is
 * released so a retry may try again.
 *
 * A store that fails after the effect (its database unreachable) does not change what the caller is
 * told: the effect's result, or its error. The claim then stays, so a retry is refused as in doubt,
 * and the store's error goes to `unrecorded`.
 */
export async function runOnce<T>(
  store: IdempotencyStore,
  key: string,
  effect: () => Promise<T> | T,
  unrecorded: (error: unknown) => void = () => undefined,
): Promise<T> {
  const existing = await store.claim(key);
  if (existing?.state === 'done') return existing.result as T;
  if (existing?.state === 'claimed') {
    throw new SideEffectInDoubtError(
      'An earlier attempt of this call started its side effect and was interrupted before it finished, ' +
        'so it may or may not have happened. Check the outcome before doing it again.',
    );
  }
  let result: T;
  try {
    result = await effect();
  } catch (error) {
    await store.release(key).catch(unrecorded);
    throw error;
  }
  // The effect happened: saying it failed because its record did not would invite doing it again.
  await store.complete(key, result ?? null).catch(unrecorded);
  return result;
}

/** Records hold tool results: readable by the worker's user alone. */
const PRIVATE_FILE = 0o600;
const PRIVATE_DIRECTORY = 0o700;

/**
 * An {@link IdempotencyStore} in a directory: one JSON file per key (named by the key's SHA-256),
 * claimed with an exclusive create and completed with an atomic rename. Workers share it when they
 * share the directory; for workers on several machines use a store on a shared database instead.
 * The directory is made private (0700) and every record is created 0600.
 */
export class FileIdempotencyStore implements IdempotencyStore {
  #ready: Promise<void> | undefined;

  constructor(readonly directory: string) {}

  async claim(key: string): Promise<IdempotencyRecord | undefined> {
    await this.ready();
    const file = this.file(key);
    try {
      const handle = await open(file, 'wx', PRIVATE_FILE);
      try {
        await handle.writeFile(JSON.stringify({ state: 'claimed', key }));
        await handle.sync();
      } finally {
        await handle.close();
      }
      return undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return this.read(file);
    }
  }

  async complete(key: string, result: unknown): Promise<void> {
    const file = this.file(key);
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, JSON.stringify({ state: 'done', key, result }), {
      flush: true,
      mode: PRIVATE_FILE,
    });
    await rename(temporary, file);
  }

  async release(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }

  /** Creates the directory once, private; one an older version left readable by others is closed too. */
  private ready(): Promise<void> {
    this.#ready ??= (async () => {
      await mkdir(this.directory, { recursive: true, mode: PRIVATE_DIRECTORY });
      await chmod(this.directory, PRIVATE_DIRECTORY);
    })();
    // A failed attempt (a full disk, say) is tried again on the next claim.
    this.#ready.catch(() => (this.#ready = undefined));
    return this.#ready;
  }

  private file(key: string): string {
    return path.join(this.directory, `${createHash('sha256').update(key).digest('hex')}.json`);
  }

  private async read(file: string): Promise<IdempotencyRecord> {
    const text = await readFile(file, 'utf8');
    // An empty file is a claim whose writer died before writing it: still a claim.
    if (text.trim() === '') return { state: 'claimed' };
    const record = JSON.parse(text) as { state: string; result?: unknown };
    return record.state === 'done' ? { state: 'done', result: record.result } : { state: 'claimed' };
  }
}

/** An {@link IdempotencyStore} in memory: for tests and single-process use; forgotten on restart. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #records = new Map<string, IdempotencyRecord>();

  claim(key: string): Promise<IdempotencyRecord | undefined> {
    const existing = this.#records.get(key);
    if (existing === undefined) this.#records.set(key, { state: 'claimed' });
    return Promise.resolve(existing);
  }

  complete(key: string, result: unknown): Promise<void> {
    this.#records.set(key, { state: 'done', result });
    return Promise.resolve();
  }

  release(key: string): Promise<void> {
    this.#records.delete(key);
    return Promise.resolve();
  }
}
