import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { lstat, open, readlink, realpath, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { describeFileKind } from './file-kind.js';
import {
  atRealPath,
  descriptorPath,
  entryPath,
  errorCode,
  lstatIfExists,
  O_DIRECTORY,
  O_NOCTTY,
  O_NOFOLLOW,
  O_NONBLOCK,
  readAtMost,
  rethrowAt,
} from './held-directory.js';
import type { HeldDirectory } from './held-directory.js';
import type { Workspace } from './workspace.js';
import { FileTooLargeError, WorkspaceError } from './workspace-error.js';

/** Largest file {@link Workspace.openFile} opens when the caller sets no smaller limit. */
export const WORKSPACE_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** Options for opening and reading a file in the workspace. */
export interface OpenFileOptions {
  /** Larger files are refused with a {@link FileTooLargeError}. Default {@link WORKSPACE_MAX_FILE_BYTES}. */
  maxBytes?: number;
  /** Names the tool in the size refusal ("read_file opens files up to …"). */
  tool?: string;
  signal?: AbortSignal;
}

/** A regular file inside the workspace, open for reading. The caller closes `handle`. */
export interface OpenedFile {
  handle: FileHandle;
  stats: Stats;
}

/**
 * Opens the directory at `target` (a real path, or an entry of a held directory) without following
 * a final symbolic link, and checks by descriptor that it is inside. `realPath` names it in errors.
 */
export async function openHeldDirectory(
  workspace: Workspace,
  target: string,
  realPath: string,
  shown: string,
  notADirectory: () => WorkspaceError = () => changedWhileOpening(shown),
): Promise<HeldDirectory> {
  let handle: FileHandle;
  try {
    // O_DIRECTORY fails on anything else before it is opened, so no device behind the name is touched.
    handle = await open(target, constants.O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    if (errorCode(error) === 'ENOTDIR' || isFollowRefusal(error)) {
      if ((await lstatIfExists(target))?.isSymbolicLink() === true) throw changedWhileOpening(shown);
      throw notADirectory();
    }
    throw atRealPath(error, realPath);
  }
  try {
    await checkInside(workspace, handle, realPath, shown);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return { handle, path: realPath, base: workspace.descriptorPaths ? descriptorPath(handle) : realPath };
}

/**
 * Opens the regular file `name` of a held directory for reading. Refused by type before the open
 * (opening a device can itself do something: a tape rewinds), without following a link, and checked
 * to be the very file that was looked at.
 */
export async function openEntry(
  workspace: Workspace,
  directory: HeldDirectory,
  name: string,
  shown: string,
  options: OpenFileOptions,
): Promise<OpenedFile> {
  const entry = entryPath(directory, name);
  const realPath = path.join(directory.path, name);
  const before = await lstat(entry).catch(rethrowAt(realPath));
  refuseUnlessFile(before, shown);
  let handle: FileHandle;
  try {
    // O_NONBLOCK: a FIFO swapped in after the lstat still cannot block the open; O_NOCTTY: nor a terminal attach.
    handle = await open(entry, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  } catch (error) {
    if (isFollowRefusal(error)) throw changedWhileOpening(shown);
    throw atRealPath(error, realPath);
  }
  try {
    const stats = await handle.stat();
    if (stats.dev !== before.dev || stats.ino !== before.ino) throw changedWhileOpening(shown);
    refuseUnlessFile(stats, shown);
    // Through a descriptor path, a name without "/" opened without following a link is an entry of the
    // checked directory: nothing more to check. Through a plain path, the directory may have moved.
    if (!workspace.descriptorPaths) await checkInside(workspace, handle, realPath, shown);
    const maxBytes = options.maxBytes ?? WORKSPACE_MAX_FILE_BYTES;
    if (stats.size > maxBytes) throw tooLarge(shown, stats.size, maxBytes, options.tool);
    return { handle, stats };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Reads a file opened by {@link openEntry} whole, never past `maxBytes`, and closes it. */
export async function readOpened(
  opened: OpenedFile,
  shown: string,
  options: OpenFileOptions,
): Promise<{ bytes: Buffer; stats: Stats }> {
  const maxBytes = options.maxBytes ?? WORKSPACE_MAX_FILE_BYTES;
  try {
    const bytes = await readAtMost(opened.handle, maxBytes, opened.stats.size, options.signal);
    if (bytes === undefined) throw tooLarge(shown, undefined, maxBytes, options.tool);
    return { bytes, stats: opened.stats };
  } finally {
    await opened.handle.close();
  }
}

/** Refuses an open file or directory that is not (or no longer) inside the workspace. */
export async function checkInside(
  workspace: Workspace,
  handle: FileHandle,
  realPath: string,
  shown: string,
): Promise<void> {
  if (workspace.descriptorPaths) {
    // The kernel's name for what is open, whatever happened to the path since.
    if (!workspace.includes(await readlink(descriptorPath(handle)))) throw changedWhileOpening(shown);
    return;
  }
  // Without /proc: the path must still resolve inside, to the very file that is open.
  try {
    const named = await realpath(realPath);
    const [expected, opened] = await Promise.all([stat(named), handle.stat()]);
    if (workspace.includes(named) && expected.dev === opened.dev && expected.ino === opened.ino) return;
  } catch (error) {
    if (errorCode(error) === undefined) throw error;
  }
  throw changedWhileOpening(shown);
}

function refuseUnlessFile(stats: Stats, shown: string): void {
  if (stats.isFile()) return;
  if (stats.isDirectory()) throw new WorkspaceError(`${shown} is a directory; use list_directory`);
  if (stats.isSymbolicLink()) throw changedWhileOpening(shown);
  throw new WorkspaceError(
    `${shown} is not a regular file but ${describeFileKind(stats)}; only regular files can be opened`,
  );
}

/** The refusal for a path that changed between its check and its use. */
export function changedWhileOpening(shown: string): WorkspaceError {
  return new WorkspaceError(
    `Path refused: ${JSON.stringify(shown)} changed while it was being opened (a part of it was replaced ` +
      'by a symbolic link or moved, maybe out of the workspace); nothing was read or written',
  );
}

function tooLarge(
  shown: string,
  size: number | undefined,
  maxBytes: number,
  tool: string | undefined,
): FileTooLargeError {
  const limit =
    tool === undefined
      ? `files over ${maxBytes} bytes are not opened`
      : `${tool} opens files up to ${maxBytes} bytes`;
  // Without a size the file grew past the limit while it was being read.
  const measured = size === undefined ? `over ${maxBytes} bytes` : `${size} bytes`;
  return new FileTooLargeError(`${shown} is ${measured}; ${limit}`, size ?? maxBytes + 1);
}

/** O_NOFOLLOW met a symbolic link: ELOOP on Linux and macOS, EMLINK on FreeBSD. */
function isFollowRefusal(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ELOOP' || code === 'EMLINK';
}
