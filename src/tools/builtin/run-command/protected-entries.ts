import { randomBytes } from 'node:crypto';
import { readdir, readlink, realpath, rename } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { descriptorPath, entryPath, lstatIfExists } from '../../held-directory.js';
import type { HeldDirectory } from '../../held-directory.js';
import type { Workspace } from '../../workspace.js';
import { ToolError } from '../../tool-error.js';
import { WorkspaceError } from '../../workspace-error.js';
import { openEntry, openHeldDirectory } from '../../workspace-open.js';
import { GIT_FILE_LIMIT, gitDirectoryNamed } from '../../git-file.js';

/** A protected workspace entry, held open, that the sandbox binds read-only over the workspace. */
export interface ProtectedEntry {
  handle: FileHandle;
  /** Its real absolute path, read back from the descriptor: where the sandbox binds it. */
  path: string;
  /** The pattern that protects it, for messages. */
  pattern: string;
}

/**
 * Opens every protected entry of the workspace root, directory or file (`.git`, `.keel`), and the
 * directory a root `.git` link or `gitdir:` file points to inside the workspace, each without
 * following a final link and checked by descriptor to be where it is bound. Binding the descriptor,
 * never the path, means a name swapped for a link meanwhile cannot show a host directory inside the
 * sandbox. A link itself is not opened (only what a root `.git` link leads to); nor are entries
 * deeper than the root (a submodule's `.git`). Refuses, naming the operator's setting, when there
 * are more than `limit`. The caller closes the handles.
 */
