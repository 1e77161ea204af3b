import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, readdir, readFile, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { MAX_TOOL_TIMEOUT_SECONDS } from '../../contract/defaults.js';
import { defineTool, ToolDefinitionError } from '../define-tool.js';
import type { Tool, ToolContext } from '../define-tool.js';
import { ToolError } from '../tool-error.js';

/*
 * There is deliberately no shell mode. An allow-list checked on the first word of a shell string is no
 * boundary: `git status; curl … | sh`, `ls $(…)`, `ls > ~/.profile` or `PATH=/tmp/x git` all start with
 * an allowed word, and parsing shell grammar well enough to check every command is a losing game. An
 * operator who wants a shell can allow `sh` itself, which states the real power plainly.
 */

/** Options an operator gives {@link createRunCommandTool}. */
export interface RunCommandOptions {
  /** Programs the model may run: names looked up on PATH at call time (`git`) or absolute paths. */
  allow: readonly string[];
  /** Longest a command may run before its processes are killed, and the most a call may ask for. Default 120. */
  timeoutSeconds?: number;
  /** Characters of stdout and stderr together that the model sees; head and tail are kept. Default 10 000. */
  outputCharLimit?: number;
  /** Variables added to the clean environment (they may override HOME, LANG, TERM or PATH). */
  environment?: Readonly<Record<string, string>>;
}

const DEFAULT_TIMEOUT_SECONDS = 120;
/** Below the run's default output cap (12 000), so the executor does not cut the tail off again. */
const DEFAULT_OUTPUT_CHAR_LIMIT = 10_000;
/** How long processes get to exit after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 2_000;
/** How long to wait for processes to die after SIGKILL (it cannot be ignored, but exiting takes time). */
const KILL_WAIT_MS = 2_000;
/** How long to wait for the output pipes to close once the process group is gone. */
const CLOSE_WAIT_MS = 1_000;
const POLL_MS = 25;
/** Beyond the command's own timeout, so it reports a timeout itself (with the output so far). */
const STOP_ALLOWANCE_SECONDS = Math.ceil((KILL_GRACE_MS + KILL_WAIT_MS + CLOSE_WAIT_MS) / 1000) + 1;

