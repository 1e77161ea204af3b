import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { MAX_TOOL_TIMEOUT_SECONDS } from '../../contract/defaults.js';
import { defineTool, ToolDefinitionError } from '../define-tool.js';
import type { Tool } from '../define-tool.js';
import { ToolError } from '../tool-error.js';
import { inWorkspace, workspaceOpener } from '../workspace-source.js';
import type { WorkspaceSource } from '../workspace-source.js';
import { checkAllowList, findOnPath, resolveProgram } from './run-command/allow-list.js';
import { isInside } from '../path-inside.js';
import type { Command } from './run-command/command.js';
import { openWorkingDirectory } from './run-command/open-cwd.js';
import { findCgroups } from './run-command/cgroups.js';
import type { Cgroups } from './run-command/cgroups.js';
import { commandLimits } from './run-command/limits.js';
import type { CommandLimits } from './run-command/limits.js';
import { runSandboxed } from './run-command/run-sandboxed.js';
import type { SandboxSettings } from './run-command/run-sandboxed.js';
import { runUnsandboxed } from './run-command/run-unsandboxed.js';
import { sandboxMounts, visibleRoots } from './run-command/sandbox-mounts.js';
import { KILL_GRACE_MS, KILL_WAIT_MS, SANDBOX_CLOSE_WAIT_MS } from './run-command/signals.js';

/*
 * There is deliberately no shell mode. An allow-list checked on the first word of a shell string is no
 * boundary: `git status; curl … | sh`, `ls $(…)`, `ls > ~/.profile` or `PATH=/tmp/x git` all start with
 * an allowed word, and parsing shell grammar well enough to check every command is a losing game. An
 * operator who wants a shell can allow `sh` itself, which states the real power plainly.
 */

/** How commands are isolated: in a bubblewrap sandbox (the default), or `off`, only by operator choice. */
export const RunCommandSandbox = z.enum(['bwrap', 'off']);
/** How commands are isolated: in a bubblewrap sandbox (the default), or `off`, only by operator choice. */
export type RunCommandSandbox = z.infer<typeof RunCommandSandbox>;

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
  /** `bwrap` (default): every command in its own sandbox. `off`: plain child processes, no isolation. */
  sandbox?: RunCommandSandbox;
  /** Where bubblewrap is; default `bwrap` on the worker's PATH. */
  bwrapPath?: string;
  /** Let sandboxed commands use the worker's network. Default false: no network at all. */
  network?: boolean;
  /** Host directories shown read-only in the sandbox besides the system ones (a toolchain in /opt). */
  readOnlyPaths?: readonly string[];
  /** What each sandboxed command may use (memory, processes, CPU time, file size, /tmp); defaults in docs/safety.md. */
  limits?: Partial<CommandLimits>;
}

const DEFAULT_TIMEOUT_SECONDS = 120;
/** Below the run's default output cap (12 000), so the executor does not cut the tail off again. */
const DEFAULT_OUTPUT_CHAR_LIMIT = 10_000;
/** Beyond the command's own timeout, so it reports a timeout itself (with the output so far). */
const STOP_ALLOWANCE_SECONDS = Math.ceil((KILL_GRACE_MS + KILL_WAIT_MS + SANDBOX_CLOSE_WAIT_MS) / 1000) + 2;

/**
 * The `run_command` tool, limited to the programs in `options.allow`, running commands in the
 * workspace of `source`: the file tools' own (`fileTools(…).workspace`), an opened `Workspace`, or a
 * `{ root }` to open on first use. Off unless an operator builds it.
 */
