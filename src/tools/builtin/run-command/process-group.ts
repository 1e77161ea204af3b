import { readdir, readFile } from 'node:fs/promises';
import { KILL_GRACE_MS, KILL_WAIT_MS, POLL_MS, send } from './signals.js';

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
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
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

/**
 * Processes still running in the group or session `id`, from /proc (undefined where there is none, or
 * when it could not be read in full).
 * Zombies do not count: they are dead, and an init that reaps orphans late would otherwise hold us up.
 */
async function livingMembers(id: number): Promise<{ pid: number; group: number }[] | undefined> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return undefined;
  }
  const members: { pid: number; group: number }[] = [];
  let complete = true;
  await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (entry) => {
        try {
          const line = await readFile(`/proc/${entry}/stat`, 'utf8');
          // After the command name, which may hold spaces and parentheses: state ppid pgrp session …
          const [state, , group, session] = line.slice(line.lastIndexOf(')') + 2).split(' ');
          if (state === 'Z' || state === 'X') return;
          if (Number(group) === id || Number(session) === id)
            members.push({ pid: Number(entry), group: Number(group) });
        } catch (error) {
          // ENOENT or ESRCH: it ended while we looked. Anything else (EMFILE) leaves us unsure.
          const code = (error as NodeJS.ErrnoException).code;
          if (code !== 'ENOENT' && code !== 'ESRCH') complete = false;
        }
      }),
  );
  return complete ? members : undefined;
}
