import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { lstat, open, readlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';

// `?? 0` keeps the module loadable where a flag does not exist (Windows); the workspace is only
// guaranteed safe where they do (Linux, macOS).
/** Fails on a symbolic link in the last component instead of following it. */
export const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** Fails unless the path is a directory, before any device behind it is opened. */
export const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
/** A FIFO opens at once instead of waiting for a writer. */
export const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
/** A terminal never becomes the worker's controlling terminal. */
export const O_NOCTTY = constants.O_NOCTTY ?? 0;

/**
 * A directory held open. Its entries are reached through the descriptor (`/proc/self/fd/<fd>/name`),
 * so replacing the directory or any of its parents with a symbolic link after it was checked cannot
 * redirect them.
 */
export interface HeldDirectory {
  readonly handle: FileHandle;
  /** The real path it was opened at, checked to be inside the workspace; for messages. */
  readonly path: string;
  /** The prefix its entries are reached by: the descriptor path, or `path` where /proc is unavailable. */
  readonly base: string;
}

/** The path naming what an open descriptor refers to, on Linux. */
export function descriptorPath(handle: FileHandle): string {
  return `/proc/self/fd/${handle.fd}`;
}

/** Whether `/proc/self/fd` names open descriptors here: tried once, on the workspace root itself. */
export async function supportsDescriptorPaths(directory: string): Promise<boolean> {
  if (process.platform !== 'linux') return false;
  try {
    const handle = await open(directory, constants.O_RDONLY | O_DIRECTORY);
    try {
      return (await readlink(descriptorPath(handle))) === directory;
    } finally {
      await handle.close();
    }
  } catch {
    return false;
  }
}

/**
 * Reads from the current position to the end, but never more than `limit` bytes: undefined when
 * there is more (a file can grow after its size was checked). `expectedSize` sizes the first read.
 */
export async function readAtMost(
  handle: FileHandle,
  limit: number,
  expectedSize: number,
  signal?: AbortSignal,
): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    signal?.throwIfAborted();
    const wanted = Math.min(limit + 1 - total, Math.max(expectedSize + 1 - total, 64 * 1024));
    const buffer = Buffer.allocUnsafe(wanted);
    const { bytesRead } = await handle.read(buffer, 0, wanted, null);
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
    if (total > limit) return undefined;
    // A short read of a regular file at its expected size is its end: spare the read that returns 0.
    if (bytesRead < wanted && total >= expectedSize) return Buffer.concat(chunks, total);
  }
}

/** The entry's lstat, or undefined when there is none. */
export async function lstatIfExists(entry: string): Promise<Stats | undefined> {
  try {
    return await lstat(entry);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * The error, naming `realPath` instead of the descriptor path it came from if it is a system error,
 * so the executor can tell the model which file failed.
 */
export function atRealPath(error: unknown, realPath: string): unknown {
  if (errorCode(error) !== undefined && typeof (error as NodeJS.ErrnoException).path === 'string') {
    (error as NodeJS.ErrnoException).path = realPath;
  }
  return error;
}

/** A `catch` handler that rethrows the error {@link atRealPath}. */
export function rethrowAt(realPath: string): (error: unknown) => never {
  return (error) => {
    throw atRealPath(error, realPath);
  };
}

/** The `code` of a Node system error, if it is one. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The entry `name` of a held directory, as a path the kernel resolves through the descriptor. */
export function entryPath(directory: HeldDirectory, name: string): string {
  return path.join(directory.base, name);
}
