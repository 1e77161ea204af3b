import type { SandboxMount } from './sandbox-mounts.js';
import { bytes, rlimitLines } from './limits.js';
import type { CommandLimits } from './limits.js';
import { isInside } from '../../path-inside.js';

/** Inside the sandbox, the working directory the worker opened and checked, bound by its descriptor. */
export const CWD_REFERENCE = '/run/keel-cwd';
/**
 * The launcher reports here before the program starts: `r` when it runs it, `c` when the cwd moved,
 * `p<path>` when a protected path is not the held entry, bound read-only there, `f<n>` when descriptor n,
 * inherited from the worker, could not be closed.
 */
export const STATUS_FD = 3;
/** bubblewrap writes its JSON information (the sandbox's init pid and namespaces) here. */
export const INFO_FD = 4;
/** The held working directory, which bubblewrap binds at {@link CWD_REFERENCE}. */
export const CWD_FD = 5;
/**
 * The protected workspace entries, held open, as descriptors from here up to 9: the launcher closes
 * 4 to 9 before the program starts, and no shell can close one above 9.
 */
export const PROTECTED_FD = 6;
/** How many protected entries one sandbox can bind read-only. */
export const MAX_PROTECTED = 10 - PROTECTED_FD;
/** The exit code of a launcher that refused to run the program. */
export const LAUNCHER_REFUSED = 125;

/*
 * bubblewrap changes into the cwd by path, and a concurrent command can swap a directory on that path
 * for a symbolic link. So the launcher compares the directory it is in (which no path change can
 * alter any more) with the one the worker opened, bound by descriptor where nothing else can reach,
 * and runs the program only when they are the same directory.
 *
 * It then closes every descriptor but stdin, stdout and stderr: bubblewrap passes on all it was
 * given, and one that names a directory, file or socket of the host leads out of the sandbox
 * (`/proc/self/fd/N/..` of a held directory is its parent on the host). Ours are 3 to 9; others
 * come from whatever started the worker, without close-on-exec. The shell closes 3 to 9; above that
 * it cannot, so a pipe or a character device (a supervisor's pipe, a terminal) is left and anything
 * else refused.
 */
const LAUNCHER = [
  `[ . -ef ${CWD_REFERENCE} ] || { printf c >&${STATUS_FD}; exit ${LAUNCHER_REFUSED}; }`,
  // bubblewrap resolves a bind's source and target by path, so a name swapped for a link and back
  // while it starts can put a host directory anywhere it leads. Each protected path must be, through
  // no link, a mount point showing the held entry: then that bind went there, from there.
  `i=${PROTECTED_FD}; n=$1; shift`,
  'while [ "$n" -gt 0 ]; do p=$1; e=$2; d=${p%/*}; d=${d:-/}; shift 2; n=$((n - 1)); m=',
  '  while read -r _ _ _ _ point _; do [ "$point" = "$e" ] && m=1; done < /proc/self/mountinfo',
  '  [ -n "$m" ] && [ ! -L "$p" ] && [ "$p" -ef /proc/self/fd/$i ] &&',
  '    [ "$(cd -P -- "$d" && pwd -P)" = "$d" ] ||',
  `    { printf "p%s" "$p" >&${STATUS_FD}; exit ${LAUNCHER_REFUSED}; }`,
  '  i=$((i + 1))',
  'done',
  'for f in /proc/self/fd/*; do n=${f##*/}; case $n in',
  `  0|1|2|${STATUS_FD}) ;;`,
  '  [4-9]) eval "exec $n<&-" ;;',
  // A descriptor the glob itself had open is gone already: -e no longer finds it.
  `  *) [ ! -e "$f" ] || [ -p "$f" ] || [ -c "$f" ] || { printf "f$n" >&${STATUS_FD}; exit ${LAUNCHER_REFUSED}; } ;;`,
  'esac; done',
  `printf r >&${STATUS_FD}; exec ${STATUS_FD}>&-; exec "$@"`,
];

