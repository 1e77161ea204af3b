import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { LimitHits } from './limits.js';

/** Where cgroups are mounted on Linux. */
const CGROUP_ROOT = '/sys/fs/cgroup';
/** The leaf the worker moves itself into on cgroup v2 so that its own cgroup may hand out controllers. */
const WORKER_LEAF = 'keel-worker';
/** Tries at removing a command's cgroup while its last processes are reaped. */
const REMOVE_TRIES = 20;
const REMOVE_PAUSE_MS = 50;

/** Limits a cgroup holds for all of a command's processes together. */
export interface CgroupLimits {
  memoryBytes: number;
  processes: number;
}

/** One command's cgroup(s): what the starting shell joins, what it saw, and its removal. */
export interface CommandCgroup {
  /** The `cgroup.procs` files the command's first process writes itself into before anything else. */
  procsFiles: string[];
  /** Which limits were hit, from the kernel's counters. */
  hits(): Promise<LimitHits>;
  /** Removes the cgroup(s); the command's processes must be gone. Never throws. */
  remove(): Promise<void>;
}

/** How this worker makes per-command cgroups, or why it cannot. */
export type Cgroups =
  | { kind: 'v1' | 'v2'; create(limits: CgroupLimits): Promise<CommandCgroup> }
  | { kind: 'none'; reason: string };

let counter = 0;
const unique = (): string => `keel-cmd-${process.pid}-${Date.now().toString(36)}-${(counter += 1)}`;

/**
 * Finds how to give each command a cgroup with a memory limit (swap off) and a process limit: cgroup
 * v2 where the worker's own cgroup can hand out the `memory` and `pids` controllers (delegated to it,
 * or the worker is root in a container), moving the worker into a leaf of its own first when its
 * cgroup holds processes; cgroup v1 where the worker may make cgroups under its own in the `memory`
 * and `pids` hierarchies (as root). Each way is tried by making and removing one cgroup. Found once
 * per process (it never rejects: what fails is the reason there is none).
 */
export function findCgroups(): Promise<Cgroups> {
  // Once per process: the worker's start-up check and each run_command tool share what it found.
  return (found ??= discover());
}
let found: Promise<Cgroups> | undefined;

async function discover(): Promise<Cgroups> {
  const membership = await readFile('/proc/self/cgroup', 'utf8').catch(() => '');
  const reasons: string[] = [];
  try {
    const v2 = await cgroupV2(membership);
    if (v2 !== undefined) return v2;
    reasons.push('cgroup v2 has no memory and pids controllers here');
  } catch (error) {
    reasons.push(`cgroup v2: ${(error as Error).message}`);
  }
  try {
    const v1 = await cgroupV1(membership);
    if (v1 !== undefined) return v1;
    reasons.push('no cgroup v1 memory and pids hierarchies');
  } catch (error) {
    reasons.push(`cgroup v1: ${(error as Error).message}`);
  }
  return { kind: 'none', reason: reasons.join('; ') };
}

async function cgroupV2(membership: string): Promise<Cgroups | undefined> {
  const own = /^0::(\/.*)$/mu.exec(membership)?.[1];
  if (own === undefined) return undefined;
  // Pure v2 at /sys/fs/cgroup, or the hybrid layout's unified hierarchy.
  const mount = (await exists(path.join(CGROUP_ROOT, 'cgroup.controllers')))
    ? CGROUP_ROOT
    : path.join(CGROUP_ROOT, 'unified');
  let base = path.join(mount, own);
  // Already in our leaf (a worker restarted in place, or another started in this cgroup): its parent hands out.
  if (path.basename(base) === WORKER_LEAF) base = path.dirname(base);
  const available = (await readFile(path.join(base, 'cgroup.controllers'), 'utf8')).split(/\s+/u);
  if (!available.includes('memory') || !available.includes('pids')) return undefined;
  const enabled = async (): Promise<boolean> => {
    const control = (await readFile(path.join(base, 'cgroup.subtree_control'), 'utf8')).split(/\s+/u);
    return control.includes('memory') && control.includes('pids');
  };
  if (!(await enabled())) {
    // A cgroup with processes cannot hand out controllers: the worker moves into a leaf of its own.
    const leaf = path.join(base, WORKER_LEAF);
    await mkdir(leaf, { recursive: true });
    await writeFile(path.join(leaf, 'cgroup.procs'), String(process.pid));
    let handedOut = false;
    try {
      await writeFile(path.join(base, 'cgroup.subtree_control'), '+memory +pids');
      handedOut = await enabled();
    } finally {
      // Not possible after all (EBUSY: another process shares the cgroup): the worker goes back where it was.
      if (!handedOut) {
        await writeFile(path.join(base, 'cgroup.procs'), String(process.pid)).catch(() => undefined);
        await rmdir(leaf).catch(() => undefined);
      }
    }
    if (!handedOut) return undefined;
  }
  await sweep(base);
  const cgroups: Cgroups = {
    kind: 'v2',
    async create(limits) {
      const directory = path.join(base, unique());
      await mkdir(directory);
      try {
        await writeFile(path.join(directory, 'memory.max'), String(limits.memoryBytes));
        await writeFile(path.join(directory, 'memory.swap.max'), '0').catch(() => undefined);
        await writeFile(path.join(directory, 'pids.max'), String(limits.processes));
      } catch (error) {
        await removeDirectory(directory);
        throw error;
      }
      return {
        procsFiles: [path.join(directory, 'cgroup.procs')],
        async hits() {
          const [memory, pids] = await Promise.all([
            counters(path.join(directory, 'memory.events')),
            counters(path.join(directory, 'pids.events')),
          ]);
          return { memory: (memory.oom_kill ?? 0) > 0, processes: (pids.max ?? 0) > 0 };
        },
        remove: () => removeDirectory(directory),
      };
    },
  };
  await probe(cgroups);
  return cgroups;
}

