import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * What tells one process from another that later gets the same PID: when it started (as the kernel
 * counts it, so it cannot drift) and its command line.
 */
export interface ProcessIdentity {
  /** Linux: field 22 of /proc/<pid>/stat (clock ticks since boot); elsewhere `ps -o lstart`. */
  startTime: string;
  /** The arguments, one per element (elsewhere than Linux: the whole command line as one). */
  commandLine: string[];
}

/** The identity of a live process, or undefined when `pid` is not running (a zombie counts as ended). */
export async function processIdentity(pid: number): Promise<ProcessIdentity | undefined> {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  if (process.platform === 'linux') return linuxIdentity(pid);
  try {
    const { stdout } = await run('ps', ['-o', 'stat=', '-o', 'lstart=', '-p', String(pid)]);
    const [state, ...start] = stdout.trim().split(/\s+/u);
    if (state === undefined || state.startsWith('Z')) return undefined;
    const { stdout: command } = await run('ps', ['-o', 'command=', '-p', String(pid)]);
    return { startTime: start.join(' '), commandLine: [command.trim()] };
  } catch {
    return undefined;
  }
}

async function linuxIdentity(pid: number): Promise<ProcessIdentity | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [state] = fields;
    if (state === 'Z' || state === 'X') return undefined;
    const commandLine = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
    return { startTime: fields[19] ?? '', commandLine };
  } catch {
    return undefined;
  }
}
