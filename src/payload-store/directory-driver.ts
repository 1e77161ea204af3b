import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, readdir, readFile, rename, rm, stat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';
import type {
  Payload,
  StorageDriver,
  StorageDriverClaim,
  StorageDriverRetrieveContext,
  StorageDriverStoreContext,
} from '@temporalio/common';
import { claimOf, fromBlob, PayloadStoreError, readClaim, toBlob, UNOWNED_SCOPE } from './blob.js';
import type { Blob, BlobOwner } from './blob.js';
import type { BlobSweep, OwnerKnown } from './blob-sweep.js';

/** The name a reference in history gives for blobs in a directory; a reader needs a driver of that name. */
export const DIRECTORY_DRIVER_NAME = 'keel.directory';

/**
 * Payloads as files under one directory, `<scope>/<sha256>.payload`, one scope per run, for workers
 * on several machines when the directory is shared storage (NFS, a mounted volume). A file is
 * written to a temporary name, flushed and renamed, so a reader never sees half of one; writing the
 * same payload again (a retried task) finds the file and only renews its time.
 */
export class DirectoryDriver implements StorageDriver, BlobSweep {
  readonly name = DIRECTORY_DRIVER_NAME;
  readonly type = 'keel.directory';

  constructor(readonly root: string) {}

  /** Checks the directory is there and writable, creating it when missing: at start, not at the first large payload. */
  async open(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await access(this.root, constants.R_OK | constants.W_OK | constants.X_OK);
  }

  async store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    return Promise.all(
      payloads.map(async (payload) => {
        const blob = toBlob(payload, context.target);
        await this.#write(blob);
        return claimOf(blob);
      }),
    );
  }

  async retrieve(_context: StorageDriverRetrieveContext, claims: StorageDriverClaim[]): Promise<Payload[]> {
    return Promise.all(
      claims.map(async (claim) => {
        const key = readClaim(claim, this.name);
        const file = this.#file(key.scope, key.sha256);
        const bytes = await readFile(file).catch((error: unknown) => {
          throw new PayloadStoreError(
            `The stored payload ${key.sha256} cannot be read from ${file} (${(error as Error).message}): it was ` +
              'deleted, or this worker sees another directory than the one that stored it (KEEL_PAYLOAD_STORE).',
          );
        });
        return fromBlob(bytes, key, file);
      }),
    );
  }

  async #write(blob: Blob): Promise<void> {
    const directory = path.join(this.root, blob.scope);
    const file = this.#file(blob.scope, blob.sha256);
    await mkdir(directory, { recursive: true });
    if (blob.owner !== undefined) await this.#recordOwner(directory, blob.owner);
    const existing = await readFile(file).catch(() => undefined);
    if (existing !== undefined && sameHash(existing, blob.sha256)) {
      // The time is what the sweep goes by: a run that stores the same payload again is alive.
      const now = new Date();
      await utimes(file, now, now);
      return;
    }
    // Missing, or changed by someone: written (again) from the payload in hand.
    await writeFileAtomically(directory, file, blob.bytes);
  }

  async #recordOwner(directory: string, owner: BlobOwner): Promise<void> {
    const file = path.join(directory, 'owner.json');
    const exists = await stat(file).then(
      () => true,
      () => false,
    );
    if (!exists) await writeFileAtomically(directory, file, Buffer.from(JSON.stringify(owner)));
  }

  #file(scope: string, sha256: string): string {
    return path.join(this.root, scope, `${sha256}.payload`);
  }

  async sweep(ownerKnown: OwnerKnown, keepMs: number): Promise<number> {
    const cutoff = Date.now() - keepMs;
    let deleted = 0;
    for (const scope of await readdir(this.root)) {
      if (!(scope === UNOWNED_SCOPE || /^[0-9a-f]{64}$/u.test(scope))) continue;
      const directory = path.join(this.root, scope);
      const names = (await readdir(directory)).filter((name) => name.endsWith('.payload'));
      const times = await Promise.all(
        names.map((name) => stat(path.join(directory, name)).then((s) => s.mtimeMs)),
      );
      // A run's blobs go together, and only once its newest is old: one young blob keeps them all.
      if (times.some((time) => time > cutoff)) continue;
      const owner = await readFile(path.join(directory, 'owner.json'), 'utf8').then(
        (text) => JSON.parse(text) as BlobOwner,
        () => undefined,
      );
      if (owner !== undefined && (await ownerKnown(owner))) continue;
      await rm(directory, { recursive: true, force: true });
      deleted += names.length;
    }
    return deleted;
  }

  /** Nothing to end: files hold no connection. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function sameHash(bytes: Uint8Array, sha256: string): boolean {
  return createHash('sha256').update(bytes).digest('hex') === sha256;
}

/** Writes a temporary file beside `file`, flushes it and renames it over `file`. */
async function writeFileAtomically(directory: string, file: string, bytes: Uint8Array): Promise<void> {
  const temporary = path.join(directory, `.${randomBytes(8).toString('hex')}.tmp`);
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, file);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}
