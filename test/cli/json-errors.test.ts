import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { cliEnvironment, runCli, startCli, testServerCliEnvironment } from '../support/cli.js';
import { temporaryWorkspace } from '../support/harness.js';
import { ScriptedModel } from '../support/scripted-model.js';

/** The one JSON error shape every command prints on stdout with --json. */
function jsonError(stdout: string): { code: string; message: string; [field: string]: unknown } {
  const parsed = JSON.parse(stdout) as { error: { code: string; message: string } };
  expect(Object.keys(parsed)).toEqual(['error']);
  expect(parsed.error.code).toMatch(/^[a-z]+(-[a-z]+)*$/u);
  expect(parsed.error.message).not.toContain('\n');
  return parsed.error;
}

let environment: NodeJS.ProcessEnv;
beforeAll(() => {
  environment = testServerCliEnvironment();
});

describe('--json errors', () => {
  it.each([
    [['frob', '--json'], 'Unknown command "frob".'],
    [['list', '--bogus', '--json'], "Unknown option '--bogus'"],
    [['--json', 'status'], 'Unknown command "--json"'],
    [['status', 'x', '--demo', '--json'], 'Option --demo does not apply'],
    [['status', '--json'], 'Give exactly one argument: a run id.'],
    [['run', '--json'], 'Give the task'],
  ])('a usage error of %j is one JSON error with code "usage" and exit code 2', async (args, message) => {
    const { code, stdout, stderr } = await runCli(args, { env: cliEnvironment() });
    expect(code).toBe(2);
    const error = jsonError(stdout);
    expect(error).toMatchObject({ code: 'usage' });
    expect(error.message).toContain(message);
    expect(stderr).toContain(message);
  });

  it('a missing server is a "config" error', async () => {
    const { code, stdout } = await runCli(['status', 'some-run', '--json'], {
      env: cliEnvironment({ TEMPORAL_ADDRESS: '127.0.0.1:1' }),
    });
    expect(code).toBe(1);
    expect(jsonError(stdout)).toMatchObject({
      code: 'config',
      message: expect.stringContaining('127.0.0.1:1') as unknown,
    });
  });

  it('a refused update is a "refused" error naming the run', async () => {
    const runId = `missing-${randomUUID()}`;
    const { code, stdout, stderr } = await runCli(['approve', runId, 'call_1', '--json'], {
      env: environment,
    });
    expect(code).toBe(1);
    expect(jsonError(stdout)).toMatchObject({ code: 'refused', runId });
    expect(stderr).toContain(`Refused: There is no run ${runId}`);
  });

  it('keel worker --json without a model says so as a JSON error', async () => {
    const { code, stdout } = await runCli(['worker', '--json'], {
      env: environment,
      cwd: await temporaryWorkspace(),
    });
    expect(code).toBe(1);
    expect(jsonError(stdout)).toMatchObject({
      code: 'config',
      message: expect.stringContaining('OPENAI_API_KEY') as unknown,
    });
  });

  it('keel worker --json prints one JSON line once it polls, and nothing else on stdout', async () => {
    const model = await ScriptedModel.start([]);
    const taskQueue = `json-worker-${randomUUID()}`;
    const worker = startCli(['worker', '--json', '--task-queue', taskQueue], {
      env: { ...environment, OPENAI_BASE_URL: model.url, KEEL_MODEL: 'scripted' },
      cwd: await temporaryWorkspace(),
    });
    try {
      await worker.waitForOutput('"worker"');
      await worker.waitForOutput('\n');
      expect(JSON.parse(worker.stdout)).toEqual({
        worker: { taskQueue, namespace: inject('temporalNamespace'), address: inject('temporalAddress') },
      });
      expect(worker.stderr).toContain(`Keel worker on task queue "${taskQueue}"`);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exited;
      await model.close();
    }
  });
});
