import { spawn } from 'node:child_process';
import type { ChildProcess, StdioOptions } from 'node:child_process';
import path from 'node:path';
import type { ToolContext } from '../../define-tool.js';
import { ToolError } from '../../tool-error.js';
import { Capture } from './capture.js';

/** A process to start for one call. */
export interface Launch {
  file: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd?: string;
  stdin: string | undefined;
  seconds: number;
  /** Its own process group and session (the unsandboxed way to reach what it starts). */
  detached: boolean;
  /** Descriptors 3 and up: `'pipe'`, or a descriptor of the worker's to pass on. */
  extraStdio: ReadonlyArray<'pipe' | number>;
  /** The program's name, for "Could not start …". */
  name: string;
  /** How long the output may take to end once every process is gone. */
  closeWaitMs: number;
  /** Resolves when the command has gone over a limit that the worker watches, to stop it then. */
  overLimit?: Promise<void>;
}

/**
 * How the caller stops what it started: `running` says whether the process was still running when
 * the call ended (timeout or cancel) or had exited. Returns the signals sent; resolves once every
 * process is gone.
 */
export type Halt = (running: boolean) => Promise<NodeJS.Signals[]>;

/** What {@link runProcess} saw. */
export interface Outcome {
  status: { code: number | null; signal: NodeJS.Signals | null };
  stoppedBy: 'timeout' | 'cancelled' | 'limit' | undefined;
  signals: NodeJS.Signals[];
  complete: boolean;
  stdout: Capture;
  stderr: Capture;
}

/**
 * Starts `launch`, feeds stdin, captures stdout and stderr in bounded memory with heartbeats, and
 * ends it on timeout or cancellation through the {@link Halt} that `attach` returns for the child.
 */
export async function runProcess(
  launch: Launch,
  context: ToolContext,
  charLimit: number,
  attach: (child: ChildProcess) => Halt,
): Promise<Outcome> {
  const stdio: StdioOptions = [
    launch.stdin === undefined ? 'ignore' : 'pipe',
    'pipe',
    'pipe',
    ...launch.extraStdio,
  ];
  const child = spawn(launch.file, launch.args, {
    env: launch.env,
    detached: launch.detached,
    stdio,
    ...(launch.cwd === undefined ? {} : { cwd: launch.cwd }),
  });
  const failure = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', resolve);
  });
  if (failure !== undefined) {
    const code = (failure as NodeJS.ErrnoException).code ?? failure.message;
    throw new ToolError(`Could not start ${path.basename(launch.name)}: ${code}`);
  }
  let status: Outcome['status'] | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      status = { code, signal };
      resolve();
    }),
  );
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const halt = attach(child);
  const stdout = new Capture(charLimit);
  const stderr = new Capture(charLimit);
  const beat = (): void => context.heartbeat({ stdoutBytes: stdout.bytes, stderrBytes: stderr.bytes });
  child.stdout?.on('data', (chunk: Buffer) => (stdout.add(chunk), beat()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr.add(chunk), beat()));
  if (child.stdin) {
    child.stdin.on('error', () => undefined); // EPIPE: the program exited without reading all of it.
    child.stdin.end(launch.stdin);
  }
  beat();

  let reason: Outcome['stoppedBy'];
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const timer = setTimeout(() => ((reason ??= 'timeout'), stop()), launch.seconds * 1000);
  const onAbort = (): void => ((reason ??= 'cancelled'), stop());
  context.signal.addEventListener('abort', onAbort, { once: true });
  if (context.signal.aborted) onAbort();
  launch.overLimit?.then(
    () => ((reason ??= 'limit'), stop()),
    () => undefined,
  );
  try {
    await Promise.race([exited, stopped]);
  } finally {
    clearTimeout(timer);
    context.signal.removeEventListener('abort', onAbort);
  }
  const running = status === undefined;
  const signals = await halt(running);
  // A program that finished just as the stop came was not stopped.
  const stoppedBy = running && signals.length > 0 ? reason : undefined;
  await exited;
  const complete = await settlesWithin(closed, launch.closeWaitMs);
  if (!complete) for (const stream of child.stdio) stream?.destroy();
  stdout.end();
  stderr.end();
  return { status: status!, stoppedBy, signals, complete, stdout, stderr };
}

/** Whether `promise` settles within `ms` milliseconds. */
async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}
