import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../config-error.js';
import { errorCode } from './held-directory.js';
import type { Workspace } from './workspace.js';
import { isInside } from './path-inside.js';

/** A directory Keel itself writes, named by the variable that sets it. */
export interface KeelDirectory {
  /** `KEEL_STATE_DIR`, `KEEL_DATA_DIR`. */
  variable: string;
  path: string;
  /** What it holds, for the message ("the worker's records of completed side effects"). */
  holds: string;
}

/**
 * Refuses to start a worker when one of Keel's own directories lies inside its workspace (or holds
 * it) and the workspace's protection does not cover it: the agent could rewrite the records a retry
 * trusts or overwrite the local server's database. The real path counts, through links, and a
 * directory not created yet counts where it will be.
 */
export async function refuseUnprotectedKeelDirectories(
  workspace: Workspace,
  directories: readonly KeelDirectory[],
  options: { commands?: boolean } = {},
): Promise<void> {
  for (const directory of directories) {
    const real = await realPathToBe(directory.path);
    const protect = `KEEL_WORKSPACE_PROTECT (now ${JSON.stringify(workspace.protection.sources.join(',') || 'none')})`;
    const where = `${directory.variable} (${real}, ${directory.holds})`;
    if (isInside(real, workspace.root)) {
      throw new ConfigError(
        `${where} holds the workspace (KEEL_WORKSPACE=${workspace.root}), so the agent could change it: ` +
          `set ${directory.variable} or KEEL_WORKSPACE so that neither lies inside the other.`,
      );
    }
    if (!isInside(workspace.root, real)) continue;
    const relative = workspace.relative(real);
    if (workspace.protection.protecting(relative) !== undefined) {
      // run_command's sandbox keeps only protected entries at the workspace root read-only, so a
      // deeper directory that the file tools protect would still be the commands' to rewrite.
      const top = relative.split(path.sep)[0]!;
      if (options.commands !== true || workspace.protection.protecting(top) !== undefined) continue;
      throw new ConfigError(
        `${where} lies inside the workspace (KEEL_WORKSPACE=${workspace.root}) below ${JSON.stringify(top)}, ` +
          `which ${protect} does not protect; run_command's sandbox keeps only protected entries at the ` +
          `workspace root read-only, so its commands could change it: move ${directory.variable} out of the ` +
          `workspace, or add ${JSON.stringify(top)} to KEEL_WORKSPACE_PROTECT.`,
      );
    }
    throw new ConfigError(
      `${where} lies inside the workspace (KEEL_WORKSPACE=${workspace.root}) and ${protect} does not ` +
        `protect it, so the agent could change it: move ${directory.variable} out of the workspace, or add ` +
        `${JSON.stringify(relative.split(path.sep).join('/'))} to KEEL_WORKSPACE_PROTECT.`,
    );
  }
}

/** The real path of `target`, or, while it does not exist, of its nearest existing parent plus the rest. */
async function realPathToBe(target: string): Promise<string> {
  const absolute = path.resolve(target);
  for (let existing = absolute; ; existing = path.dirname(existing)) {
    try {
      return path.join(await realpath(existing), path.relative(existing, absolute));
    } catch (error) {
      if (!['ENOENT', 'ENOTDIR'].includes(errorCode(error) ?? '') || existing === path.dirname(existing)) {
        throw error;
      }
    }
  }
}