/** What one sandboxed command needs. */
export interface SandboxPlan {
  mounts: readonly SandboxMount[];
  /** The workspace root, bound read-write at its own path. */
  root: string;
  /** The working directory's real path, inside `root`. */
  cwd: string;
  /**
   * Real paths inside `root`, bound read-only over it from descriptors {@link PROTECTED_FD} on, in
   * this order; at most {@link MAX_PROTECTED}.
   */
  protected: readonly string[];
  /** A private empty directory unless it lies in the workspace. */
  home: string;
  network: boolean;
  limits: CommandLimits;
  /** Whether a cgroup holds the command's memory (else each process gets an address-space limit). */
  memoryByCgroup: boolean;
  program: string;
  args: readonly string[];
}

/** bubblewrap's arguments for `plan`: new namespaces of every kind, only the listed paths visible. */
export function sandboxArguments(plan: SandboxPlan): string[] {
  const args = [
    '--unshare-all', // user, pid, mount, ipc, uts, cgroup and network namespaces
    '--unshare-user',
    '--disable-userns', // no nested namespace to regain capabilities in
    // A worker running as root would otherwise hand its capabilities on (reading any file, say).
    '--cap-drop',
    'ALL',
    ...(plan.network ? ['--share-net'] : []),
    '--die-with-parent', // the sandbox dies with the worker, and with bubblewrap when the command ends
    '--new-session',
    '--info-fd',
    String(INFO_FD),
  ];
  for (const mount of plan.mounts) {
    if (mount.kind === 'link') args.push('--symlink', mount.target, mount.path);
    else if (mount.kind === 'read-only') args.push('--ro-bind', mount.path, mount.path);
  }
  // RAM-backed: unbounded, one command could fill the machine's memory through them (/dev/shm too).
  const tmpSize = ['--size', String(bytes(plan.limits.tmpMb))];
  args.push(
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    ...tmpSize,
    '--tmpfs',
    '/dev/shm',
    ...tmpSize,
    '--tmpfs',
    '/tmp',
  );
  if (!isInside(plan.root, plan.home)) args.push(...tmpSize, '--tmpfs', plan.home);
  for (const mount of plan.mounts)
    if (mount.kind === 'operator') args.push('--ro-bind', mount.path, mount.path);
  // Last but the cwd: a workspace inside any of the above is still the workspace, read-write.
  args.push('--bind', plan.root, plan.root);
  if (plan.protected.length > MAX_PROTECTED) throw new Error('More protected entries than descriptors');
  // From the held descriptor, which stays open for the launcher to check what was mounted (with
  // --ro-bind-fd bubblewrap would close it, and its own check misses a link swapped back).
  for (const [index, entry] of plan.protected.entries())
    args.push('--ro-bind', `/proc/self/fd/${PROTECTED_FD + index}`, entry);
  // --ro-bind of /proc/self/fd/N would mount whatever the directory's path leads to by then;
  // --ro-bind-fd checks that the mount is the held directory.
  args.push('--ro-bind-fd', String(CWD_FD), CWD_REFERENCE);
  // bubblewrap's root and /dev are tmpfs too, unbounded: nothing may be written there but /dev/shm.
  args.push('--remount-ro', '/dev', '--remount-ro', '/');
  args.push(
    '--chdir',
    plan.cwd,
    '--',
    '/bin/sh',
    '-c',
    [...rlimitLines(plan.limits, plan.memoryByCgroup), ...LAUNCHER].join('\n'),
    'keel-launcher',
    String(plan.protected.length),
    ...plan.protected.flatMap((entry) => [entry, mountInfoPath(entry)]),
    plan.program,
    ...plan.args,
  );
  return args;
}

/** A path as /proc/self/mountinfo shows it: space, tab, newline and backslash in octal escapes. */
function mountInfoPath(entry: string): string {
  return entry.replace(
    /[ \t\n\\]/g,
    (character) => `\\${character.charCodeAt(0).toString(8).padStart(3, '0')}`,
  );
}
