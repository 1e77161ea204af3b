import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MAX_TURNS_LIMIT } from '../../src/contract/defaults.js';
import { CliProcess, keelEntry, runCli, testServerCliEnvironment } from '../support/cli.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';

// The documented exit codes: 0 ok, 1 error, 2 usage error, 3 the run ended without completing.
let server: TestServer;
let environment: NodeJS.ProcessEnv;
beforeAll(async () => {
  server = await connectTestServer();
  environment = testServerCliEnvironment();
});
afterAll(async () => {
  await server?.close();
});

describe('keel run options out of range are usage errors (exit code 2), checked before a run starts', () => {
  it.each([
    [
      ['--max-turns', String(MAX_TURNS_LIMIT + 1)],
      `--max-turns must be a whole number from 1 to ${MAX_TURNS_LIMIT}`,
    ],
    [['--max-turns', '-1'], `--max-turns must be a whole number from 1 to ${MAX_TURNS_LIMIT}, not "-1"`],
    [['--max-turns', '0'], '--max-turns must be a whole number from 1'],
    [['--max-turns', '2.5'], '--max-turns must be a whole number from 1'],
    [['--tools', 'a,a'], '--tools: must not repeat a tool (a,a)'],
    [['--tools', ''], '--tools needs tool names separated by commas'],
    [['--tools', 'read_file,,list_directory'], '--tools needs tool names separated by commas'],
    [['--tools', 'rm -rf'], '--tools: is not a valid tool name'],
    [['--approve', 'write_file', '--tools', 'read_file'], '--approve'],
    [['--model', ' '], '--model'],
  ])('keel run %j', async (options, message) => {
    // --detach: should the options pass, the run starts and the command returns 0 at once.
    const taskQueue = `no-worker-${randomUUID()}`;
    const { code, stderr, stdout } = await runCli(
      ['run', 'Hello', ...options, '--detach', '--json', '--task-queue', taskQueue],
      { env: environment },
    );
    expect(stderr).toContain(message);
    expect(stderr).toContain('See: keel run --help');
    expect(code).toBe(2);
    expect(JSON.parse(stdout)).toMatchObject({ error: { code: 'usage' } });
  });
});

describe('exit codes of commands on runs', () => {
  it('send --wait on a completed run: exit code 1, saying it has ended', async () => {
    const model = await ScriptedModel.start([reply.text('done')]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ keel, taskQueue }) => {
        const runId = await keel.startRun({ task: 'Hi' });
        await keel.waitForResult(runId);
        for (const wait of [['--wait'], []]) {
          const sent = await runCli(['send', runId, 'More?', ...wait, '--task-queue', taskQueue, '--json'], {
            env: environment,
          });
          expect(sent.code).toBe(1);
          expect(sent.stderr).toContain(`Run ${runId} has ended (COMPLETED): it takes no more messages`);
          expect(JSON.parse(sent.stdout)).toMatchObject({
            error: { code: 'run-ended', runId, status: 'COMPLETED' },
          });
        }
      });
      expect(model.requests).toHaveLength(1);
    } finally {
      await model.close();
    }
  });
});

describe('a worker the server refuses exits, so that its supervisor starts it again', () => {
  // A compose stack's worker may start before its namespace is registered: it must exit (the
  // restart policy retries it), not stay up without polling, as it did while the SDK's workflow
  // threads outlived the failed Worker.create.
  it.each([
    ['node dist/worker.js', () => [path.join(inject('builtKeel').root, 'dist', 'worker.js')]],
    ['keel worker', () => [keelEntry(), 'worker']],
  ])(
    '%s: exit code 1 naming the missing namespace',
    async (_, args) => {
      const directory = await mkdtemp(path.join(tmpdir(), 'keel-refused-'));
      await mkdir(path.join(directory, 'workspace'));
      const namespace = `not-registered-${randomUUID()}`;
      const worker = new CliProcess(
        spawn(process.execPath, args(), {
          env: testServerCliEnvironment({
            TEMPORAL_NAMESPACE: namespace,
            OPENAI_API_KEY: 'sk-test',
            KEEL_WORKSPACE: path.join(directory, 'workspace'),
            KEEL_STATE_DIR: path.join(directory, 'state'),
          }),
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      );
      try {
        expect(await worker.exited).toBe(1);
        expect(worker.stderr).toContain(`Namespace ${namespace} was not found`);
      } finally {
        worker.child.kill('SIGKILL');
        await rm(directory, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
