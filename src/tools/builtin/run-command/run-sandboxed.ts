import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { ToolContext } from '../../define-tool.js';
import { ToolError } from '../../tool-error.js';
import type { Cgroups, CommandCgroup } from './cgroups.js';
import type { Command } from './command.js';
import { watchDisk } from './disk-watch.js';
import { bytes, limitNotes } from './limits.js';
import type { CommandLimits } from './limits.js';
import { report } from './report.js';
import { runProcess } from './run-process.js';
import type { Halt } from './run-process.js';
import { openProtectedEntries, protectedRootNames, setAsideCreatedProtected } from './protected-entries.js';
import type { ProtectedEntry } from './protected-entries.js';
import {
  INFO_FD,
  LAUNCHER_REFUSED,
  MAX_PROTECTED,
  sandboxArguments,
  STATUS_FD,
} from './sandbox-arguments.js';
import type { SandboxMount } from './sandbox-mounts.js';
import { parseSandboxInfo, sandboxGone, stopSandbox } from './sandbox-processes.js';
import type { SandboxHandle } from './sandbox-processes.js';
import { SANDBOX_CLOSE_WAIT_MS, send } from './signals.js';

/** How commands are sandboxed on this worker. */
export interface SandboxSettings {
  /** Absolute path of bubblewrap. */
  bwrap: string;
  mounts: readonly SandboxMount[];
  network: boolean;
  limits: CommandLimits;
  /** How each command gets a cgroup of its own for its memory and processes, or why none. */
  cgroups: Cgroups;
  /** util-linux's `setpriv`, which a root worker starts bubblewrap through as the workspace's owner. */
  setpriv: string | undefined;
}

/** Whom a command runs as, when not as the worker's own user. */
export interface SandboxUser {
  uid: number;
  gid: number;
}

/**
 * Whom a root worker runs commands in `root` as: the workspace root's owner when that is not root,
 * so that host files are seen as another user's (not root's own: `/etc/shadow`) and what a command
 * writes belongs to the workspace's owner. Undefined (the worker's own user, with no capabilities)
 * for a worker that is not root, or a workspace that root owns.
 */
export async function sandboxUser(root: string): Promise<SandboxUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const owner = await stat(root);
  return owner.uid === 0 ? undefined : { uid: owner.uid, gid: owner.gid };
}

/**
 * The first process joins the command's cgroups and then becomes bubblewrap, so that everything in
 * the sandbox is counted from its start; one that cannot join starts nothing.
 */
const JOIN_CGROUPS =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"';

/** HOME inside the sandbox when the operator sets none: a private, empty tmpfs. */
export const SANDBOX_HOME = '/home/keel';

/**
 * Runs a command in a bubblewrap sandbox: its own user, pid, mount, ipc, uts and network namespaces,
 * the workspace read-write but for its protected entries (`.git`, `.keel`), which are read-only,
 * system directories read-only, a private /tmp and HOME, and nothing else of the host. When the
 * command's first process ends, or the call is stopped, every process in the sandbox is killed; a
 * command cannot leave one behind, nor survive the worker.
 */
export async function runSandboxed(
  command: Command,
  settings: SandboxSettings,
  context: ToolContext,
  charLimit: number,
): Promise<string> {
  // Started through a shell that joins the cgroups, a missing bubblewrap would show as the shell's error.
  await access(settings.bwrap, fsConstants.X_OK).catch((error: NodeJS.ErrnoException) => {
    throw new ToolError(`Could not start bubblewrap (${settings.bwrap}): ${error.code ?? error.message}`);
  });
  const before = await protectedRootNames(command.workspace);
  const entries = await openProtectedEntries(command.workspace, MAX_PROTECTED);
  let cgroup: CommandCgroup | undefined;
  let setAside: string[] | undefined;
  try {
    if (settings.cgroups.kind !== 'none')
      cgroup = await settings.cgroups.create({
        memoryBytes: bytes(settings.limits.memoryMb),
        processes: settings.limits.processes,
      });
    const observation = await runWithProtected(command, settings, context, charLimit, entries, cgroup);
    setAside = await setAsideCreatedProtected(command.workspace, before);
    return setAside.length === 0 ? observation : `${setAside.join('\n')}\n${observation}`;
  } finally {
    // A call that failed or was cancelled (its processes are gone by now) is cleaned up the same.
    if (setAside === undefined)
      await setAsideCreatedProtected(command.workspace, before).catch(() => undefined);
    await Promise.all(entries.map((entry) => entry.handle.close()));
    await cgroup?.remove();
  }
}

