import { ConfigError } from './config-error.js';
import type { Variable } from './env.js';
import { gitUrlProblem } from './tools/run-workspace-seed.js';
import type { WorkspaceSeed } from './tools/run-workspace-seed.js';

/** How long an ended run's workspace is kept after its last use, when `KEEL_WORKSPACE_RETENTION_SECONDS` is unset: a day. */
export const DEFAULT_WORKSPACE_RETENTION_SECONDS = 86_400;

/** How long a call waits for the worker holding its run's workspace, when `KEEL_WORKSPACE_FAILOVER_SECONDS` is unset. */
export const DEFAULT_WORKSPACE_FAILOVER_SECONDS = 30;

/** A workspace per run, as the environment configures it (see `WorkerConfig.runWorkspaces`). */
export interface RunWorkspacesConfig {
  /** `KEEL_WORKSPACES_DIR`: the directory holding every run's workspace. */
  root: string;
  /** `KEEL_WORKSPACE_SEED_DIR` or `KEEL_WORKSPACE_GIT_URL`: what a new workspace starts as; empty when neither. */
  seed: WorkspaceSeed;
  /** `KEEL_WORKSPACE_RETENTION_SECONDS`: how long an ended run's workspace is kept after its last use. */
  retentionSeconds: number;
  /** `KEEL_WORKSPACES_SHARED`: every worker sees the same root, so no run is pinned to one worker. */
  shared: boolean;
  /** `KEEL_WORKSPACE_FAILOVER_SECONDS`: how long a call waits for the holding worker before the workspace counts as lost. */
  failoverSeconds: number;
}

/** `KEEL_WORKSPACE_GIT_URL`: a repository URL without credentials in it, which is never quoted back. */
export const gitUrl: Variable<string | undefined> = {
  parse(name, raw) {
    const value = raw?.trim() || undefined;
    if (value === undefined) return undefined;
    const problem = gitUrlProblem(value);
    // Not quoted: a URL refused for its credentials must not put them in the error either.
    if (problem !== undefined) throw new ConfigError(`${name} is refused: ${problem}`);
    return value;
  },
};

/** The variables {@link runWorkspacesConfig} combines, as read. */
interface RunWorkspaceVariables {
  KEEL_WORKSPACE: string | undefined;
  KEEL_WORKSPACE_MODE: 'shared' | 'per-run' | undefined;
  KEEL_WORKSPACES_DIR: string | undefined;
  KEEL_WORKSPACE_SEED_DIR: string | undefined;
  KEEL_WORKSPACE_GIT_URL: string | undefined;
  KEEL_WORKSPACE_RETENTION_SECONDS: number;
  KEEL_WORKSPACES_SHARED: boolean;
  KEEL_WORKSPACE_FAILOVER_SECONDS: number;
}

/**
 * Per-run workspaces when `KEEL_WORKSPACE_MODE=per-run`, else undefined. Settings that only mean
 * something together are refused apart, so a typo cannot leave runs sharing one directory unnoticed.
 */
export function runWorkspacesConfig(values: RunWorkspaceVariables): RunWorkspacesConfig | undefined {
  const perRunOnly = (
    ['KEEL_WORKSPACES_DIR', 'KEEL_WORKSPACE_SEED_DIR', 'KEEL_WORKSPACE_GIT_URL'] as const
  ).filter((name) => values[name] !== undefined);
  if (values.KEEL_WORKSPACE_MODE !== 'per-run') {
    if (perRunOnly.length > 0) {
      throw new ConfigError(
        `${perRunOnly.join(' and ')} only apply to per-run workspaces: set KEEL_WORKSPACE_MODE=per-run, or unset them`,
      );
    }
    return undefined;
  }
  if (values.KEEL_WORKSPACES_DIR === undefined) {
    throw new ConfigError(
      "KEEL_WORKSPACE_MODE=per-run needs KEEL_WORKSPACES_DIR: the absolute path of the directory to hold every run's workspace",
    );
  }
  if (values.KEEL_WORKSPACE !== undefined) {
    throw new ConfigError(
      'KEEL_WORKSPACE names the one workspace all runs share, which KEEL_WORKSPACE_MODE=per-run replaces: unset one of them',
    );
  }
  if (values.KEEL_WORKSPACE_SEED_DIR !== undefined && values.KEEL_WORKSPACE_GIT_URL !== undefined) {
    throw new ConfigError(
      'KEEL_WORKSPACE_SEED_DIR and KEEL_WORKSPACE_GIT_URL both say what a new workspace starts as: set only one',
    );
  }
  const seed: WorkspaceSeed =
    values.KEEL_WORKSPACE_SEED_DIR !== undefined
      ? { kind: 'directory', path: values.KEEL_WORKSPACE_SEED_DIR }
      : values.KEEL_WORKSPACE_GIT_URL !== undefined
        ? { kind: 'git', url: values.KEEL_WORKSPACE_GIT_URL }
        : { kind: 'empty' };
  return {
    root: values.KEEL_WORKSPACES_DIR,
    seed,
    retentionSeconds: values.KEEL_WORKSPACE_RETENTION_SECONDS,
    shared: values.KEEL_WORKSPACES_SHARED,
    failoverSeconds: values.KEEL_WORKSPACE_FAILOVER_SECONDS,
  };
}
