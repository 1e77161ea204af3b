import { ToolDefinitionError } from '../../define-tool.js';

/**
 * What one sandboxed command may use. Memory and processes are held by a cgroup of the command's own
 * where the worker can make one (see `cgroups.ts`); elsewhere by per-process rlimits, which are
 * weaker (a limit per process, not for all of them together).
 */
export interface CommandLimits {
  /** Memory of all its processes together (no swap); where no cgroup can be made, each process's address space. */
  memoryMb: number;
  /** Processes and threads at once, all together; where no cgroup can be made, RLIMIT_NPROC. */
  processes: number;
  /** CPU time of each process (RLIMIT_CPU), in seconds. */
  cpuSeconds: number;
  /** Largest file a process may write (RLIMIT_FSIZE), anywhere. */
  fileMb: number;
  /** Size of the private tmpfs at /tmp, and of the one at HOME. */
  tmpMb: number;
  /**
   * How much the free space of the workspace's filesystem may shrink while the command runs before
   * it is stopped: a growth cap on what it writes there, watched, not a quota (see `disk-watch.ts`).
   */
  workspaceMb: number;
}

/** The limits a worker gives each command unless its operator says otherwise (docs/safety.md). */
export const DEFAULT_LIMITS: CommandLimits = {
  memoryMb: 2_048,
  processes: 256,
  cpuSeconds: 600,
  fileMb: 1_024,
  tmpMb: 256,
  workspaceMb: 4_096,
};

/** Which setting names each limit, for errors and for what the model is told. */
export const LIMIT_SETTINGS: Record<keyof CommandLimits, string> = {
  memoryMb: 'KEEL_RUN_COMMAND_MEMORY_MB',
  processes: 'KEEL_RUN_COMMAND_PROCESSES',
  cpuSeconds: 'KEEL_RUN_COMMAND_CPU_SECONDS',
  fileMb: 'KEEL_RUN_COMMAND_FILE_MB',
  tmpMb: 'KEEL_RUN_COMMAND_TMP_MB',
  workspaceMb: 'KEEL_RUN_COMMAND_WORKSPACE_MB',
};

/** The defaults with the operator's limits over them; every one a positive integer. */
export function commandLimits(given: Partial<CommandLimits> | undefined): CommandLimits {
  const limits = { ...DEFAULT_LIMITS, ...given };
  for (const [name, value] of Object.entries(limits) as [keyof CommandLimits, number][]) {
    if (!(Number.isSafeInteger(value) && value > 0))
      throw new ToolDefinitionError(
        `run_command: limits.${name} (${LIMIT_SETTINGS[name]}) must be a positive integer, not ${String(value)}`,
      );
  }
  return limits;
}

const MB = 1024 * 1024;
/** CPU seconds past the limit (and its SIGXCPU) before a process is killed outright. */
const CPU_KILL_AFTER_SECONDS = 5;

/** Bytes of `megabytes`. */
export function bytes(megabytes: number): number {
  return megabytes * MB;
}

/**
 * Shell lines that set the rlimits in the sandbox's launcher before it runs the program (POSIX `sh`:
 * dash, bash or busybox). `-f` counts 512-byte blocks in every POSIX shell; processes are `-u` in
 * bash and `-p` in dash. A limit the shell cannot raise (the worker's own is lower) keeps the lower.
 * `-v` only where no cgroup holds memory: an address-space limit is crude (a runtime that reserves
 * address space up front may not start under it).
 */
export function rlimitLines(limits: CommandLimits, memoryByCgroup: boolean): string[] {
  return [
    // SIGXCPU at the soft limit; SIGKILL at the hard one, a little later, for what ignores it.
    `ulimit -H -t ${limits.cpuSeconds + CPU_KILL_AFTER_SECONDS} 2>/dev/null`,
    `ulimit -S -t ${limits.cpuSeconds} 2>/dev/null`,
    `ulimit -f ${limits.fileMb * 2048} 2>/dev/null`,
    `{ ulimit -u ${limits.processes} || ulimit -p ${limits.processes}; } 2>/dev/null`,
    ...(memoryByCgroup ? [] : [`ulimit -v ${limits.memoryMb * 1024} 2>/dev/null`]),
    ':',
  ];
}

/** Which limits a finished command ran into, as far as the worker can tell. */
export interface LimitHits {
  memory: boolean;
  processes: boolean;
  /** The workspace's filesystem lost more than `workspaceMb` while it ran, so it was stopped. */
  workspace?: boolean;
}

/**
 * Lines for the model naming each limit the command hit: from its cgroup's counters (memory,
 * processes), from the workspace's disk watch, from how it ended (SIGXCPU, SIGXFSZ, as 128 + n) and, for a write refused with EFBIG
 * or ENOSPC, from its stderr.
 */
export function limitNotes(
  limits: CommandLimits,
  hits: LimitHits,
  exitCode: number | null,
  stderr: string,
): string[] {
  const notes: string[] = [];
  if (hits.memory)
    notes.push(
      `limit: a process was killed for going over the memory limit of ${limits.memoryMb} MB for the whole command (${LIMIT_SETTINGS.memoryMb})`,
    );
  if (hits.processes)
    notes.push(
      `limit: a process or thread could not start: the command reached its limit of ${limits.processes} at once (${LIMIT_SETTINGS.processes})`,
    );
  if (hits.workspace === true)
    notes.push(
      `limit: it was stopped for growing the workspace's disk use by more than ${limits.workspaceMb} MB while it ran (${LIMIT_SETTINGS.workspaceMb}); what it wrote is still there`,
    );
  if (exitCode === 128 + 24)
    notes.push(
      `limit: it was stopped for using more than ${limits.cpuSeconds} s of CPU time (${LIMIT_SETTINGS.cpuSeconds})`,
    );
  if (exitCode === 128 + 25)
    notes.push(
      `limit: it was stopped for writing a file larger than ${limits.fileMb} MB (${LIMIT_SETTINGS.fileMb})`,
    );
  // A program that ignores SIGXFSZ (Python does) gets EFBIG, "File too large", from the write instead.
  else if (/File too large|EFBIG/u.test(stderr))
    notes.push(
      `limit: a write may have failed for a file larger than ${limits.fileMb} MB (${LIMIT_SETTINGS.fileMb})`,
    );
  if (/No space left on device|ENOSPC/u.test(stderr))
    notes.push(
      `limit: a write may have failed for want of space: /tmp and HOME hold ${limits.tmpMb} MB each (${LIMIT_SETTINGS.tmpMb}), or the workspace's disk is full`,
    );
  return notes;
}