export async function openProtectedEntries(workspace: Workspace, limit: number): Promise<ProtectedEntry[]> {
  const opened: ProtectedEntry[] = [];
  const root = await openHeldDirectory(workspace, workspace.root, workspace.root, '.');
  try {
    const names = (await readdir(root.base, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory() || entry.isFile())
      .map((entry) => entry.name)
      .filter((name) => workspace.protection.protecting(name) !== undefined)
      .sort();
    // Counted before anything is opened: a pattern matching every name must not open them all.
    if (names.length > limit) throw tooMany(names, limit);
    let dotGitFile: FileHandle | undefined;
    for (const name of names) {
      const entry = await openRootEntry(workspace, root, name);
      if (entry === undefined) continue;
      opened.push({
        handle: entry.handle,
        path: entry.path,
        pattern: workspace.protection.protecting(name)!,
      });
      if (name === '.git' && entry.file) dotGitFile = entry.handle;
    }
    if (workspace.protection.protecting('.git') !== undefined) {
      const linked = await openLinkedGitDirectory(workspace, root, dotGitFile);
      if (linked !== undefined && !opened.some((entry) => entry.path === linked.path))
        opened.push({ ...linked, pattern: '.git' });
      else await linked?.handle.close();
    }
    if (opened.length > limit) throw tooMany([...names, workspace.relative(opened.at(-1)!.path)], limit);
    return opened;
  } catch (error) {
    await Promise.all(opened.map((entry) => entry.handle.close()));
    throw error;
  } finally {
    await root.handle.close();
  }
}

function tooMany(names: readonly string[], limit: number): ToolError {
  return new ToolError(
    `run_command refused to run: the workspace holds ${names.length} protected entries ` +
      `(${names.map((name) => JSON.stringify(name)).join(', ')}) and its sandbox can keep at most ${limit} ` +
      'read-only; the operator can protect fewer top-level entries with KEEL_WORKSPACE_PROTECT',
  );
}

/** Entry `name` of the held root, opened as the directory or regular file it is; else undefined. */
async function openRootEntry(
  workspace: Workspace,
  root: HeldDirectory,
  name: string,
): Promise<{ handle: FileHandle; path: string; file: boolean } | undefined> {
  const shown = name;
  const stats = await lstatIfExists(entryPath(root, name));
  let handle: FileHandle;
  if (stats?.isDirectory() === true) {
    handle = (await openHeldDirectory(workspace, entryPath(root, name), path.join(root.path, name), shown))
      .handle;
  } else if (stats?.isFile() === true) {
    handle = (await openEntry(workspace, root, name, shown, { maxBytes: Number.MAX_SAFE_INTEGER })).handle;
  } else {
    // Gone, a link (its target, if it is the linked git directory, is opened below), or a device,
    // FIFO or socket, which holds nothing git or Keel reads back.
    return undefined;
  }
  return { ...(await held(workspace, handle, path.join(workspace.root, name), shown)), file: stats.isFile() };
}

/**
 * The directory a root `.git` link or `gitdir:` file names, if it lies inside the workspace. The
 * file is read from `dotGitFile`, its descriptor held open; a `.git` that changes kind meanwhile is
 * refused.
 */
async function openLinkedGitDirectory(
  workspace: Workspace,
  root: HeldDirectory,
  dotGitFile: FileHandle | undefined,
): Promise<{ handle: FileHandle; path: string } | undefined> {
  let target: string | undefined;
  if (dotGitFile !== undefined) {
    const stats = await dotGitFile.stat();
    const named =
      stats.size < GIT_FILE_LIMIT ? gitDirectoryNamed(await dotGitFile.readFile('utf8')) : undefined;
    if (named !== undefined) target = path.resolve(workspace.root, named);
  } else if ((await lstatIfExists(entryPath(root, '.git')))?.isSymbolicLink() === true) {
    const link = await readlink(entryPath(root, '.git')).catch(() => {
      throw changed('.git');
    });
    target = path.resolve(workspace.root, link);
  }
  if (target === undefined) return undefined;
  // Only where the target lies now; the descriptor check below decides whether it is bound.
  const real = await realpath(target).catch(() => undefined);
  if (real === undefined || !workspace.includes(real) || real === workspace.root) return undefined;
  if ((await lstatIfExists(real))?.isDirectory() !== true) return undefined;
  const handle = (await openHeldDirectory(workspace, real, real, '.git')).handle;
  return held(workspace, handle, undefined, '.git');
}

function changed(shown: string): WorkspaceError {
  return new WorkspaceError(
    `protected path ${JSON.stringify(shown)} changed while the command was starting; nothing ran`,
  );
}

/**
 * The handle with the path the kernel names for it, which must be `expected` when given and inside
 * the workspace (not its root) in any case; closes it and refuses otherwise.
 */
async function held(
  workspace: Workspace,
  handle: FileHandle,
  expected: string | undefined,
  shown: string,
): Promise<{ handle: FileHandle; path: string }> {
  try {
    const real = await readlink(descriptorPath(handle));
    if ((expected !== undefined && real !== expected) || !workspace.includes(real) || real === workspace.root)
      throw changed(shown);
    return { handle, path: real };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The names at the workspace root, of any kind (links too), that a protection pattern matches. */
export async function protectedRootNames(workspace: Workspace): Promise<Set<string>> {
  const names = await readdir(workspace.root);
  return new Set(names.filter((name) => workspace.protection.protecting(name) !== undefined));
}

/**
 * Moves aside each protected name at the workspace root that was not there before the command
 * (`before`) and is now, so that git or Keel never use a `.git` or `.keel` a command planted: it is
 * renamed to `keel-set-aside-<random>-<name>` at the root. Renamed, never removed: a rename moves the
 * entry itself, so a concurrent command that swaps a directory inside it for a link to the host
 * cannot steer anything outside the workspace, and nothing is lost should someone else have made it
 * meanwhile. Called once every process of the command is gone. Returns a note per entry.
 */
export async function setAsideCreatedProtected(workspace: Workspace, before: Set<string>): Promise<string[]> {
  const notes: string[] = [];
  for (const name of await protectedRootNames(workspace)) {
    if (before.has(name)) continue;
    const aside = `keel-set-aside-${randomBytes(4).toString('hex')}-${name}`;
    try {
      await rename(path.join(workspace.root, name), path.join(workspace.root, aside));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    notes.push(
      `note: ${JSON.stringify(name)} appeared at the workspace root while it ran, which is protected by the ` +
        `worker (pattern ${JSON.stringify(workspace.protection.protecting(name))}); it was moved to ${JSON.stringify(aside)}`,
    );
  }
  return notes;
}