/** {@link runSandboxed} with the protected entries held open. */
async function runWithProtected(
  command: Command,
  settings: SandboxSettings,
  context: ToolContext,
  charLimit: number,
  entries: readonly ProtectedEntry[],
  cgroup: CommandCgroup | undefined,
): Promise<string> {
  const home = command.home ?? SANDBOX_HOME;
  const sandbox = sandboxArguments({
    mounts: settings.mounts,
    root: command.root,
    cwd: command.cwd.path,
    protected: entries.map((entry) => entry.path),
    home,
    network: settings.network,
    limits: settings.limits,
    memoryByCgroup: cgroup !== undefined,
    program: command.program,
    args: command.args,
  });
  const user = await sandboxUser(command.root);
  if (user !== undefined && settings.setpriv === undefined)
    throw new ToolError(
      `run_command would run ${command.program} as the workspace's owner (uid ${user.uid}) and needs setpriv ` +
        '(util-linux) on the worker for that; it is not installed',
    );
  // Root's privileges are dropped before bubblewrap starts, so its namespaces are an ordinary user's.
  const bubblewrap =
    user === undefined
      ? [settings.bwrap, ...sandbox]
      : [
          settings.setpriv!,
          `--reuid=${user.uid}`,
          `--regid=${user.gid}`,
          '--clear-groups',
          '--',
          settings.bwrap,
          ...sandbox,
        ];
  const [file, args] =
    cgroup === undefined
      ? [bubblewrap[0]!, bubblewrap.slice(1)]
      : [
          '/bin/sh',
          [
            '-c',
            JOIN_CGROUPS,
            'keel-cgroup',
            String(cgroup.procsFiles.length),
            ...cgroup.procsFiles,
            ...bubblewrap,
          ],
        ];
  // readAll never rejects (a failed stream resolves with what it had), so waiting for it later is safe.
  // eslint-disable-next-line keel/no-unawaited-promise-variable
  let status: Promise<string> = Promise.resolve('');
  const disk = await watchDisk(command.root, bytes(settings.limits.workspaceMb));
  const outcome = await runProcess(
    {
      file,
      args,
      // bubblewrap passes its environment on; it holds nothing else, so no process in there shows more.
      env: { ...command.env, HOME: home },
      stdin: command.stdin,
      seconds: command.seconds,
      detached: true, // Its own session: a Ctrl-C meant for the worker does not cut the command short.
      // Descriptors STATUS_FD, INFO_FD, CWD_FD, then PROTECTED_FD on, in that order.
      extraStdio: ['pipe', 'pipe', command.cwd.handle.fd, ...entries.map((entry) => entry.handle.fd)],
      name: command.program,
      closeWaitMs: SANDBOX_CLOSE_WAIT_MS,
      overLimit: disk.exceeded,
    },
    context,
    charLimit,
    (child) => {
      // eslint-disable-next-line keel/no-unawaited-promise-variable -- readAll never rejects
      status = readAll(child.stdio[STATUS_FD] as Readable);
      return sandboxHalt(child);
    },
  ).finally(() => disk.stop());
  const launcherStatus = await status;
  if (outcome.status.code === LAUNCHER_REFUSED) {
    const refusal = launcherRefusal(launcherStatus, command);
    if (refusal !== undefined) throw new ToolError(refusal);
  }
  if (!launcherStatus.includes('r') && outcome.stoppedBy === undefined) {
    // bubblewrap failed before the program could start: its own message says why.
    const reason = outcome.stderr.head.trim().split('\n')[0] || `exit code ${outcome.status.code}`;
    throw new ToolError(`The sandbox for ${command.program} did not start: ${reason}`);
  }
  const hits = {
    ...((await cgroup?.hits()) ?? { memory: false, processes: false }),
    workspace: outcome.stoppedBy === 'limit' && disk.hit(),
  };
  const notes = limitNotes(
    settings.limits,
    hits,
    outcome.status.code,
    outcome.stderr.render('stderr', charLimit),
  );
  return report(
    { ...outcome, seconds: command.seconds, signalsAsCodes: true, reportsLeftovers: false, notes },
    charLimit,
  );
}

/**
 * What the launcher refused, from the status it wrote (`c`: the cwd moved, `p<path>`: a protected path
 * moved, `f<n>`: an inherited descriptor), or undefined when it refused nothing (the program itself
 * exited with that code).
 */
function launcherRefusal(status: string, command: Command): string | undefined {
  const detail = status.slice(1);
  switch (status.charAt(0)) {
    case 'c':
      return `cwd ${command.cwd.path} changed while the command was starting (it was replaced or moved); nothing ran`;
    case 'p':
      return (
        `protected path ${JSON.stringify(command.workspace.relative(detail))} changed while the command was ` +
        'starting (it was replaced or moved); nothing ran'
      );
    case 'f':
      return (
        `run_command refused to run ${command.program}: the worker holds descriptor ${detail}, inherited ` +
        'from what started it, which names a file, directory or socket of the host and would reach the ' +
        'sandbox; start the worker without it'
      );
    default:
      return undefined;
  }
}

/** Stops a sandbox that is still running, or waits for one whose command ended to be gone. */
function sandboxHalt(child: ChildProcess): Halt {
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  // Neither readAll nor parseSandboxInfo throws, so this cannot reject while nobody awaits it yet.
  // eslint-disable-next-line keel/no-unawaited-promise-variable
  const info = readAll(child.stdio[INFO_FD] as Readable).then(parseSandboxInfo);
  return async (running) => {
    // The information comes as soon as the namespaces exist; a bubblewrap that failed earlier has none.
    const handle: SandboxHandle = {
      info: await Promise.race([info, exit.then(() => info)]),
      exited: () => exited,
      killBubblewrap: () => send(child.pid!, 'SIGKILL'),
    };
    if (running) return stopSandbox(handle);
    await sandboxGone(handle);
    return [];
  };
}

/** Everything a stream delivers until it ends, as text (empty if it fails). */
function readAll(stream: Readable): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.once('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}
