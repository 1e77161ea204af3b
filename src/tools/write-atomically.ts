import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { link, open, rename, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { atRealPath, entryPath, errorCode, lstatIfExists, O_NOFOLLOW } from './held-directory.js';
import type { HeldDirectory } from './held-directory.js';
import { WorkspaceError } from './workspace-error.js';

/** How {@link writeAtomically} places the new file. */
export interface AtomicWrite {
  /** Replace an existing file (true) or fail if one appears (false). */
  overwrite: boolean;
  /** The file being replaced: its permissions (and owner, where allowed) carry over. */
  replacing?: Stats;
  /** The path as the model gave it, for messages. */
  shown: string;
  signal?: AbortSignal;
}

/**
 * Writes `data` to a fresh temporary file in `directory`, flushes it, then moves it onto `name` in one
 * step: readers see the old file or the new one, never half of it, and a crash leaves the old file
 * whole. The rename replaces the directory entry, so it never writes through a symbolic link or into
 * another hard link of the old file.
 */
export async function writeAtomically(
  directory: HeldDirectory,
  name: string,
  data: Uint8Array,
  options: AtomicWrite,
): Promise<void> {
  const realPath = path.join(directory.path, name);
  const target = entryPath(directory, name);
  const temporary = entryPath(directory, `.keel-write-${randomBytes(8).toString('hex')}.tmp`);
  const mode = options.replacing === undefined ? 0o666 : options.replacing.mode & 0o777;
  let placed = false;
  try {
    const handle = await open(
      temporary,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW,
      mode,
    );
    try {
      await handle.writeFile(data);
      if (options.replacing !== undefined) {
        // open() filters the mode through the umask; a replaced file keeps exactly its own.
        await handle.chmod(mode);
        await keepOwner(handle, options.replacing);
      } else await takeParentsOwner(handle, directory);
      await handle.sync();
    } finally {
      await handle.close();
    }
    options.signal?.throwIfAborted();
    if (options.overwrite) {
      await rename(temporary, target);
      placed = true;
    } else {
      await placeExclusively(temporary, target, options.shown);
    }
  } catch (error) {
    throw atRealPath(error, realPath);
  } finally {
    if (!placed) await unlink(temporary).catch(() => undefined);
  }
}

/** Links the temporary file at `target` only if nothing is there: an atomic "create, never replace". */
async function placeExclusively(temporary: string, target: string, shown: string): Promise<void> {
  const exists = (): WorkspaceError =>
    new WorkspaceError(`${shown} already exists; set overwrite to true to replace it`);
  try {
    await link(temporary, target);
    return;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EEXIST') throw exists();
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV'].includes(code ?? '')) throw error;
  }
  // A file system without hard links: check, then rename (a creator racing us in between wins less cleanly).
  if ((await lstatIfExists(target)) !== undefined) throw exists();
  await rename(temporary, target);
}

/** Gives the new file the replaced file's owner where the worker may (as root); silently not elsewhere. */
/**
 * For a worker running as root, gives a new file or directory the owner of the directory it was made
 * in, so that a workspace handed to an unprivileged user stays wholly theirs: `run_command` runs as
 * that owner (see `sandboxUser`) and can change what the file tools wrote. Anyone else's new entries
 * are theirs already.
 */
export async function takeParentsOwner(handle: FileHandle, parent: HeldDirectory): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const owner = await parent.handle.stat();
  if (owner.uid === 0 && owner.gid === 0) return;
  // Best effort, as for a replaced file: a file system without owners keeps the write.
  await handle.chown(owner.uid, owner.gid).catch(() => undefined);
}

async function keepOwner(handle: FileHandle, replacing: Stats): Promise<void> {
  const current = await handle.stat();
  if (current.uid === replacing.uid && current.gid === replacing.gid) return;
  await handle.chown(replacing.uid, replacing.gid).catch(() => undefined);
}