/** The `run_command` tool, limited to the programs in `options.allow`. Off unless an operator builds it. */
export function createRunCommandTool(options: RunCommandOptions): Tool {
  const allow = checkAllowList(options.allow);
  const timeout = options.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  if (!(timeout > 0 && timeout <= MAX_TOOL_TIMEOUT_SECONDS - STOP_ALLOWANCE_SECONDS)) {
    throw new ToolDefinitionError(
      `run_command: timeoutSeconds must be positive and below a day, not ${timeout}`,
    );
  }
  const outputCharLimit = options.outputCharLimit ?? DEFAULT_OUTPUT_CHAR_LIMIT;
  if (!(Number.isInteger(outputCharLimit) && outputCharLimit >= 100)) {
    throw new ToolDefinitionError(`run_command: outputCharLimit must be an integer of at least 100`);
  }
  const environment = { ...options.environment };
  for (const [name, value] of Object.entries(environment)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || value.includes('\0')) {
      throw new ToolDefinitionError(`run_command: environment variable ${JSON.stringify(name)} is malformed`);
    }
  }
  const names = allow.join(', ');
  return defineTool({
    name: 'run_command',
    description:
      `Run a program in the workspace and read its exit code, stdout and stderr. Allowed programs: ${names}. ` +
      'There is no shell: each element of args reaches the program exactly as written, so pipes, ' +
      'redirection, globs, $VARIABLES, ~ and && do nothing. cwd is relative to the workspace root. ' +
      'A non-zero exit code is a normal result. Long output keeps its start and its end. ' +
      `A command still running after ${timeout} seconds is killed with every process it started.`,
    schema: z.object({
      program: z.string().min(1).describe(`The program to run, one of: ${names}.`),
      args: z.array(z.string()).max(1_000).default([]).describe('Arguments, one per element.'),
      cwd: z.string().default('.').describe('Working directory, relative to the workspace root.'),
      stdin: z
        .string()
        .max(1_000_000)
        .optional()
        .describe('Text for the standard input, which is then closed.'),
      timeoutSeconds: z
        .number()
        .positive()
        .max(timeout)
        .optional()
        .describe(`Seconds before the command is killed; at most ${timeout}.`),
    }),
    timeoutSeconds: timeout + STOP_ALLOWANCE_SECONDS,
    async execute(input, context) {
      context.signal.throwIfAborted();
      if ([input.program, ...input.args].some((text) => text.includes('\0'))) {
        throw new ToolError('program and args must not contain NUL characters');
      }
      const root = context.workspace.root;
      const searchPath = (environment.PATH ?? process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin')
        .split(path.delimiter)
        // A relative entry (`.`) or one inside the workspace would let the model plant programs.
        .filter((directory) => path.isAbsolute(directory) && !isInside(root, path.resolve(directory)));
      const program = await resolveProgram(input.program, allow, searchPath, root);
      const cwd = await context.workspace.resolve(input.cwd);
      if (!(await stat(cwd)).isDirectory()) throw new ToolError(`cwd ${input.cwd} is not a directory`);
      const seconds = input.timeoutSeconds ?? timeout;
      return context.once('run', async () => {
        // A fresh HOME per call: nothing of the worker's, and nothing one run leaves for the next.
        const home = environment.HOME ?? (await mkdtemp(path.join(tmpdir(), 'keel-run-home-')));
        try {
          const variables = { LANG: process.env.LANG ?? 'C.UTF-8', TERM: 'dumb', HOME: home, ...environment };
          const env = { ...variables, PATH: searchPath.join(path.delimiter) };
          return await runProcess(
            { program, args: input.args, cwd, env, stdin: input.stdin, seconds },
            context,
            outputCharLimit,
          );
        } finally {
          if (environment.HOME === undefined) await rm(home, { recursive: true, force: true });
        }
      });
    },
  });
}

function checkAllowList(allow: readonly string[]): string[] {
  if (allow.length === 0) throw new ToolDefinitionError('run_command: the allow-list is empty');
  return allow.map((entry) => {
    const bareName = entry !== '' && entry !== '.' && entry !== '..' && !entry.includes('/');
    if ((!bareName && !path.isAbsolute(entry)) || entry.includes('\0')) {
      throw new ToolDefinitionError(
        `run_command: allow-list entry ${JSON.stringify(entry)} must be a program name or an absolute path`,
      );
    }
    return bareName ? entry : path.normalize(entry);
  });
}

/** The absolute path to run for `requested`, refused unless it is exactly what an allowed entry names. */
async function resolveProgram(
  requested: string,
  allow: readonly string[],
  searchPath: readonly string[],
  root: string,
): Promise<string> {
  const list = allow.join(', ');
  const refuse = (): ToolError =>
    new ToolError(
      `run_command may run only these programs: ${list}. ${JSON.stringify(requested)} is not one of them.`,
    );
  let candidate: string | undefined;
  if (requested.includes('/')) {
    if (!path.isAbsolute(requested)) throw refuse();
    candidate = path.normalize(requested);
  } else if (allow.includes(requested)) {
    candidate = await findOnPath(requested, searchPath);
  } else {
    candidate = allow.find((entry) => path.isAbsolute(entry) && path.basename(entry) === requested);
    if (candidate === undefined) throw refuse();
  }
  // Compared as paths, not as resolved files: a multi-call binary (busybox) is one file with many faces.
  const allowed = await Promise.all(
    allow.map((entry) => (path.isAbsolute(entry) ? Promise.resolve(entry) : findOnPath(entry, searchPath))),
  );
  if (candidate === undefined)
    throw new ToolError(`${requested} is allowed but is not installed on the worker`);
  if (!allowed.includes(candidate)) throw refuse();
  if (!(await isExecutableFile(candidate))) {
    throw new ToolError(`${requested} is allowed but ${candidate} is not an executable file on the worker`);
  }
  if (isInside(root, candidate) || isInside(root, await realpath(candidate))) {
    throw new ToolError(
      `${requested} is refused: it lies inside the workspace, where the agent can change it`,
    );
  }
  return candidate;
}

