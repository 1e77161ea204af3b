import { lstat, readlink, realpath } from 'node:fs/promises';

/**
 * The host directories a sandboxed command sees, read-only: programs, their libraries and the system's
 * configuration. Nothing else of the host (home directories, /var, /proc of the worker) is there.
 */
export const SYSTEM_DIRECTORIES = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/**
 * One host path shown in the sandbox: a system directory bound read-only, or (merged /usr) recreated
 * as the same link, or a directory the operator added, bound read-only after the private /tmp and
 * HOME are mounted, so that it may lie in either.
 */
export type SandboxMount =
  { kind: 'read-only' | 'operator'; path: string } | { kind: 'link'; path: string; target: string };

/** The mounts for the system directories that exist here, then the operator's extra read-only paths. */
export async function sandboxMounts(extraReadOnly: readonly string[]): Promise<SandboxMount[]> {
  const mounts: SandboxMount[] = [];
  for (const directory of SYSTEM_DIRECTORIES) {
    const stats = await lstat(directory).catch(() => undefined);
    if (stats?.isSymbolicLink())
      mounts.push({ kind: 'link', path: directory, target: await readlink(directory) });
    else if (stats?.isDirectory()) mounts.push({ kind: 'read-only', path: directory });
  }
  for (const extra of extraReadOnly) mounts.push({ kind: 'operator', path: extra });
  return mounts;
}

/** The real host paths of what the mounts show: a program outside all of them does not exist inside. */
export async function visibleRoots(mounts: readonly SandboxMount[]): Promise<string[]> {
  const roots = await Promise.all(mounts.map((mount) => realpath(mount.path).catch(() => undefined)));
  return roots.filter((root): root is string => root !== undefined);
}
