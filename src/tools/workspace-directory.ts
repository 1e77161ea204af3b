import type { Dirent, Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { rethrowAt } from './held-directory.js';
import type { HeldDirectory } from './held-directory.js';
import type { Workspace } from './workspace.js';
import { WorkspaceError } from './workspace-error.js';
import { checkInside, openEntry, openHeldDirectory, readOpened } from './workspace-open.js';
import type { OpenFileOptions } from './workspace-open.js';

/**
 * A directory inside the workspace, held open: its entries are listed, read and descended into
 * through the descriptor, checked once, instead of resolving a path per file. For tools that walk
 * trees. Close it when done.
 */
export class WorkspaceDirectory {
  constructor(
    private readonly workspace: Workspace,
    private readonly held: HeldDirectory,
    /** Its workspace-relative path, "." for the root. */
    readonly relativePath: string,
  ) {}

  /** Its entries, in no particular order. */
  async entries(): Promise<Dirent[]> {
    const entries = await readdir(this.held.base, { withFileTypes: true }).catch(rethrowAt(this.held.path));
    // Read by path, the listing may be of whatever the path leads to now: check it still leads here.
    if (!this.workspace.descriptorPaths) {
      await checkInside(this.workspace, this.held.handle, this.held.path, this.relativePath);
    }
    return entries;
  }

  /** The subdirectory `name`, held open too; refused if it is a link or not a directory. */
  async openDirectory(name: string): Promise<WorkspaceDirectory> {
    const shown = this.child(name);
    const held = await openHeldDirectory(
      this.workspace,
      path.join(this.held.base, name),
      path.join(this.held.path, name),
      shown,
      () => new WorkspaceError(`${shown} is not a directory`),
    );
    return new WorkspaceDirectory(this.workspace, held, shown);
  }

  /** The contents of its regular file `name`, with the refusals of {@link Workspace.readFile}. */
  async readFile(name: string, options: OpenFileOptions = {}): Promise<{ bytes: Buffer; stats: Stats }> {
    const shown = this.child(name);
    return readOpened(await openEntry(this.workspace, this.held, name, shown, options), shown, options);
  }

  close(): Promise<void> {
    return this.held.handle.close();
  }

  /** The workspace-relative path of entry `name`, after refusing anything but a plain name. */
  private child(name: string): string {
    if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
      throw new WorkspaceError(`Not an entry name: ${JSON.stringify(name)}`);
    }
    return this.relativePath === '.' ? name : `${this.relativePath}/${name}`;
  }
}