async function findOnPath(name: string, searchPath: readonly string[]): Promise<string | undefined> {
  for (const directory of searchPath) {
    const candidate = path.join(directory, name);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

function isInside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root + path.sep);
}

interface Invocation {
  program: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  stdin: string | undefined;
  seconds: number;
}

/** Runs the program in its own process group and reports how it ended; kills the group when told to stop. */
async function runProcess(invocation: Invocation, context: ToolContext, charLimit: number): Promise<string> {
  const child = spawn(invocation.program, invocation.args, {
    cwd: invocation.cwd,
    env: invocation.env,
    detached: true, // Its own process group (and session), so stopping it reaches everything it started.
    stdio: [invocation.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  const failure = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', resolve);
  });
  if (failure !== undefined) {
    const code = (failure as NodeJS.ErrnoException).code ?? failure.message;
    throw new ToolError(`Could not start ${path.basename(invocation.program)}: ${code}`);
  }
  const group = child.pid!;
  let status: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      status = { code, signal };
      resolve();
    }),
  );
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const stdout = new Capture(charLimit);
  const stderr = new Capture(charLimit);
  const beat = (): void => context.heartbeat({ stdoutBytes: stdout.bytes, stderrBytes: stderr.bytes });
  child.stdout?.on('data', (chunk: Buffer) => (stdout.add(chunk), beat()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr.add(chunk), beat()));
  if (child.stdin) {
    child.stdin.on('error', () => undefined); // EPIPE: the program exited without reading all of it.
    child.stdin.end(invocation.stdin);
  }
  beat();

  let reason: 'timeout' | 'cancelled' | undefined;
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const timer = setTimeout(() => ((reason ??= 'timeout'), stop()), invocation.seconds * 1000);
  const onAbort = (): void => ((reason ??= 'cancelled'), stop());
  context.signal.addEventListener('abort', onAbort, { once: true });
  if (context.signal.aborted) onAbort();
  try {
    await Promise.race([exited, stopped]);
  } finally {
    clearTimeout(timer);
    context.signal.removeEventListener('abort', onAbort);
  }
  const running = status === undefined;
  // Also after a normal exit: processes it left in the background do not outlive the call.
  const signals = await stopProcessGroup(group);
  // A program that finished just as the stop came was not stopped.
  const stoppedBy = running && signals.length > 0 ? reason : undefined;
  await exited;
  const complete = await settlesWithin(closed, CLOSE_WAIT_MS);
  if (!complete) {
    child.stdout?.destroy();
    child.stderr?.destroy();
  }
  stdout.end();
  stderr.end();
  return report({
    status: status!,
    stoppedBy,
    seconds: invocation.seconds,
    signals,
    complete,
    stdout,
    stderr,
    charLimit,
  });
}

interface Ending {
  status: { code: number | null; signal: NodeJS.Signals | null };
  stoppedBy: 'timeout' | 'cancelled' | undefined;
  seconds: number;
  signals: readonly NodeJS.Signals[];
  complete: boolean;
  stdout: Capture;
  stderr: Capture;
  charLimit: number;
}

