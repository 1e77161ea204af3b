import type { Dirent, Stats } from 'node:fs';
import { mkdir, readlink } from 'node:fs/promises';
import { takeParentsOwner } from './write-atomically.js';
import path from 'node:path';
import { describeFileKind } from './file-kind.js';
import {
  atRealPath,
  descriptorPath,
  entryPath,
  errorCode,
  lstatIfExists,
  rethrowAt,
} from './held-directory.js';
import type { HeldDirectory } from './held-directory.js';
import type { Workspace } from './workspace.js';
import { WorkspaceDirectory } from './workspace-directory.js';
import { WorkspaceError } from './workspace-error.js';
import { changedWhileOpening, openEntry, openHeldDirectory, readOpened } from './workspace-open.js';
import type { OpenedFile, OpenFileOptions } from './workspace-open.js';
import { writeAtomically } from './write-atomically.js';

/** Options for {@link Workspace.writeFile}. */
export interface WriteFileOptions {
  /** Create missing parent directories. Default false. */
  createDirectories?: boolean;
  /** Replace an existing file. Default true. */
  overwrite?: boolean;
  /** Refuse unless the file is still the version these stats describe (for read-modify-write). */
  unchangedSince?: Stats;
  signal?: AbortSignal;
}

/** See {@link Workspace.openFile}. */
export async function openFile(
  workspace: Workspace,
  relativePath: string,
  options: OpenFileOptions,
): Promise<OpenedFile> {
  const shown = relativePath === '' ? '.' : relativePath;
  const absolute = await workspace.resolve(relativePath);
  if (absolute === workspace.root) throw new WorkspaceError(`${shown} is a directory; use list_directory`);
  const parent = path.dirname(absolute);
  const directory = await openHeldDirectory(workspace, parent, parent, shown);
  try {
    return await openEntry(workspace, directory, path.basename(absolute), shown, options);
  } finally {
    await directory.handle.close();
  }
}

/** See {@link Workspace.readFile}. */
export async function readFile(
  workspace: Workspace,
  relativePath: string,
  options: OpenFileOptions,
): Promise<{ bytes: Buffer; stats: Stats }> {
  return readOpened(await openFile(workspace, relativePath, options), relativePath, options);
}

/** See {@link Workspace.openDirectory}. */
export async function openDirectory(workspace: Workspace, relativePath: string): Promise<WorkspaceDirectory> {
  const shown = relativePath === '' ? '.' : relativePath;
  const absolute = await workspace.resolve(relativePath);
  const held = await openHeldDirectory(
    workspace,
    absolute,
    absolute,
    shown,
    () => new WorkspaceError(`${shown} is not a directory`),
  );
  return new WorkspaceDirectory(workspace, held, workspace.relative(absolute));
}

/** See {@link Workspace.readDirectory}. */
export async function readDirectory(workspace: Workspace, relativePath: string): Promise<Dirent[]> {
  const directory = await openDirectory(workspace, relativePath);
  try {
    return await directory.entries();
  } finally {
    await directory.close();
  }
}

/** See {@link Workspace.writeFile}. */
export async function writeFile(
  workspace: Workspace,
  relativePath: string,
  data: Uint8Array,
  options: WriteFileOptions,
): Promise<{ created: boolean }> {
  const shown = relativePath;
  const absolute = await workspace.resolveForWriting(relativePath);
  const parent = path.dirname(absolute);
  const directory = options.createDirectories
    ? await makeDirectories(workspace, parent, shown)
    : await openHeldDirectory(workspace, parent, parent, shown).catch((error: unknown) => {
        if (errorCode(error) !== 'ENOENT') throw error;
        throw new WorkspaceError(
          `No such directory: ${workspace.relative(parent)}; set createDirectories to true to create it`,
        );
      });
  try {
    const name = path.basename(absolute);
    await workspace.refuseIfProtectedIn(directory, name, shown);
    const existing = await lstatIfExists(entryPath(directory, name)).catch(rethrowAt(absolute));
    if (existing?.isSymbolicLink() === true) throw changedWhileOpening(shown);
    if (existing?.isDirectory() === true) {
      throw new WorkspaceError(`${shown} is a directory; give the path of a file`);
    }
    if (existing !== undefined && !existing.isFile()) {
      throw new WorkspaceError(
        `${shown} is ${describeFileKind(existing)}, not a regular file; it was not written`,
      );
    }
    if (existing !== undefined && options.overwrite === false) {
      throw new WorkspaceError(`${shown} already exists; set overwrite to true to replace it`);
    }
    const expected = options.unchangedSince;
    if (expected !== undefined && (existing === undefined || !sameVersion(existing, expected))) {
      throw new WorkspaceError(`${shown} changed while it was being edited; read it again`);
    }
    options.signal?.throwIfAborted();
    await writeAtomically(directory, name, data, {
      overwrite: options.overwrite ?? true,
      shown,
      ...(existing === undefined ? {} : { replacing: existing }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return { created: existing === undefined };
  } finally {
    await directory.handle.close();
  }
}

/**
 * Refuses entry `name` of a held directory if it is protected where the directory lies now: it may
 * have been renamed since its path was checked (`staging` into `.git/hooks`). With /proc the kernel
 * names the open directory; without, entries are reached by the checked path, which a rename empties.
 */
export async function refuseIfProtectedNow(
  workspace: Workspace,
  directory: HeldDirectory,
  name: string,
  shown: string,
): Promise<void> {
  let current = directory.path;
  if (workspace.descriptorPaths) {
    current = await readlink(descriptorPath(directory.handle));
    if (!workspace.includes(current)) throw changedWhileOpening(shown);
  }
  workspace.refuseIfProtected(path.join(current, name), shown);
}

/** Creates the missing directories down to `target` one at a time from the root, each held open. */
async function makeDirectories(workspace: Workspace, target: string, shown: string): Promise<HeldDirectory> {
  let directory = await openHeldDirectory(workspace, workspace.root, workspace.root, shown);
  try {
    for (const name of path
      .relative(workspace.root, target)
      .split(path.sep)
      .filter((part) => part !== '')) {
      const realPath = path.join(directory.path, name);
      const made = await mkdir(entryPath(directory, name)).then(
        () => true,
        (error: unknown) => {
          if (errorCode(error) !== 'EEXIST') throw atRealPath(error, realPath);
          return false;
        },
      );
      const next = await openHeldDirectory(
        workspace,
        entryPath(directory, name),
        realPath,
        shown,
        () => new WorkspaceError(`Not a directory: a parent of ${shown} is a file`),
      );
      if (made) await takeParentsOwner(next.handle, directory);
      const previous = directory;
      directory = next;
      await previous.handle.close();
    }
    return directory;
  } catch (error) {
    await directory.handle.close();
    throw error;
  }
}

function sameVersion(current: Stats, expected: Stats): boolean {
  return (
    current.dev === expected.dev &&
    current.ino === expected.ino &&
    current.size === expected.size &&
    current.mtimeMs === expected.mtimeMs
  );
}
