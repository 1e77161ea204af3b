/**
 * Every `keel` command in a `sh` block of README.md, CONTRIBUTING.md or docs/*.md, run through the real
 * CLI against the test server, in the block's order, with a worker on the run's task queue that talks
 * to a scripted model. A documented command the CLI refuses, or one this file has no way to run,
 * fails with its page and line.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { HELP } from '../../src/cli/help.js';
import type { KeelClient } from '../../src/client.js';
import { cliEnvironment, runCli } from '../support/cli.js';
import { connectTestServer, temporaryWorkspace, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { waitForState } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { RecordedRequest } from '../support/scripted-model.js';
import type { DocBlock, ShellCommand } from './doc-blocks.js';
import { documentationPages, expandVariables, fencedBlocks, shellCommands, where } from './doc-blocks.js';
import { repositoryRoot } from './packed-project.js';
import { keelInvocation } from './shell-checks.js';
import type { KeelInvocation } from './shell-checks.js';

/**
 * The docs' example run: `ticket-4711` stands for a run whose model asked for `write_file`, call
 * `call_abc`, which waits for approval. Each command naming it gets a fresh such run.
 */
const EXAMPLE_RUN = 'ticket-4711';
const EXAMPLE_CALL = 'call_abc';
const EXAMPLE_TASK = 'Draft a reply to ticket 4711 in notes.md.';

/** Asks for the example call on a run's first turn when the task is the example's; else answers. */
function answer(request: RecordedRequest) {
  const first = request.body.previous_response_id === undefined;
  if (first && JSON.stringify(request.body.input).includes(EXAMPLE_TASK))
    return reply.calls({
      name: 'write_file',
      arguments: { path: 'notes.md', content: 'draft', createDirectories: false, overwrite: true },
      callId: EXAMPLE_CALL,
    });
  return reply.text('Done.');
}

/** The commands {@link runDocumented} knows how to run and check. */
const RUNNABLE = new Set([
  'run',
  'status',
  'approve',
  'reject',
  'cancel',
  'result',
  'follow',
  'send',
  'end',
  'list',
]);

/** The keel commands of one block, in order. */
interface DocumentedBlock {
  block: DocBlock;
  commands: Array<{ command: ShellCommand; keel: KeelInvocation }>;
}

const documented: DocumentedBlock[] = documentationPages()
  .flatMap((page) => fencedBlocks(page))
  .filter((block) => block.language === 'sh')
  .map((block) => ({
    block,
    commands: shellCommands(block).flatMap((command) => {
      const keel = keelInvocation(command.words);
      return keel ? [{ command, keel }] : [];
    }),
  }))
  .filter(({ commands }) => commands.length > 0);

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** What a block's commands share: the worker's queue and workspace, and the variables assigned so far. */
interface BlockContext {
  keel: KeelClient;
  model: ScriptedModel;
  environment: NodeJS.ProcessEnv;
  workspace: string;
  variables: Map<string, string>;
  examples: number;
}

