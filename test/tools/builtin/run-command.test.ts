import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Observation } from '../../../src/contract/observation.js';
import { createSanitizer } from '../../../src/safety/sanitize.js';
import { createRunCommandTool } from '../../../src/tools/builtin/run-command.js';
import type { RunCommandOptions } from '../../../src/tools/builtin/run-command.js';
import { ToolDefinitionError } from '../../../src/tools/define-tool.js';
import type { Tool } from '../../../src/tools/define-tool.js';
import { executeToolCall } from '../../../src/tools/executor.js';
import { MemoryIdempotencyStore } from '../../../src/tools/idempotency.js';
import type { IdempotencyStore } from '../../../src/tools/idempotency.js';
import { ToolRegistry } from '../../../src/tools/registry.js';
import { Workspace } from '../../../src/tools/workspace.js';
import { silentLogger } from '../../support/loggers.js';
import { directContext } from '../../support/run-command-call.js';
import { processesWith, sleepMarker } from '../../support/run-command-processes.js';

/**
 * Layout of every test:
 *   <base>/ws/              the workspace
 *   <base>/ws/sub/note.txt
 *   <base>/outside/         a directory the model must not reach
 */
let base: string;
let root: string;
let workspace: Workspace;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'keel-run-command-')));
  root = path.join(base, 'ws');
  await mkdir(path.join(root, 'sub'), { recursive: true });
  await writeFile(path.join(root, 'sub', 'note.txt'), 'note');
  await mkdir(path.join(base, 'outside'));
  workspace = await Workspace.open(root);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const ALLOW = ['echo', 'sh', 'ls', 'cat', 'printenv', 'printf', 'seq'];

/** Runs one run_command call through the executor, as the worker would. */
function run(
  args: Record<string, unknown>,
  options: Partial<RunCommandOptions> = {},
  idempotencyStore: IdempotencyStore = new MemoryIdempotencyStore(),
): Promise<Observation> {
  const tool = createRunCommandTool({ allow: ALLOW, ...options }, workspace);
  return executeToolCall(
    {
      call: { callId: 'call_1', name: 'run_command', argumentsJson: JSON.stringify(args) },
      idempotencyKey: 'run:call_1',
      outputCharLimit: 100_000,
    },
    {
      registry: new ToolRegistry([tool]),
      sanitizer: createSanitizer({ paths: [{ path: workspace.root, label: '.' }] }),
      logger: silentLogger,
      idempotencyStore,
    },
  );
}

/** The output of an ok observation; fails the test on any other. */
function output(observation: Observation): string {
  expect(observation).toMatchObject({ ok: true });
  return observation.ok ? observation.output : '';
}

/** The message of a tool_error observation; fails the test on any other. */
function refusal(observation: Observation): string {
  expect(observation).toMatchObject({ ok: false, error: 'tool_error' });
  return observation.ok ? '' : observation.message;
}

/**
 * Whether `pid` is a running process. A zombie counts as gone: it is dead, waiting for init to reap
 * it, which some container inits do late.
 */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  if (!existsSync('/proc/self/stat')) return true;
  try {
    const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]$/.test(line.slice(line.lastIndexOf(')') + 2).split(' ')[0] ?? '');
  } catch {
    return false;
  }
}

/** A shell that ignores SIGTERM, starts two children that inherit that (marked), says so and waits. */
function stubborn(marker: string): string {
  return `trap "" TERM; sleep ${marker} & sleep ${marker} & echo started; wait`;
}

/** The same, printing the pids (host pids: only an unsandboxed command sees those). */
const STUBBORN_PIDS = 'trap "" TERM; sleep 300 & a=$!; sleep 300 & b=$!; echo "$$ $a $b"; wait';

function pidsIn(text: string): number[] {
  const match = /stdout:\n(\d+) (\d+) (\d+)/.exec(text);
  expect(match, text).not.toBeNull();
  return match!.slice(1).map(Number);
}

