import { createHash, randomUUID } from 'node:crypto';
import {
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  stat,
  utimes,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { errorCode } from './held-directory.js';
import { GIT_CLONE_TIMEOUT_MS, populateWorkspace } from './run-workspace-seed.js';
import type { WorkspaceSeed } from './run-workspace-seed.js';
import { Workspace } from './workspace.js';

/** Options for {@link RunWorkspaces.open}. */
export interface RunWorkspacesOptions {
  /** The directory holding one workspace per run (`KEEL_WORKSPACES_DIR`); created when missing. */
  root: string;
  /** What a new workspace starts as; empty when absent. */
  seed?: WorkspaceSeed;
  /** What the tools may read but never write, in every run's workspace (`KEEL_WORKSPACE_PROTECT`). */
  protect?: readonly string[];
  /** How long a workspace is kept after its run last used it once the run has ended. */
  retentionSeconds: number;
}

/** Whether the run with this workflow id may still use its workspace; true when that cannot be told. */
export type RunIsOpen = (workflowId: string) => Promise<boolean>;

/** Age past which a half-made or half-removed directory is a crash's leftover, not work in progress. */
const LEFTOVER_AGE_MS = 2 * GIT_CLONE_TIMEOUT_MS;

/** Keel's own entries under the root; run directories never start with a dot, so they cannot clash. */
const OWN = '.keel';

/**
 * One workspace per run, `<root>/<workflow id, made safe>`, made on the run's first tool call and
 * kept for every later call of the same workflow id (a session's messages, continue-as-new). Each is
 * an ordinary {@link Workspace}, so a run's tools cannot reach another run's directory. What Keel keeps
 * about them (which workflow a directory is for, when it was last used) lies beside them, out of reach.
 */
export class RunWorkspaces {
  readonly #opened = new Map<string, Promise<Workspace>>();

  private constructor(
    /** The real path of the root. */
    readonly root: string,
    readonly options: RunWorkspacesOptions,
  ) {}

  /** Creates the root (and Keel's entries in it) when missing, and checks it can be used. */
  static async open(options: RunWorkspacesOptions): Promise<RunWorkspaces> {
    await mkdir(path.resolve(options.root), { recursive: true });
    const root = await realpath(path.resolve(options.root));
    if (!(await stat(root)).isDirectory()) throw new Error(`${root} is not a directory`);
    for (const entry of ['runs', 'creating', 'removing', 'template']) {
      await mkdir(path.join(root, OWN, entry), { recursive: true });
    }
    return new RunWorkspaces(root, options);
  }

  /** The directory name of a run's workspace: readable, never `.`-led, bounded, one per workflow id. */
  static directoryName(workflowId: string): string {
    const readable = workflowId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 100);
    const digest = createHash('sha256').update(workflowId).digest('hex').slice(0, 16);
    return `${readable}-${digest}`;
  }

  /** Where the workspace of `workflowId` is, whether it exists yet or not. */
  directoryOf(workflowId: string): string {
    return path.join(this.root, RunWorkspaces.directoryName(workflowId));
  }

  /**
   * An empty workspace with the runs' protection, to describe the tools at start (their names and
   * schemas do not depend on the directory). No run's calls are ever served from it.
   */
  template(): Promise<Workspace> {
    return Workspace.open(path.join(this.root, OWN, 'template'), this.#workspaceOptions());
  }

  /** The run's workspace, made now from the seed if it has none; marks it used. */
  async forRun(workflowId: string): Promise<Workspace> {
    const directory = this.directoryOf(workflowId);
    let workspace = await this.#opening(workflowId, directory);
    // Removed meanwhile (by a sweep of another worker sharing the root): made again.
    if (!(await exists(directory))) {
      this.#opened.delete(workflowId);
      workspace = await this.#opening(workflowId, directory);
    }
    await this.#touch(workflowId);
    return workspace;
  }

  /** The workspace being made or opened for the run: one at a time, however many calls ask. */
  #opening(workflowId: string, directory: string): Promise<Workspace> {
    let opened = this.#opened.get(workflowId);
    if (opened === undefined) {
      opened = this.#make(workflowId, directory);
      this.#opened.set(workflowId, opened);
      // A failure (a clone that failed) is not kept: the next call tries again.
      opened.catch(() => this.#opened.delete(workflowId));
    }
    return opened;
  }

  /**
   * Removes the workspaces whose runs have ended and that were not used for the retention period.
   * A run `isOpen` says is open keeps its workspace however old. Returns the workflow ids removed.
   */
  async sweep(isOpen: RunIsOpen): Promise<string[]> {
    const removed: string[] = [];
    const records = path.join(this.root, OWN, 'runs');
    const cutoff = Date.now() - this.options.retentionSeconds * 1000;
    for (const entry of await readdir(records)) {
      if (!entry.endsWith('.json')) continue;
      const name = entry.slice(0, -'.json'.length);
      const record = path.join(records, entry);
      const used = await stat(record).catch(() => undefined);
      if (used === undefined || used.mtimeMs > cutoff) continue;
      const workflowId = await readWorkflowId(record);
      if (workflowId === undefined || RunWorkspaces.directoryName(workflowId) !== name) continue;
      if (await isOpen(workflowId)) continue;
      // Renamed away first: a call arriving now finds no workspace and makes a new one, never half of one.
      const doomed = path.join(this.root, OWN, 'removing', `${name}-${randomUUID()}`);
      try {
        await rename(path.join(this.root, name), doomed);
      } catch (error) {
        if (errorCode(error) !== 'ENOENT') throw error;
      }
      this.#opened.delete(workflowId);
      await rm(record, { force: true });
      await rm(doomed, { recursive: true, force: true });
      removed.push(workflowId);
    }
    // What a crash left half made or half removed.
    for (const stale of ['creating', 'removing']) {
      for (const entry of await readdir(path.join(this.root, OWN, stale))) {
        const leftover = path.join(this.root, OWN, stale, entry);
        const made = await stat(leftover).catch(() => undefined);
        if (made !== undefined && made.mtimeMs < Date.now() - LEFTOVER_AGE_MS) {
          await rm(leftover, { recursive: true, force: true });
        }
      }
    }
    return removed;
  }

  async #make(workflowId: string, directory: string): Promise<Workspace> {
    if (!(await exists(directory))) {
      const name = path.basename(directory);
      // Made beside the root's runs and renamed into place: a crash mid-clone leaves no half workspace.
      const staging = await mkdtemp(path.join(this.root, OWN, 'creating', `${name}-`));
      try {
        await populateWorkspace(this.options.seed ?? { kind: 'empty' }, staging);
        // The record comes first, so a sweep always knows whose a workspace is.
        await this.#touch(workflowId);
        await rename(staging, directory).catch((error: unknown) => {
          // Another worker sharing the root made it first: theirs is used.
          if (!['EEXIST', 'ENOTEMPTY'].includes(errorCode(error) ?? '')) throw error;
        });
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
    }
    return Workspace.open(directory, this.#workspaceOptions());
  }

  /** Writes the run's record, or marks it used now. */
  async #touch(workflowId: string): Promise<void> {
    const record = path.join(this.root, OWN, 'runs', `${RunWorkspaces.directoryName(workflowId)}.json`);
    const now = new Date();
    try {
      await utimes(record, now, now);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
      await writeFile(record, JSON.stringify({ workflowId }) + '\n');
    }
  }

  #workspaceOptions(): { protect?: readonly string[] } {
    return this.options.protect ? { protect: this.options.protect } : {};
  }
}

async function exists(entry: string): Promise<boolean> {
  return (await stat(entry).catch(() => undefined)) !== undefined;
}

async function readWorkflowId(record: string): Promise<string | undefined> {
  try {
    const parsed = JSON.parse(await readFile(record, 'utf8')) as { workflowId?: unknown };
    return typeof parsed.workflowId === 'string' ? parsed.workflowId : undefined;
  } catch {
    return undefined;
  }
}
