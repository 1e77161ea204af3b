import path from 'node:path';
import { ToolDefinitionError } from './define-tool.js';
import { errorCode } from './held-directory.js';
import { Workspace, WorkspaceProtection } from './workspace.js';
import type { WorkspaceOptions } from './workspace.js';

/** Where a workspace lies, to be opened on first use: `root` must be an existing directory. */
export interface WorkspaceLocation extends WorkspaceOptions {
  /** The directory the tools may touch; relative to the worker's working directory if not absolute. */
  root: string;
}

/**
 * What a tool bound to a workspace is given: an opened {@link Workspace}, a {@link WorkspaceLocation}
 * to open on first use, or the opener of another set of tools (`fileTools(…).workspace`) to share it.
 */
export type WorkspaceSource = Workspace | WorkspaceLocation | (() => Promise<Workspace>);

/**
 * The workspace of `source`, opened once on first call and kept; an open that failed (the root is
 * missing for now) is tried again by the next call. A malformed location throws at once.
 */
export function workspaceOpener(source: WorkspaceSource): () => Promise<Workspace> {
  if (source instanceof Workspace) return () => Promise.resolve(source);
  if (typeof source === 'function') return source;
  const location = checkLocation(source);
  let opened: Promise<Workspace> | undefined;
  return () => {
    if (opened === undefined) {
      const { root, ...options } = location;
      opened = Workspace.open(root, options);
      opened.catch(() => (opened = undefined));
    }
    return opened;
  };
}

/**
 * Runs `work` on the workspace. A Node file error from it names its path relative to the workspace
 * root, so the executor can show the model where it happened; a path outside keeps its absolute
 * form, which the executor never shows.
 */
export async function inWorkspace<T>(
  open: () => Promise<Workspace>,
  work: (workspace: Workspace) => Promise<T>,
): Promise<T> {
  const workspace = await open();
  try {
    return await work(workspace);
  } catch (error) {
    const failure = error as NodeJS.ErrnoException;
    if (errorCode(error) !== undefined && typeof failure.path === 'string' && path.isAbsolute(failure.path)) {
      if (workspace.includes(failure.path)) failure.path = workspace.relative(failure.path);
    }
    throw error;
  }
}

const LOCATION_KEYS = new Set(['root', 'protect', 'descriptorPaths']);

function checkLocation(location: WorkspaceLocation): WorkspaceLocation {
  if (typeof location !== 'object' || location === null || typeof location.root !== 'string') {
    throw new ToolDefinitionError(
      'A workspace needs a root: give { root: "<directory>" } or an opened Workspace',
    );
  }
  // A misspelt option (`protected`, `protects`) must not leave the workspace silently unprotected.
  const unknown = Object.keys(location).filter((key) => !LOCATION_KEYS.has(key));
  if (unknown.length > 0) {
    throw new ToolDefinitionError(
      `Workspace ${location.root}: unknown option(s) ${unknown.join(', ')}; the options are root, protect and descriptorPaths`,
    );
  }
  if (location.root.trim() === '' || location.root.includes('\0')) {
    throw new ToolDefinitionError(`Workspace root ${JSON.stringify(location.root)} is not a usable path`);
  }
  if (location.protect !== undefined) {
    try {
      WorkspaceProtection.of(location.protect);
    } catch (error) {
      throw new ToolDefinitionError(`Workspace ${location.root}: ${(error as Error).message}`);
    }
  }
  return { ...location, ...(location.protect ? { protect: [...location.protect] } : {}) };
}