/** Where `name` is found on the test's PATH, as the tool resolves it. */
function onPath(name: string): string {
  for (const directory of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(directory, name);
    if (path.isAbsolute(directory) && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  throw new Error(`${name} is not on the PATH`);
}

describe('run_command', () => {
  it('runs an allowed program with its arguments and reports the exit code and output', async () => {
    expect(output(await run({ program: 'echo', args: ['hello', 'world'] }))).toBe(
      'exit code: 0\nstdout:\nhello world\nstderr: (empty)',
    );
  });

  it('reports a non-zero exit as output the model reads, with stdout and stderr apart', async () => {
    const observation = await run({ program: 'sh', args: ['-c', 'echo out; echo err >&2; exit 3'] });
    expect(output(observation)).toBe('exit code: 3\nstdout:\nout\nstderr:\nerr');
  });

  it('reports a program killed by a signal, as the exit code the sandbox passes on', async () => {
    const observation = await run({ program: 'sh', args: ['-c', 'kill -USR1 $$'] });
    expect(output(observation)).toBe(
      'exit code: 138 (killed by signal SIGUSR1, or it exited with 138)\nstdout: (empty)\nstderr: (empty)',
    );
    const unsandboxed = await run({ program: 'sh', args: ['-c', 'kill -USR1 $$'] }, { sandbox: 'off' });
    expect(output(unsandboxed)).toBe('exit: killed by signal SIGUSR1\nstdout: (empty)\nstderr: (empty)');
  });

  it('refuses a program that is not on the allow-list and names the allowed ones', async () => {
    expect(refusal(await run({ program: 'rm', args: ['-rf', '.'] }))).toBe(
      'run_command may run only these programs: echo, sh, ls, cat, printenv, printf, seq. "rm" is not one of them.',
    );
    expect(existsSync(path.join(root, 'sub', 'note.txt'))).toBe(true);
  });

  it('refuses a path to a program that is not the allowed one, even under an allowed name', async () => {
    const marker = path.join(base, 'ran');
    const evil = path.join(base, 'outside', 'echo');
    await writeFile(evil, `#!/bin/sh\ntouch ${marker}\n`);
    await chmod(evil, 0o755);
    for (const program of [evil, '../outside/echo', './echo', 'sub/../echo']) {
      expect(refusal(await run({ program, args: ['x'] }))).toContain(
        'run_command may run only these programs: echo, sh',
      );
    }
    expect(existsSync(marker)).toBe(false);
  });

  it('accepts the absolute path an allowed name resolves to', async () => {
    const echo = onPath('echo');
    expect(output(await run({ program: echo, args: ['by path'] }))).toContain('stdout:\nby path');
  });

  it('refuses an allowed program inside the workspace, where the agent could rewrite it', async () => {
    const script = path.join(root, 'tool.sh');
    await writeFile(script, '#!/bin/sh\necho planted\n');
    await chmod(script, 0o755);
    expect(refusal(await run({ program: 'tool.sh' }, { allow: [script] }))).toBe(
      'tool.sh is refused: it lies inside the workspace, where the agent can change it',
    );
  });

  it('says so when an allowed program is not installed', async () => {
    expect(refusal(await run({ program: 'keel-no-such-program' }, { allow: ['keel-no-such-program'] }))).toBe(
      'keel-no-such-program is allowed but is not installed on the worker',
    );
  });

  it('passes shell metacharacters to the program literally, without running anything', async () => {
    const args = ['hello; touch pwned', '$(touch pwned2)', '`touch pwned3`', '&& touch pwned4', '*', '$HOME'];
    const text = output(await run({ program: 'echo', args }));
    expect(text).toBe(`exit code: 0\nstdout:\n${args.join(' ')}\nstderr: (empty)`);
    expect((await readdir(root)).sort()).toEqual(['sub']);
  });

  it('gives the program a clean environment: no worker secrets, a temporary HOME, and the extras', async () => {
    const planted = {
      OPENAI_API_KEY: 'sk-test-openai-key-123456',
      TEMPORAL_API_KEY: 'temporal-key-123456',
      SOME_SECRET_TOKEN: 'token-123456',
    };
    // Unit test files share a process: what was set before is set again afterwards.
    const before = Object.fromEntries(Object.keys(planted).map((name) => [name, process.env[name]]));
    Object.assign(process.env, planted);
    try {
      const text = output(await run({ program: 'printenv' }, { environment: { KEEL_EXTRA: 'on' } }));
      const variables = new Map(
        text
          .split('\nstdout:\n')[1]!
          .split('\nstderr:')[0]!
          .split('\n')
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      );
      // PWD is bubblewrap's: the working directory it changed into.
      expect([...variables.keys()].sort()).toEqual(['HOME', 'KEEL_EXTRA', 'LANG', 'PATH', 'PWD', 'TERM']);
      for (const [name, value] of Object.entries(planted)) {
        expect(text).not.toContain(name);
        expect(text).not.toContain(value);
      }
      expect(variables.get('TERM')).toBe('dumb');
      expect(variables.get('KEEL_EXTRA')).toBe('on');
      const home = variables.get('HOME')!;
      expect(home).not.toBe(homedir());
      expect(home.startsWith(root)).toBe(false);
      expect(existsSync(home)).toBe(false); // a private tmpfs, never on the host
    } finally {
      for (const [name, value] of Object.entries(before))
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
    }
  });

  it('kills every process, children that ignore SIGTERM included, when the call is aborted', async () => {
    const marker = sleepMarker();
    const tool = createRunCommandTool({ allow: ['sh'] }, workspace);
    const controller = new AbortController();
    const beats: unknown[] = [];
    const text = (await tool.execute(
      { program: 'sh', args: ['-c', stubborn(marker)], cwd: '.' },
      directContext(controller.signal, (details) => {
        beats.push(details);
        // The line is one write: once any stdout arrived, all three processes exist.
        if ((details as { stdoutBytes: number }).stdoutBytes > 0) controller.abort();
      }),
    )) as string;
    expect(text).toMatch(
      /^stopped: the call was cancelled, so it was killed \(SIGTERM, then SIGKILL\) with every process it started\nexit: killed by signal SIGKILL\n/,
    );
    expect(processesWith(marker)).toEqual([]);
    expect(beats).toContainEqual({ stdoutBytes: 0, stderrBytes: 0 });
    expect(beats).toContainEqual({ stdoutBytes: 'started\n'.length, stderrBytes: 0 });
  });

  it('kills every process when the command runs past its timeout, and says so', async () => {
    const marker = sleepMarker();
    const observation = await run({ program: 'sh', args: ['-c', stubborn(marker)], timeoutSeconds: 1 });
    expect(output(observation)).toMatch(
      /^stopped: still running after 1 second, so it was killed \(SIGTERM, then SIGKILL\) with every process it started\n/,
    );
    expect(processesWith(marker)).toEqual([]);
  });

  it('ends processes a finished command left running in the background, with it', async () => {
    const marker = sleepMarker();
    const text = output(await run({ program: 'sh', args: ['-c', `sleep ${marker} & echo started`] }));
    expect(text).toBe('exit code: 0\nstdout:\nstarted\nstderr: (empty)');
    expect(processesWith(marker)).toEqual([]);
  });

  it('refuses a timeout longer than the operator allows', async () => {
    const observation = await run({ program: 'echo', timeoutSeconds: 11 }, { timeoutSeconds: 10 });
    expect(observation).toMatchObject({ ok: false, error: 'invalid_arguments' });
  });

  it('runs in a workspace subdirectory and refuses a cwd outside the workspace', async () => {
    expect(output(await run({ program: 'ls', cwd: 'sub' }))).toBe(
      'exit code: 0\nstdout:\nnote.txt\nstderr: (empty)',
    );
    await symlink(path.join(base, 'outside'), path.join(root, 'out'));
    expect(refusal(await run({ program: 'ls', cwd: '..' }))).toBe(
      'Path refused: ".." leads outside the workspace',
    );
    expect(refusal(await run({ program: 'ls', cwd: base }))).toContain('is absolute');
    expect(refusal(await run({ program: 'ls', cwd: 'out' }))).toContain('symbolic link that leads outside');
    expect(refusal(await run({ program: 'ls', cwd: 'sub/note.txt' }))).toBe(
      'cwd sub/note.txt is not a directory',
    );
  });

  it('keeps the head and the tail of long output, within the limit shared by stdout and stderr', async () => {
    const full = Array.from({ length: 5000 }, (_, index) => `${index + 1}\n`).join('');
    const text = output(
      await run({ program: 'sh', args: ['-c', 'seq 1 5000; echo oops >&2'] }, { outputCharLimit: 1000 }),
    );
    const match =
      /^exit code: 0\nstdout:\n([^…]*)\n… (\d+) characters omitted …\n([^…]*)\nstderr:\noops$/.exec(text);
    expect(match, text).not.toBeNull();
    const [, head, omitted, tail] = match!;
    expect(head!.startsWith('1\n2\n3\n')).toBe(true);
    expect(full.startsWith(`${head}\n`)).toBe(true);
    expect(full.endsWith(`\n${tail}\n`)).toBe(true);
    expect(tail!.endsWith('4999\n5000')).toBe(true);
    // Everything is shown or counted: head, omitted (with the line breaks at the cuts), tail, final break.
    expect(head!.length + Number(omitted) + tail!.length + 1).toBe(full.length);
    expect(head!.length + tail!.length + 'oops\n'.length).toBeLessThanOrEqual(1000);
  });

  it('replaces binary output with a notice', async () => {
    expect(output(await run({ program: 'printf', args: ['A\\000B'] }))).toBe(
      'exit code: 0\nstdout: (binary output, 3 bytes, not shown)\nstderr: (empty)',
    );
  });

  it('passes stdin through, and gives an empty stdin when none is sent', async () => {
    expect(output(await run({ program: 'cat', stdin: 'line one\nline two\n' }))).toBe(
      'exit code: 0\nstdout:\nline one\nline two\nstderr: (empty)',
    );
    expect(output(await run({ program: 'cat' }))).toBe('exit code: 0\nstdout: (empty)\nstderr: (empty)');
  });

  it('runs a command once per call: a retry of the same call gets the first result', async () => {
    const store = new MemoryIdempotencyStore();
    const args = { program: 'sh', args: ['-c', 'echo ran >> ledger.txt; echo done'] };
    const first = output(await run(args, {}, store));
    expect(output(await run(args, {}, store))).toBe(first);
    expect(await readFile(path.join(root, 'ledger.txt'), 'utf8')).toBe('ran\n');
  });

  it('refuses a malformed configuration when it is built', () => {
    const build = (options: RunCommandOptions) => () => createRunCommandTool(options, workspace);
    expect(build({ allow: [] })).toThrow(ToolDefinitionError);
    expect(build({ allow: ['bin/git'] })).toThrow(/must be a program name or an absolute path/);
    expect(build({ allow: ['..'] })).toThrow(/must be a program name or an absolute path/);
    expect(build({ allow: ['git'], timeoutSeconds: 0 })).toThrow(ToolDefinitionError);
    expect(build({ allow: ['git'], environment: { 'A=B': 'x' } })).toThrow(/malformed/);
  });

  it('tells the model which programs it may run', () => {
    const tool: Tool = createRunCommandTool({ allow: ['git', '/usr/bin/ls'], timeoutSeconds: 30 }, workspace);
    expect(tool.name).toBe('run_command');
    expect(tool.description).toContain('Allowed programs: git, /usr/bin/ls.');
    expect(tool.description).toContain('There is no shell');
    expect(tool.timeoutSeconds).toBeGreaterThan(30);
  });
});

describe('run_command without a sandbox (KEEL_RUN_COMMAND_SANDBOX=off)', () => {
  it('kills the whole process group, children that ignore SIGTERM included, when the call is aborted', async () => {
    const tool = createRunCommandTool({ allow: ['sh'], sandbox: 'off' }, workspace);
    const controller = new AbortController();
    const text = (await tool.execute(
      { program: 'sh', args: ['-c', STUBBORN_PIDS], cwd: '.' },
      directContext(controller.signal, (details) => {
        if ((details as { stdoutBytes: number }).stdoutBytes > 0) controller.abort();
      }),
    )) as string;
    expect(text).toMatch(
      /^stopped: the call was cancelled, so it was killed \(SIGTERM, then SIGKILL\) with every process it started\nexit: killed by signal SIGKILL\n/,
    );
    for (const pid of pidsIn(text)) expect(isRunning(pid), `pid ${pid}`).toBe(false);
  });

  it('stops processes a finished command left running in its process group, and says so', async () => {
    const text = output(
      await run({ program: 'sh', args: ['-c', 'sleep 300 & echo $!'] }, { sandbox: 'off' }),
    );
    expect(text).toMatch(
      /^note: it left processes running in the background; they were killed \(SIGTERM\)\n/,
    );
    const pid = Number(/stdout:\n(\d+)/.exec(text)![1]);
    expect(isRunning(pid)).toBe(false);
  });

  it('gives the program a clean environment and a temporary HOME that is removed afterwards', async () => {
    const text = output(await run({ program: 'printenv', args: ['HOME'] }, { sandbox: 'off' }));
    const home = /stdout:\n(.*)\n/.exec(text)![1]!;
    expect(home.startsWith(path.join(tmpdir(), 'keel-run-home-'))).toBe(true);
    expect(existsSync(home)).toBe(false);
  });
});