async function cgroupV1(membership: string): Promise<Cgroups | undefined> {
  const own = (controller: string): string | undefined =>
    new RegExp(`^\\d+:(?:[^:]*,)?${controller}(?:,[^:]*)?:(/.*)$`, 'mu').exec(membership)?.[1];
  const memoryPath = own('memory');
  const pidsPath = own('pids');
  if (memoryPath === undefined || pidsPath === undefined) return undefined;
  const memoryBase = path.join(CGROUP_ROOT, 'memory', memoryPath);
  const pidsBase = path.join(CGROUP_ROOT, 'pids', pidsPath);
  if (!(await exists(path.join(memoryBase, 'memory.limit_in_bytes')))) return undefined;
  // The root cgroup has no pids.max of its own; its children do.
  if (!(await exists(path.join(pidsBase, 'cgroup.procs')))) return undefined;
  await Promise.all([sweep(memoryBase), sweep(pidsBase)]);
  const cgroups: Cgroups = {
    kind: 'v1',
    async create(limits) {
      const name = unique();
      const memory = path.join(memoryBase, name);
      const pids = path.join(pidsBase, name);
      const remove = async (): Promise<void> => {
        await Promise.all([removeDirectory(memory), removeDirectory(pids)]);
      };
      try {
        await mkdir(memory);
        await mkdir(pids);
        await writeFile(path.join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
        // Memory and swap together, where swap is accounted: no swapping past the limit.
        await writeFile(path.join(memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes)).catch(
          () => undefined,
        );
        await writeFile(path.join(pids, 'pids.max'), String(limits.processes));
      } catch (error) {
        await remove();
        throw error;
      }
      return {
        procsFiles: [path.join(memory, 'cgroup.procs'), path.join(pids, 'cgroup.procs')],
        async hits() {
          const [oom, events] = await Promise.all([
            counters(path.join(memory, 'memory.oom_control')),
            counters(path.join(pids, 'pids.events')),
          ]);
          return { memory: (oom.oom_kill ?? 0) > 0, processes: (events.max ?? 0) > 0 };
        },
        remove,
      };
    },
  };
  await probe(cgroups);
  return cgroups;
}

/**
 * Removes the command cgroups of workers that have ended (`keel-cmd-<pid>-…`, its pid gone): a worker
 * killed mid-command leaves them, empty once the kernel ended their processes.
 */
async function sweep(directory: string): Promise<void> {
  const names = await readdir(directory).catch(() => [] as string[]);
  for (const name of names) {
    const pid = Number(/^keel-cmd-(\d+)-/u.exec(name)?.[1]);
    if (!(pid > 0) || pid === process.pid || alive(pid)) continue;
    await removeDirectory(path.join(directory, name));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Makes and removes one cgroup: a way that cannot do that is no way. */
async function probe(cgroups: Cgroups): Promise<void> {
  if (cgroups.kind === 'none') return;
  const cgroup = await cgroups.create({ memoryBytes: 64 * 1024 * 1024, processes: 8 });
  await cgroup.remove();
}

/** `name value` lines of a cgroup file as numbers; empty when it cannot be read. */
async function counters(file: string): Promise<Record<string, number>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const values: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const [name, value] = line.trim().split(/\s+/u);
    if (name !== undefined && value !== undefined && /^\d+$/u.test(value)) values[name] = Number(value);
  }
  return values;
}

async function exists(file: string): Promise<boolean> {
  return readFile(file, 'utf8').then(
    () => true,
    () => false,
  );
}

/** rmdir of a cgroup, tried again while the kernel still counts its last processes. */
async function removeDirectory(directory: string): Promise<void> {
  for (let attempt = 1; attempt <= REMOVE_TRIES; attempt += 1) {
    try {
      await rmdir(directory);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || attempt === REMOVE_TRIES) return;
      await new Promise((resolve) => setTimeout(resolve, REMOVE_PAUSE_MS));
    }
  }
}
