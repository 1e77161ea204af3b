import { execFile } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../config-error.js';
import { fileTools } from '../tools/builtin/file-tools.js';
import type { Tool } from '../tools/define-tool.js';
import { isInside } from '../tools/path-inside.js';
import type { ToolRegistry } from '../tools/registry.js';
import { RunWorkspaces } from '../tools/run-workspaces.js';
import type { KeelDirectory } from '../tools/workspace-keel-state.js';
import type { Workspace } from '../tools/workspace.js';
import type { ResolvedKeelOptions } from './keel-options.js';

/** A worker's per-run workspaces and each run's tools, bound to its own workspace. */
export interface RunWorkspaceTools {
  workspaces: RunWorkspaces;
  /** The tools as bound to an empty workspace, to describe them; no call is served by them. */
  described: readonly Tool[];
  /** The registry `make` builds of a run's tools, bound to its workspace (made on first use). */
  registryFor(workflowId: string, make: (tools: readonly Tool[]) => ToolRegistry): Promise<ToolRegistry>;
}

/**
 * Opens the root of the runs' workspaces and checks what must hold before a worker polls: the seed
 * exists, git is there to clone with, and Keel's own directories are neither inside the root nor
 * around it (a run's tools could then reach them, or removing a workspace could remove them).
 */
export async function openRunWorkspaceTools(
  options: ResolvedKeelOptions,
  settings: NonNullable<ResolvedKeelOptions['runWorkspaces']>,
  keelDirectories: readonly KeelDirectory[],
): Promise<RunWorkspaceTools> {
  if (options.workspace !== undefined) {
    throw new ConfigError(
      'KEEL_WORKSPACE (workspace) and KEEL_WORKSPACE_MODE=per-run (runWorkspaces) exclude each other: a run ' +
        'works either in the one shared workspace or in its own under KEEL_WORKSPACES_DIR',
    );
  }
  const seed = settings.seed;
  if (seed.kind === 'directory') {
    const found = await stat(seed.path).catch(() => undefined);
    if (found?.isDirectory() !== true) {
      throw new ConfigError(`KEEL_WORKSPACE_SEED_DIR (${seed.path}) is not a directory this worker can read`);
    }
  }
  if (seed.kind === 'git') await checkGit();
  const workspaces = await RunWorkspaces.open({
    root: settings.root,
    seed,
    retentionSeconds: settings.retentionSeconds,
    ...(options.workspaceProtect ? { protect: options.workspaceProtect } : {}),
  }).catch((error: unknown) => {
    throw new ConfigError(
      `KEEL_WORKSPACES_DIR (${settings.root}) cannot hold the runs' workspaces: ${(error as Error).message}`,
    );
  });
  for (const directory of keelDirectories) {
    const real = await realpath(path.resolve(directory.path)).catch(() => path.resolve(directory.path));
    if (isInside(real, workspaces.root) || isInside(workspaces.root, real)) {
      throw new ConfigError(
        `${directory.variable} (${real}, ${directory.holds}) and KEEL_WORKSPACES_DIR (${workspaces.root}) ` +
          'must not lie inside one another: set them to separate directories.',
      );
    }
  }
  if (seed.kind === 'directory') {
    const real = await realpath(seed.path);
    if (isInside(real, workspaces.root) || isInside(workspaces.root, real)) {
      throw new ConfigError(
        `KEEL_WORKSPACE_SEED_DIR (${real}) and KEEL_WORKSPACES_DIR (${workspaces.root}) must not lie inside one another`,
      );
    }
  }
  const bind = (workspace: Workspace): readonly Tool[] =>
    typeof options.tools === 'function' ? options.tools(workspace) : (options.tools ?? fileTools(workspace));
  const described = bind(await workspaces.template());
  // One registry per opened workspace: a workspace made again (after a sweep) gets its tools again.
  const registries = new WeakMap<Workspace, ToolRegistry>();
  return {
    workspaces,
    described,
    async registryFor(workflowId, make) {
      const workspace = await workspaces.forRun(workflowId);
      let registry = registries.get(workspace);
      if (registry === undefined) {
        registry = make(bind(workspace));
        registries.set(workspace, registry);
      }
      return registry;
    },
  };
}

function checkGit(): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('git', ['--version'], (error) => {
      if (error === null) return resolve();
      reject(
        new ConfigError(
          `KEEL_WORKSPACE_GIT_URL is set but git cannot be run on this worker (${error.message}); install git`,
        ),
      );
    });
  });
}