export function createRunCommandTool(options: RunCommandOptions, source: WorkspaceSource): Tool {
  const open = workspaceOpener(source);
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
  const limits = commandLimits(options.limits);
  const sandbox = sandboxSetup(options, environment.HOME, limits);
  const names = allow.join(', ');
  return defineTool({
    name: 'run_command',
    description:
      `Run a program in the workspace and read its exit code, stdout and stderr. Allowed programs: ${names}. ` +
      'There is no shell: each element of args reaches the program exactly as written, so pipes, ' +
      'redirection, globs, $VARIABLES, ~ and && do nothing. cwd is relative to the workspace root. ' +
      'A non-zero exit code is a normal result. Long output keeps its start and its end. ' +
      (sandbox === undefined
        ? ''
        : `Commands run in a sandbox that sees only the workspace and read-only system directories, with an empty HOME and /tmp${options.network === true ? '' : ' and no network'}; every process a command starts ends with it. ` +
          `A command may use ${limits.memoryMb} MB of memory, ${limits.processes} processes, ${limits.tmpMb} MB in /tmp and ${limits.workspaceMb} MB of new disk space in the workspace. `) +
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
    execute: (input, context) =>
      inWorkspace(open, async (workspace) => {
        context.signal.throwIfAborted();
        if ([input.program, ...input.args].some((text) => text.includes('\0'))) {
          throw new ToolError('program and args must not contain NUL characters');
        }
        const root = workspace.root;
        const searchPath = (environment.PATH ?? process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin')
          .split(path.delimiter)
          // A relative entry (`.`) or one inside the workspace would let the model plant programs.
          .filter((directory) => path.isAbsolute(directory) && !isInside(root, path.resolve(directory)));
        const program = await resolveProgram(input.program, allow, searchPath, root);
        const settings = sandbox === undefined ? undefined : await sandbox.settings(input.program, program);
        const cwd = await openWorkingDirectory(workspace, input.cwd);
        try {
          const variables = { LANG: process.env.LANG ?? 'C.UTF-8', TERM: 'dumb', ...environment };
          const command: Command = {
            program,
            args: input.args,
            cwd,
            root,
            workspace,
            env: { ...variables, PATH: searchPath.join(path.delimiter) },
            home: environment.HOME,
            stdin: input.stdin,
            seconds: input.timeoutSeconds ?? timeout,
          };
          return await context.once('run', () =>
            settings === undefined
              ? runUnsandboxed(command, context, outputCharLimit)
              : runSandboxed(command, settings, context, outputCharLimit),
          );
        } finally {
          await cwd.handle.close();
        }
      }),
  });
}

/** The sandbox's checked settings, found once per tool; undefined when the operator turned it off. */
function sandboxSetup(
  options: RunCommandOptions,
  home: string | undefined,
  limits: CommandLimits,
): { settings(requested: string, program: string): Promise<SandboxSettings> } | undefined {
  if ((options.sandbox ?? 'bwrap') === 'off') return undefined;
  const absolute = (what: string, entry: string): string => {
    if (!path.isAbsolute(entry) || entry.includes('\0') || path.normalize(entry) === '/') {
      throw new ToolDefinitionError(`run_command: ${what} ${JSON.stringify(entry)} must be an absolute path`);
    }
    return path.normalize(entry);
  };
  const bwrapPath = options.bwrapPath === undefined ? undefined : absolute('bwrapPath', options.bwrapPath);
  const readOnly = (options.readOnlyPaths ?? []).map((entry) => absolute('read-only path', entry));
  if (home !== undefined) absolute('HOME', home);
  let found:
    | Promise<{
        mounts: SandboxSettings['mounts'];
        roots: string[];
        bwrap: string | undefined;
        setpriv: string | undefined;
        cgroups: Cgroups;
      }>
    | undefined;
  const find = async () => {
    const mounts = await sandboxMounts(readOnly);
    const bwrap =
      bwrapPath ?? (await findOnPath('bwrap', (process.env.PATH ?? '/usr/bin:/bin').split(path.delimiter)));
    const setpriv = await findOnPath('setpriv', ['/usr/bin', '/bin', '/usr/sbin', '/sbin']);
    return { mounts, roots: await visibleRoots(mounts), bwrap, setpriv, cgroups: await findCgroups() };
  };
  return {
    async settings(requested, program) {
      if (found === undefined) {
        found = find();
        // A lookup that failed (say, /proc unreadable for a moment) is tried again by the next call.
        found.catch(() => (found = undefined));
      }
      const { mounts, roots, bwrap, setpriv, cgroups } = await found;
      if (bwrap === undefined) {
        throw new ToolError(
          'run_command needs bubblewrap (bwrap) to sandbox commands, and it is not installed on the worker',
        );
      }
      const real = await realpath(program);
      if (!roots.some((root) => isInside(root, real))) {
        throw new ToolError(
          `${requested} is allowed but ${program} lies outside the directories the sandbox shows ` +
            `(${mounts.map((mount) => mount.path).join(', ')}); an operator can add its directory to KEEL_RUN_COMMAND_READ_ONLY_PATHS`,
        );
      }
      return { bwrap, mounts, network: options.network ?? false, limits, cgroups, setpriv };
    },
  };
}
