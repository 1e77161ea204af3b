import { livingProcesses } from './living-processes.js';
import { KILL_GRACE_MS, KILL_WAIT_MS, pause, POLL_MS, send } from './signals.js';

/*
 * How an unsandboxed command is stopped (KEEL_RUN_COMMAND_SANDBOX=off): through its process group and
 * session. A process that calls setsid() leaves both, and this cannot reach it; only the sandbox can.
 */

/**
 * Stops every process in the group (and the session) led by `group`: SIGTERM, then SIGKILL for what
 * is left after a grace. Returns the signals it had to send: none when nothing was running.
 */
export async function stopProcessGroup(group: number): Promise<NodeJS.Signals[]> {
  const sent: NodeJS.Signals[] = [];
  for (const [signal, wait] of [
    ['SIGTERM', KILL_GRACE_MS],
    ['SIGKILL', KILL_WAIT_MS],
  ] as const) {
    const members = await livingMembers(group);
    if (members === undefined ? !groupExists(group) : members.length === 0) return sent;
    send(-group, signal);
    // A process that moved to another group of the session (job control) is signalled on its own.
    for (const member of members ?? []) if (member.group !== group) send(member.pid, signal);
    sent.push(signal);
    const deadline = Date.now() + wait;
    while (Date.now() < deadline) {
      await pause(POLL_MS);
      const left = await livingMembers(group);
      if (left === undefined ? !groupExists(group) : left.length === 0) return sent;
    }
  }
  return sent;
}

function groupExists(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Processes still running in the group or session `id` (undefined when /proc could not be read in full). */
async function livingMembers(id: number): Promise<{ pid: number; group: number }[] | undefined> {
  const found = await livingProcesses(
    ({ fields: [, , group, session] }) => Number(group) === id || Number(session) === id,
  );
  if (found === undefined || !found.complete) return undefined;
  return found.processes.map(({ pid, fields }) => ({ pid, group: Number(fields[2]) }));
}