/** Runs the CLI as the docs spell it; `node dist/cli/keel.js` is the build of bin/keel.js's source. */
async function spawnDocumented(
  keel: KeelInvocation,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const built = path.join(repositoryRoot, 'dist/cli/keel.js');
  if (keel.via.startsWith('npm start') || (keel.via === 'node dist/cli/keel.js' && existsSync(built))) {
    const [program, ...prefix] = keel.via.startsWith('npm start')
      ? ['npm', ...keel.via.split(' ').slice(1)]
      : [process.execPath, built];
    const child = spawn(program, [...prefix, ...args], { cwd: repositoryRoot, env: options.env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    return { code, stdout, stderr };
  }
  return runCli(args, options);
}

/** A fresh example run waiting for approval of its call, under a new workflow id. */
async function exampleRun(context: BlockContext): Promise<string> {
  const runId = `${EXAMPLE_RUN}-${process.pid}-${Date.now()}-${++context.examples}`;
  await context.keel.startRun({ task: EXAMPLE_TASK, approvalTools: ['write_file'] }, { runId });
  await waitForState(context.keel, runId, (state) => state.pendingApprovals.length === 1);
  return runId;
}

/** Runs one documented command for real and checks what it did. */
async function runDocumented(context: BlockContext, command: ShellCommand, keel: KeelInvocation, at: string) {
  const args = expandVariables(keel.args, context.variables, at);
  const env = { ...context.environment, ...command.environment, PATH: process.env.PATH ?? '' };
  const [name = ''] = args;
  if (args.includes('--help') || args.includes('-h')) {
    const shown = await spawnDocumented(keel, args, { env });
    expect(shown.code, `${at}\n${shown.stderr}`).toBe(0);
    expect(shown.stdout, at).toContain('Usage: keel');
    return;
  }
  // A command the CLI has but this file cannot run yet (one that runs until stopped, say) fails at
  // once; one the CLI does not have at all is run, and the CLI's refusal fails the test.
  if (name in HELP && !RUNNABLE.has(name))
    throw new Error(
      `${at}: no way to run "keel ${name}" from the docs yet: add one in docs-commands.test.ts`,
    );
  const example = args[1] === EXAMPLE_RUN ? await exampleRun(context) : undefined;
  if (example !== undefined) args[1] = example;
  // A command that waits for the end of the example run gets one that can end: its call approved.
  if (example !== undefined && (name === 'result' || name === 'follow')) {
    await context.keel.approveCall(example, EXAMPLE_CALL);
  }
  const cwd = args.includes('--demo') ? context.workspace : undefined;
  const result = await spawnDocumented(keel, args, { env, ...(cwd ? { cwd } : {}) });
  const output = `${at}: ${keel.via} ${args.join(' ')}\n${result.stdout}\n${result.stderr}`;
  expect(result.code, output).toBe(0);
  if (command.captureInto !== undefined) {
    expect(result.stdout.trim(), output).toMatch(/^\S+$/);
    context.variables.set(command.captureInto, result.stdout.trim());
  }
  if (args.includes('--json')) expect(() => JSON.parse(result.stdout) as unknown, output).not.toThrow();

  switch (name) {
    case 'run': {
      if (args.includes('--demo')) {
        // The demo read the workspace's README through a real tool call and answered from it.
        expect(result.stderr, output).toContain('scripted demo model');
        expect(result.stdout, output).toContain('# A project');
        return;
      }
      // A detached run goes on after the command returns; one that was followed has ended.
      if (args.includes('--detach')) return;
      const task = args.at(-1)!;
      const asked = context.model.requests.some((request) =>
        JSON.stringify(request.body.input).includes(task),
      );
      expect(asked, `${output}\nthe model was given the task`).toBe(true);
      expect(result.stdout, output).toContain('Done.');
      return;
    }
    case 'status':
      expect(result.stdout, output).toContain(EXAMPLE_CALL);
      await context.keel.cancelRun(example!);
      return;
    case 'approve': {
      expect(await context.keel.waitForResult(example!), output).toMatchObject({ status: 'completed' });
      const edited = args.indexOf('--args');
      if (edited !== -1) {
        // The edited arguments are what ran: the file is where they say, with what they say.
        const { path: file, content } = JSON.parse(args[edited + 1]!) as { path: string; content: string };
        expect(await readFile(path.join(context.workspace, file), 'utf8'), output).toBe(content);
      }
      return;
    }
    case 'reject': {
      expect(await context.keel.waitForResult(example!), output).toMatchObject({ status: 'completed' });
      const reason = args[args.indexOf('--reason') + 1]!;
      const told = context.model.requests.some((request) =>
        JSON.stringify(request.body.input).includes(reason),
      );
      expect(told, `${output}\nthe model was told the reason`).toBe(true);
      return;
    }
    case 'cancel':
      if (example !== undefined) await expect(context.keel.waitForResult(example), output).rejects.toThrow();
      return;
    case 'result':
    case 'follow':
      expect(result.stdout, output).toContain('Done.');
      return;
    case 'send':
      if (args.includes('--wait')) expect(result.stdout, output).toContain('Done.');
      return;
    case 'end':
    case 'list':
      return;
    default:
      throw new Error(
        `${at}: no way to run "keel ${name}" from the docs yet: add one in docs-commands.test.ts`,
      );
  }
}

describe('the keel commands in the docs', () => {
  it('are found: the first command, the approval and the session examples among them', () => {
    const lines = documented.flatMap(({ commands }) =>
      commands.map(({ keel }) => `${keel.via} ${keel.args[0]}`),
    );
    expect(lines).toEqual(
      expect.arrayContaining(['npx keel run', 'keel approve', 'keel reject', 'keel send', 'keel end']),
    );
  });

  it('need npm start --silent for --json: without it npm writes its banner before the JSON', async () => {
    const env = cliEnvironment({
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    });
    const start = (flags: string[]) =>
      spawnDocumented(
        { via: `npm start ${flags.join(' ')} --`.replace(/ +/g, ' '), args: [] },
        ['list', '--json'],
        {
          env,
        },
      );
    const [loud, silent] = [await start([]), await start(['--silent'])];
    expect(loud.code).toBe(0);
    expect(loud.stdout).toContain('> keel@');
    expect(() => JSON.parse(loud.stdout) as unknown).toThrow();
    expect(silent.code).toBe(0);
    expect(JSON.parse(silent.stdout)).toBeInstanceOf(Array);
  });

  it.each(documented.map((entry) => [where(entry.block.page, entry.block.line), entry] as const))(
    'run as written: %s',
    async (_, { block, commands }) => {
      const model = await ScriptedModel.start(answer);
      const workspace = await temporaryWorkspace();
      await writeFile(path.join(workspace, 'README.md'), '# A project\n');
      try {
        await withTestWorker(server, { model, workspace }, async ({ keel, taskQueue }) => {
          const context: BlockContext = {
            keel,
            model,
            workspace,
            variables: new Map(),
            examples: 0,
            environment: cliEnvironment({
              TEMPORAL_ADDRESS: inject('temporalAddress'),
              TEMPORAL_NAMESPACE: inject('temporalNamespace'),
              KEEL_TASK_QUEUE: taskQueue,
            }),
          };
          for (const { command, keel: invocation } of commands)
            await runDocumented(context, command, invocation, where(block.page, command.line));
        });
      } finally {
        await model.close();
      }
    },
    120_000,
  );
});
