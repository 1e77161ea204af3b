import type { HeldDirectory } from '../../held-directory.js';
import type { Workspace } from '../../workspace.js';
import { WorkspaceError } from '../../workspace-error.js';
import { openHeldDirectory } from '../../workspace-open.js';

/**
 * Opens the call's working directory and checks, by descriptor, that it is inside the workspace. The
 * command then runs in the directory held open, never in whatever the path leads to later.
 */
export async function openWorkingDirectory(workspace: Workspace, cwd: string): Promise<HeldDirectory> {
  const real = await workspace.resolve(cwd);
  return openHeldDirectory(
    workspace,
    real,
    real,
    cwd,
    () => new WorkspaceError(`cwd ${cwd} is not a directory`),
  );
}
