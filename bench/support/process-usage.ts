import { readFile } from 'node:fs/promises';

/** Clock ticks per second of `/proc/<pid>/stat` times (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used so far, from `/proc`; undefined where that is unreadable. */
export async function processCpuSeconds(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const user = Number(fields[11]);
    const system = Number(fields[12]);
    return Number.isFinite(user + system) ? (user + system) / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

/** A memory field of `/proc/<pid>/status` in MiB; undefined where that is unreadable. */
async function statusMiB(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kilobytes = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1];
    return kilobytes === undefined ? undefined : Number(kilobytes) / 1024;
  } catch {
    return undefined;
  }
}

/** Resident memory of a process now, in MiB, from `/proc`; undefined where that is unreadable. */
export function processRssMiB(pid: number): Promise<number | undefined> {
  return statusMiB(pid, 'VmRSS');
}

/** Highest resident memory of a process's life so far (`VmHWM`), in MiB; undefined where unreadable. */
export function processPeakRssMiB(pid: number): Promise<number | undefined> {
  return statusMiB(pid, 'VmHWM');
}

/** CPU seconds this process has used so far (user + system). */
export function ownCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}
