import { readlink } from 'node:fs/promises';
import { livingProcesses } from './living-processes.js';
import { KILL_GRACE_MS, KILL_WAIT_MS, pause, POLL_MS, send } from './signals.js';

/** What bubblewrap reports about a sandbox it started: its init's host pid and its pid namespace. */
export interface SandboxInfo {
  init: number;
  /** As `/proc/<pid>/ns/pid` names it: `pid:[4026532181]`. */
  namespace: string;
}

/** The sandbox's init and pid namespace from bubblewrap's `--info-fd` JSON; undefined if malformed. */
export function parseSandboxInfo(text: string): SandboxInfo | undefined {
  try {
    const info = JSON.parse(text) as Record<string, unknown>;
    const init = info['child-pid'];
    const namespace = info['pid-namespace'];
    if (typeof init !== 'number' || typeof namespace !== 'number') return undefined;
    return { init, namespace: `pid:[${namespace}]` };
  } catch {
    return undefined;
  }
}

/**
 * Host pids of the living processes in the sandbox's pid namespace, its init included (zombies are
 * dead and do not count). Every process a command starts is in it: setsid() does not leave it.
 */
export async function sandboxMembers(info: SandboxInfo): Promise<number[]> {
  const members = await livingProcesses(async ({ pid }) =>
    // A process that is not ours to read is not in the sandbox.
    readlink(`/proc/${pid}/ns/pid`).then(
      (namespace) => namespace === info.namespace,
      () => false,
    ),
  );
  return (members?.processes ?? []).map(({ pid }) => pid);
}

/** The sandbox's processes and how to end it as a whole. */
export interface SandboxHandle {
  info: SandboxInfo | undefined;
  /** Whether bubblewrap itself (the worker's child) has exited. */
  exited(): boolean;
  /** SIGKILLs bubblewrap; its init dies with it (`--die-with-parent`), and the kernel ends the rest. */
  killBubblewrap(): void;
}

/**
 * Stops a sandbox still running: SIGTERM to every process in it, then, after a grace, SIGKILL to the
 * whole namespace. Returns the signals sent. Resolves once no process of the sandbox is left.
 */
export async function stopSandbox(sandbox: SandboxHandle): Promise<NodeJS.Signals[]> {
  const sent: NodeJS.Signals[] = [];
  const { info } = sandbox;
  const commands = info === undefined ? [] : (await sandboxMembers(info)).filter((pid) => pid !== info.init);
  if (commands.length > 0) {
    for (const pid of commands) send(pid, 'SIGTERM');
    sent.push('SIGTERM');
    const deadline = Date.now() + KILL_GRACE_MS;
    while (Date.now() < deadline && !sandbox.exited()) {
      await pause(POLL_MS);
      if ((await sandboxMembers(info!)).every((pid) => pid === info!.init)) break;
    }
  }
  if (!sandbox.exited() || (info !== undefined && (await sandboxMembers(info)).length > 0)) {
    sandbox.killBubblewrap();
    if (info !== undefined) await killInit(info);
    sent.push('SIGKILL');
  }
  await sandboxGone(sandbox);
  return sent;
}

/**
 * Waits until no process of the sandbox is left, after bubblewrap exited (its init then dies by
 * `--die-with-parent`, and the kernel kills what is left in the namespace). An init that somehow
 * survives is killed here; undefined info means the sandbox never started.
 */
export async function sandboxGone(sandbox: SandboxHandle): Promise<void> {
  const { info } = sandbox;
  if (info === undefined) return;
  const deadline = Date.now() + KILL_WAIT_MS;
  while ((await sandboxMembers(info)).length > 0) {
    if (Date.now() >= deadline) {
      await killInit(info);
      return;
    }
    await pause(POLL_MS);
  }
}

/** SIGKILLs the sandbox's init, which ends its namespace; checked first, as its pid may be reused. */
async function killInit(info: SandboxInfo): Promise<void> {
  const namespace = await readlink(`/proc/${info.init}/ns/pid`).catch(() => undefined);
  if (namespace === info.namespace) send(info.init, 'SIGKILL');
}