function report(ending: Ending): string {
  const lines: string[] = [];
  const killed = `killed (${ending.signals.join(', then ')})`;
  if (ending.stoppedBy === 'timeout')
    lines.push(
      `stopped: still running after ${ending.seconds} second${ending.seconds === 1 ? '' : 's'}, so it was ${killed} with every process it started`,
    );
  else if (ending.stoppedBy === 'cancelled')
    lines.push(`stopped: the call was cancelled, so it was ${killed} with every process it started`);
  else if (ending.signals.length > 0)
    lines.push(`note: it left processes running in the background; they were ${killed}`);
  const { code, signal } = ending.status;
  lines.push(code !== null ? `exit code: ${code}` : `exit: killed by signal ${signal}`);
  if (!ending.complete)
    lines.push('note: output may be incomplete: a process that left its process group kept it open');
  const [outShare, errShare] = shares(ending.stdout.size, ending.stderr.size, ending.charLimit);
  lines.push(ending.stdout.render('stdout', outShare), ending.stderr.render('stderr', errShare));
  return lines.join('\n');
}

/** Splits the character budget: each stream gets what it needs, or half when both need more. */
function shares(stdout: number, stderr: number, limit: number): [number, number] {
  const half = Math.floor(limit / 2);
  if (stdout + stderr <= limit) return [stdout, stderr];
  if (stdout <= half) return [stdout, limit - stdout];
  if (stderr <= half) return [limit - stderr, stderr];
  return [half, limit - half];
}

/** One output stream, held in bounded memory: its first and last `keep` characters and its size. */
class Capture {
  bytes = 0;
  characters = 0;
  binary = false;
  #head = '';
  #tail = '';
  readonly #decoder = new StringDecoder('utf8');

  constructor(private readonly keep: number) {}

  /** Characters the rendered text needs (none for binary output, which becomes a notice). */
  get size(): number {
    return this.binary ? 0 : this.characters;
  }

  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (chunk.includes(0)) this.binary = true;
    this.#append(this.#decoder.write(chunk));
  }

  /** Decodes what is left of a character split across the last chunk; call once, after the stream ended. */
  end(): void {
    this.#append(this.#decoder.end());
  }

  /** The stream as a report section, cut to `budget` characters with its head and tail kept. */
  render(name: string, budget: number): string {
    if (this.binary) return `${name}: (binary output, ${this.bytes} bytes, not shown)`;
    if (this.characters === 0) return `${name}: (empty)`;
    let text = this.#head;
    if (this.characters > budget) {
      const head = atLineEnd(cutEnd(this.#head, Math.ceil(budget / 2)));
      const tail = atLineStart(cutStart(this.#tail, Math.floor(budget / 2)));
      text = `${head}\n… ${this.characters - head.length - tail.length} characters omitted …\n${tail}`;
    }
    return `${name}:\n${text.endsWith('\n') ? text.slice(0, -1) : text}`;
  }

  #append(text: string): void {
    this.characters += text.length;
    if (this.#head.length < this.keep) this.#head += text.slice(0, this.keep - this.#head.length);
    this.#tail = text.length >= this.keep ? text.slice(-this.keep) : (this.#tail + text).slice(-this.keep);
  }
}

/** The first `length` characters, not splitting a surrogate pair. */
function cutEnd(text: string, length: number): string {
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}

/** `text` up to its last line break (dropped), unless that would keep less than half of it. */
function atLineEnd(text: string): string {
  const end = text.lastIndexOf('\n');
  return end >= text.length / 2 ? text.slice(0, end) : text;
}

/** `text` from after its first line break, unless that would keep less than half of it. */
function atLineStart(text: string): string {
  const start = text.indexOf('\n');
  return start >= 0 && start < text.length / 2 ? text.slice(start + 1) : text;
}

/** The last `length` characters, not splitting a surrogate pair. */
function cutStart(text: string, length: number): string {
  if (length === 0) return '';
  const tail = text.slice(-length);
  const code = tail.charCodeAt(0);
  return code >= 0xdc00 && code <= 0xdfff ? tail.slice(1) : tail;
}

/**
 * Stops every process in the group (and the session) led by `group`: SIGTERM, then SIGKILL for what
 * is left after a grace. Returns the signals it had to send: none when nothing was running.
 */
async function stopProcessGroup(group: number): Promise<NodeJS.Signals[]> {
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

function send(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // ESRCH: already gone. EPERM: it changed user (setuid); nothing more we can do.
  }
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
