import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cliEnvironment, runCli, startCli, testServerCliEnvironment } from '../support/cli.js';
import type { CliProcess } from '../support/cli.js';
import { connectTestServer, temporaryWorkspace, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';

let server: TestServer;
let environment: NodeJS.ProcessEnv;
beforeAll(async () => {
  server = await connectTestServer();
  environment = testServerCliEnvironment();
});
afterAll(async () => {
  await server?.close();
});

describe('keel run says what will happen', () => {
  it('refuses --demo --detach: the demo run would never go on without this process', async () => {
    const { code, stdout, stderr } = await runCli(['run', '--demo', '--detach', '--json', 'Hi'], {
      env: environment,
      cwd: await temporaryWorkspace(),
    });
    expect(code).toBe(2);
    expect(stderr).toContain('--demo cannot --detach');
    expect(stderr).toContain('live in this process');
    expect(JSON.parse(stdout)).toMatchObject({ error: { code: 'usage' } });
  });

  it('on a cluster where no worker polls the queue it says so at once, then waits for one', async () => {
    const model = await ScriptedModel.start([reply.text('done')]);
    const taskQueue = `late-worker-${randomUUID()}`;
    const cli = startCli(['run', 'Hi', '--task-queue', taskQueue], { env: environment });
    try {
      await cli.waitForOutput(`No worker polls task queue "${taskQueue}" on ${inject('temporalAddress')}`);
      expect(cli.stderr).toContain(`keel worker --task-queue ${taskQueue}`);
      expect(cli.child.exitCode).toBeNull();
      expect(model.requests).toEqual([]);
      // The run waited; a worker that comes now runs it, and the command follows it to the end.
      const code = await withTestWorker(server, { model, taskQueue, tools: [echoTool] }, () => cli.exited);
      expect(code).toBe(0);
      expect(cli.stdout).toContain('✔ completed');
      expect(model.requests).toHaveLength(1);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
      await model.close();
    }
  });

  it('hosts a worker again for a run right after another on the same queue, whose worker the server still lists', async () => {
    const model = await ScriptedModel.start(() => reply.text('done'));
    const taskQueue = `again-${randomUUID()}`;
    // The test server as the local server (not a cluster), so keel run hosts a worker when none polls.
    const local = cliEnvironment({
      KEEL_LOCAL_PORT: inject('temporalAddress').split(':')[1]!,
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      KEEL_DATA_DIR: await temporaryWorkspace(),
      OPENAI_BASE_URL: model.url,
      KEEL_MODEL: 'scripted',
      KEEL_TASK_QUEUE: taskQueue,
    });
    const cwd = await temporaryWorkspace();
    let second: CliProcess | undefined;
    try {
      const first = await runCli(['run', 'First'], { env: local, cwd });
      expect(first.stdout).toContain('✔ completed');
      // The first command's worker has stopped, yet the server lists it for about a minute.
      const { pollers } = await server.client.workflowService.describeTaskQueue({
        namespace: server.client.options.namespace,
        taskQueue: { name: taskQueue },
      });
      expect(pollers?.length).toBeGreaterThan(0);
      second = startCli(['run', 'Second'], { env: local, cwd });
      // Before, it hosted no worker and the run waited for one for ever: it never reached the model.
      // (Its "… waiting for a worker" line is no sign: a loaded machine prints it while the hosted
      // worker starts, as the demo's terminal test found.)
      await model.waitForRequests(2);
      expect(await second.exited).toBe(0);
      expect(second.stdout).toContain('✔ completed');
      expect(model.requests).toHaveLength(2);
    } finally {
      if (second?.child.exitCode === null) second.child.kill('SIGKILL');
      await model.close();
    }
  });

  it('--id of a run that has ended: not "started", not run again; shows how it ended', async () => {
    const model = await ScriptedModel.start([reply.text('the first answer')]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ keel, taskQueue }) => {
        const runId = `ticket-${randomUUID()}`;
        await keel.startRun({ task: 'Answer once' }, { runId });
        await keel.waitForResult(runId);
        const queue = ['--task-queue', taskQueue, '--id', runId];

        const same = await runCli(['run', 'Answer once', ...queue], { env: environment });
        expect(same.stderr).toContain(`Run ${runId} already ran: it ended (COMPLETED)`);
        expect(same.stderr).not.toContain(`Run ${runId} started`);
        expect(same.stdout).toContain('✔ completed');
        expect(same.stdout).toContain('the first answer');
        expect(same.code).toBe(0);

        const other = await runCli(['run', 'Something else', ...queue, '--json'], { env: environment });
        expect(other.code).toBe(1);
        expect(other.stderr).toContain(
          `Run ${runId} already exists (COMPLETED) with another task: "Answer once"`,
        );
        expect(JSON.parse(other.stdout)).toMatchObject({
          error: { code: 'run-exists', runId, status: 'COMPLETED' },
        });
      });
      expect(model.requests).toHaveLength(1);
    } finally {
      await model.close();
    }
  });
});
