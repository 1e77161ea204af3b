/** How long processes get to exit after SIGTERM before SIGKILL. */
export const KILL_GRACE_MS = 2_000;
/** How long to wait for processes to die after SIGKILL (it cannot be ignored, but exiting takes time). */
export const KILL_WAIT_MS = 2_000;
/**
 * How long to wait for the output pipes to close once the processes are gone. Unsandboxed, a process
 * that left the group may hold them for ever, so this is short.
 */
export const CLOSE_WAIT_MS = 1_000;
/**
 * The same for a sandbox, where every process is known to be dead, so the pipes are closed and only
 * a busy worker is slow to read their last bytes: long, so that output is not cut short.
 */
export const SANDBOX_CLOSE_WAIT_MS = 10_000;
/** How often /proc is looked at while waiting for processes to go. */
export const POLL_MS = 25;

/** Sends `signal` to `target` (a pid, or minus a process group), ignoring a process already gone. */
export function send(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // ESRCH: already gone. EPERM: it changed user (setuid); nothing more we can do.
  }
}

/** Resolves after `ms` milliseconds: the pause between two looks at /proc. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
