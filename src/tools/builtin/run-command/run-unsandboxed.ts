import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ToolContext } from '../../define-tool.js';
import type { HeldDirectory } from '../../held-directory.js';
import { stopProcessGroup } from './process-group.js';
import { report } from './report.js';
import { runProcess } from './run-process.js';
import { CLOSE_WAIT_MS } from './signals.js';
import type { Command } from './command.js';

/**
 * Runs a command as a plain child of the worker (KEEL_RUN_COMMAND_SANDBOX=off): same user, same view
 * of the host, stopped through its process group. Only the cwd is still held by descriptor.
 */
export async function runUnsandboxed(
  command: Command,
  context: ToolContext,
  charLimit: number,
): Promise<string> {
  // A fresh HOME per call: nothing of the worker's, and nothing one run leaves for the next.
  const home = command.home ?? (await mkdtemp(path.join(tmpdir(), 'keel-run-home-')));
  try {
    const outcome = await runProcess(
      {
        file: command.program,
        args: command.args,
        env: { ...command.env, HOME: home },
        cwd: heldPath(command.cwd),
        stdin: command.stdin,
        seconds: command.seconds,
        detached: true, // Its own process group (and session), so stopping it reaches what stays in them.
        extraStdio: [],
        name: command.program,
        closeWaitMs: CLOSE_WAIT_MS,
      },
      context,
      charLimit,
      (child) => () => stopProcessGroup(child.pid!),
    );
    return report(
      { ...outcome, seconds: command.seconds, signalsAsCodes: false, reportsLeftovers: true },
      charLimit,
    );
  } finally {
    if (command.home === undefined) await rm(home, { recursive: true, force: true });
  }
}

/**
 * Where the child changes directory: `/proc/self/fd/<n>` is resolved by the child itself between fork
 * and exec, while it still has the worker's descriptors, so it lands in the held directory.
 */
function heldPath(cwd: HeldDirectory): string {
  return cwd.base;
}
