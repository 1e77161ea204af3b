import { lstat, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from './tool-error.js';

/** A path was refused because it would leave the workspace or is malformed. */
export class WorkspaceError extends ToolError {
  override name = 'WorkspaceError';
}

/** The directory a run may touch. Every path a tool uses goes through {@link Workspace.resolve}. */
export class Workspace {
  private constructor(
    /** Absolute, symlink-free path of the workspace root. */
    readonly root: string,
  ) {}

  /** Opens a workspace at `root`, which must be an existing directory. */
  static async open(root: string): Promise<Workspace> {
    const real = await realpath(path.resolve(root));
    if (!(await stat(real)).isDirectory()) throw new Error(`Workspace root ${root} is not a directory`);
    return new Workspace(real);
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
    if (!this.contains(lexical)) {
      throw new WorkspaceError(`Path refused: ${JSON.stringify(requested)} leads outside the workspace`);
    }
    let existing = lexical;
    for (;;) {
      try {
        const real = await realpath(existing);
        if (!this.contains(real)) {
          throw new WorkspaceError(
            `Path refused: ${JSON.stringify(requested)} goes through a symbolic link that leads outside the workspace`,
          );
        }
        return existing === lexical ? real : path.join(real, path.relative(existing, lexical));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') {
          throw new WorkspaceError(`Not a directory: a parent of ${requested} is a file`);
        }
        if (!isNotFound(error)) throw error;
        if (mustExist) throw new WorkspaceError(`No such file or directory: ${requested}`);
        // A dangling symlink: creating "through" it would write wherever it points, maybe outside.
        if (await isSymbolicLink(existing)) {
          throw new WorkspaceError(
            `Path refused: ${JSON.stringify(requested)} goes through a symbolic link whose target does not exist`,
          );
        }
        existing = path.dirname(existing);
      }
    }
  }

  /** The workspace-relative form of an absolute path inside the workspace (`.` for the root). */
  relative(absolutePath: string): string {
    return path.relative(this.root, absolutePath) || '.';
  }

  private contains(candidate: string): boolean {
    return candidate === this.root || candidate.startsWith(this.root + path.sep);
  }
}

async function isSymbolicLink(candidate: string): Promise<boolean> {
  try {
    return (await lstat(candidate)).isSymbolicLink();
  } catch {
    return false;
  }
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
