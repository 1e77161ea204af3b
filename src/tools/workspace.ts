import type { Dirent, Stats } from 'node:fs';
import { readFile as readText, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { errorCode, lstatIfExists, supportsDescriptorPaths } from './held-directory.js';
import type { HeldDirectory } from './held-directory.js';
import { WorkspaceError } from './workspace-error.js';
import type { WorkspaceDirectory } from './workspace-directory.js';
import {
  openDirectory,
  openFile,
  readDirectory,
  readFile,
  refuseIfProtectedNow,
  writeFile,
} from './workspace-files.js';
import type { WriteFileOptions } from './workspace-files.js';
import type { OpenedFile, OpenFileOptions } from './workspace-open.js';
import { DEFAULT_WORKSPACE_PROTECT, WorkspaceProtection } from './workspace-protection.js';
import { GIT_FILE_LIMIT, gitDirectoryNamed } from './git-file.js';

export type { WorkspaceDirectory } from './workspace-directory.js';
export { FileTooLargeError, WorkspaceError } from './workspace-error.js';
export type { WriteFileOptions } from './workspace-files.js';
export { WORKSPACE_MAX_FILE_BYTES } from './workspace-open.js';
export type { OpenedFile, OpenFileOptions } from './workspace-open.js';
export {
  DEFAULT_WORKSPACE_PROTECT,
  protectPatternProblem,
  WorkspaceProtection,
} from './workspace-protection.js';
import { isInside } from './path-inside.js';

/** Options for {@link Workspace.open}. */
export interface WorkspaceOptions {
  /**
   * Reach checked directories through `/proc/self/fd` (Linux). Detected when absent; false forces the
   * portable fallback, which re-checks paths after opening and so leaves a narrow race (for tests).
   */
  descriptorPaths?: boolean;
  /**
   * Paths the tools may read but never create, change or replace (`KEEL_WORKSPACE_PROTECT`, see
   * {@link WorkspaceProtection}); {@link DEFAULT_WORKSPACE_PROTECT} when absent, `[]` for none.
   */
  protect?: readonly string[];
}

/**
 * The directory a run may touch. Every path a tool uses goes through {@link Workspace.resolve}; file
 * contents go through {@link Workspace.openFile}, {@link Workspace.readFile},
 * {@link Workspace.readDirectory} and {@link Workspace.writeFile}, which check again after opening,
 * so a path swapped for a symbolic link between the check and the use is refused too. Every write
 * goes through {@link Workspace.resolveForWriting} and {@link Workspace.refuseIfProtected}, so
 * protected paths (`.git`, Keel's own state) are refused whichever tool asks.
 */
export class Workspace {
  private constructor(
    /** Absolute, symlink-free path of the workspace root. */
    readonly root: string,
    /** Whether held directories are reached through `/proc/self/fd` (see {@link WorkspaceOptions}). */
    readonly descriptorPaths: boolean,
    /** What no tool may write (see {@link WorkspaceOptions.protect}). */
    readonly protection: WorkspaceProtection,
  ) {}

  /** Opens a workspace at `root`, which must be an existing directory. */
  static async open(root: string, options: WorkspaceOptions = {}): Promise<Workspace> {
    const real = await realpath(path.resolve(root));
    if (!(await stat(real)).isDirectory()) throw new Error(`Workspace root ${root} is not a directory`);
    let protection = WorkspaceProtection.of(options.protect ?? DEFAULT_WORKSPACE_PROTECT);
    const gitDirectory =
      protection.protecting('.git') === undefined ? undefined : await linkedGitDirectory(real);
    if (gitDirectory !== undefined) protection = protection.including(gitDirectory, '.git');
    return new Workspace(real, options.descriptorPaths ?? (await supportsDescriptorPaths(real)), protection);
  }

  /**
   * The absolute path for a workspace-relative path, after refusing NUL bytes, absolute paths, `..`
   * escapes and symlinks that lead outside. With `mustExist` false, a missing path is allowed as long
   * as its nearest existing parent is inside (for files about to be created).
   */
  async resolve(relativePath: string, options: { mustExist?: boolean } = {}): Promise<string> {
    const mustExist = options.mustExist ?? true;
    const requested = relativePath === '' ? '.' : relativePath;
    if (requested.includes('\0')) throw new WorkspaceError('Path refused: it contains a NUL byte');
    if (path.isAbsolute(requested) || /^[a-zA-Z]:[\\/]/.test(requested) || requested.startsWith('\\\\')) {
      throw new WorkspaceError(
        `Path refused: ${JSON.stringify(requested)} is absolute; give a path relative to the workspace root`,
      );
    }
    const lexical = path.resolve(this.root, requested);
    if (!this.includes(lexical)) {
      throw new WorkspaceError(`Path refused: ${JSON.stringify(requested)} leads outside the workspace`);
    }
    let existing = lexical;
    for (;;) {
      try {
        const real = await realpath(existing);
        if (!this.includes(real)) {
          throw new WorkspaceError(
            `Path refused: ${JSON.stringify(requested)} goes through a symbolic link that leads outside the workspace`,
          );
        }
        return existing === lexical ? real : path.join(real, path.relative(existing, lexical));
      } catch (error) {
        if (errorCode(error) === 'ENOTDIR') {
          throw new WorkspaceError(`Not a directory: a parent of ${requested} is a file`);
        }
        if (errorCode(error) !== 'ENOENT') throw error;
        if (mustExist) throw new WorkspaceError(`No such file or directory: ${requested}`);
        // A dangling symlink: creating "through" it would write wherever it points, maybe outside.
        if ((await lstatIfExists(existing))?.isSymbolicLink() === true) {
          throw new WorkspaceError(
            `Path refused: ${JSON.stringify(requested)} goes through a symbolic link whose target does not exist`,
          );
        }
        existing = path.dirname(existing);
      }
    }
  }

  /**
   * Where a file may be written: {@link resolve} with `mustExist` false that also refuses the root, a
   * path ending in a directory part (`a/`, `a/.`), and any symbolic link on the way, even one that
   * stays inside: writes go to the real path, named as such. Refuses a protected path, checked both
   * as written (`a/../.git/config`) and as it really is (through a link to `.git`).
   */
  async resolveForWriting(relativePath: string): Promise<string> {
    const absolute = await this.resolve(relativePath, { mustExist: false });
    const last = relativePath.split('/').at(-1);
    if (absolute === this.root || last === '' || last === '.' || last === '..') {
      throw new WorkspaceError(`${JSON.stringify(relativePath)} names a directory; give the path of a file`);
    }
    const lexical = path.resolve(this.root, relativePath);
    this.refuseIfProtected(absolute, relativePath);
    this.refuseIfProtected(lexical, relativePath);
    if (absolute !== lexical) {
      throw new WorkspaceError(
        `Path refused: ${JSON.stringify(relativePath)} goes through a symbolic link and files are not written ` +
          `through links; the real path is ${JSON.stringify(this.relative(absolute))}, write there if you mean it`,
      );
    }
    return absolute;
  }

  /**
   * Opens a regular file for reading. Refuses directories, devices, FIFOs and sockets (by type, before
   * opening, so a device is never opened), files over `maxBytes`, and a path changed into a symbolic
   * link after it was resolved: the file is opened without following a final link, from a parent
   * directory checked after opening, and is checked again by its own descriptor.
   */
  openFile(relativePath: string, options: OpenFileOptions = {}): Promise<OpenedFile> {
    return openFile(this, relativePath, options);
  }

  /** The contents of a regular file, read with the refusals of {@link openFile}, never past `maxBytes`. */
  readFile(relativePath: string, options: OpenFileOptions = {}): Promise<{ bytes: Buffer; stats: Stats }> {
    return readFile(this, relativePath, options);
  }

  /** The entries of a directory, read through a descriptor checked to be inside the workspace. */
  readDirectory(relativePath: string): Promise<Dirent[]> {
    return readDirectory(this, relativePath);
  }

  /**
   * A directory held open, to list, read and descend into without resolving a path per entry (for
   * tools that walk trees). The caller closes it.
   */
  openDirectory(relativePath: string): Promise<WorkspaceDirectory> {
    return openDirectory(this, relativePath);
  }

  /**
   * Writes a whole file atomically (a temporary file beside it, then a rename) into a parent directory
   * held open and checked to be inside. Refuses what {@link resolveForWriting} refuses, directories,
   * devices, FIFOs and sockets. Returns whether the file was created rather than replaced.
   */
  writeFile(
    relativePath: string,
    data: Uint8Array,
    options: WriteFileOptions = {},
  ): Promise<{ created: boolean }> {
    return writeFile(this, relativePath, data, options);
  }

  /**
   * Throws the model's explanation when the absolute path `target` is protected (it or a directory
   * above it matches a pattern); `shown` is the path as the model gave it.
   */
  refuseIfProtected(target: string, shown: string): void {
    const relative = this.relative(target);
    const pattern = this.protection.protecting(relative);
    if (pattern === undefined) return;
    const real = relative.split(path.sep).join('/');
    const via =
      real === shown ? JSON.stringify(shown) : `${JSON.stringify(shown)} (that is ${JSON.stringify(real)})`;
    throw new WorkspaceError(
      `Path refused: ${via} is protected by the worker (pattern ${JSON.stringify(pattern)}): tools may read ` +
        'it but not create, change or replace anything there. Leave it alone and write elsewhere',
    );
  }

  /**
   * {@link refuseIfProtected} for entry `name` of a directory held open to write into, where that
   * directory lies now: a rename after its path was checked cannot carry a write into `.git`.
   */
  refuseIfProtectedIn(directory: HeldDirectory, name: string, shown: string): Promise<void> {
    return refuseIfProtectedNow(this, directory, name, shown);
  }

  /** The workspace-relative form of an absolute path inside the workspace (`.` for the root). */
  relative(absolutePath: string): string {
    return path.relative(this.root, absolutePath) || '.';
  }

  /** Whether an absolute, symlink-free path is the root or inside it. */
  includes(candidate: string): boolean {
    return isInside(this.root, candidate);
  }
}

/**
 * The workspace-relative git directory that the root's `.git` leads to when it is a symbolic link or
 * a `gitdir:` file (`git init --separate-git-dir`, worktrees) pointing inside the workspace: git
 * runs code from there just as from `.git`, so it is protected with it. Undefined otherwise.
 */
async function linkedGitDirectory(root: string): Promise<string | undefined> {
  const dotGit = path.join(root, '.git');
  const stats = await lstatIfExists(dotGit);
  let target: string | undefined;
  if (stats?.isSymbolicLink() === true) target = dotGit;
  if (stats?.isFile() === true && stats.size < GIT_FILE_LIMIT) {
    const named = gitDirectoryNamed(await readText(dotGit, 'utf8'));
    if (named !== undefined) target = path.resolve(root, named);
  }
  if (target === undefined) return undefined;
  const real = await realpath(target).catch(() => undefined);
  if (real === undefined || real === root || !isInside(root, real)) return undefined;
  return path.relative(root, real);
}
