import type { HeldDirectory } from '../../held-directory.js';
import type { Workspace } from '../../workspace.js';

/** One checked command, ready to run: what both the sandboxed and the unsandboxed runner take. */
export interface Command {
  /** Absolute path of the allowed program. */
  program: string;
  args: readonly string[];
  /** The working directory, held open and checked to be inside the workspace. */
  cwd: HeldDirectory;
  /** The workspace root. */
  root: string;
  /** The workspace the command runs in: its protected entries stay read-only in the sandbox. */
  workspace: Workspace;
  /** The whole environment of the program (no variable of the worker's unless listed here). */
  env: Record<string, string>;
  /** The operator's HOME, if set; otherwise each runner makes a fresh empty one. */
  home: string | undefined;
  stdin: string | undefined;
  seconds: number;
}
