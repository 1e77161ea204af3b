import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, testServerCliEnvironment } from '../support/cli.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { blockingTool, echoTool } from '../support/test-tools.js';

// `keel status` / `keel follow` of a run that has ended read how it ended from Temporal, not by a
// query: a query of a closed run needs a worker to replay it, and waits ~30 s when none is there.
let server: TestServer;
let environment: NodeJS.ProcessEnv;
beforeAll(async () => {
  server = await connectTestServer();
  environment = testServerCliEnvironment();
});
afterAll(async () => {
  await server?.close();
});

/** Runs `keel <args>` and prints how long it took (a figure for the report, not an assertion). */
async function timedCli(args: string[]) {
  const started = performance.now();
  const outcome = await runCli(args, { env: environment });
  console.log(`keel ${args[0]} with no worker answering: ${Math.round(performance.now() - started)} ms`);
  return outcome;
}

describe('keel status and follow of a run that has ended', () => {
  it('a completed run: its ending, read with no worker left', async () => {
    const model = await ScriptedModel.start([
      reply.calls({ name: 'echo', arguments: { text: 'hi' } }),
      reply.text('done'),
    ]);
    try {
      const { runId, taskQueue } = await withTestWorker(
        server,
        { model, tools: [echoTool] },
        async ({ keel, taskQueue }) => {
          const runId = await keel.startRun({ task: 'Say hi' });
          await keel.waitForResult(runId);
          return { runId, taskQueue };
        },
      );
      // The worker has shut down: nobody could answer a query now.
      const status = await timedCli(['status', runId, '--task-queue', taskQueue]);
      expect(status.code).toBe(0);
      expect(status.stdout).toContain(`run ${runId} has ended`);
      expect(status.stdout).toMatch(
        /✔ completed \(2 turns · 1 tool calls? · \d+ tokens\) · model scripted-model/u,
      );
      expect(status.stdout + status.stderr).not.toContain('no worker');

      const follow = await timedCli(['follow', runId, '--task-queue', taskQueue]);
      expect(follow.code).toBe(0);
      expect(follow.stdout).toContain(`run ${runId} has ended`);
      expect(follow.stdout).toContain('✔ completed');
      expect(follow.stdout).toContain('done');

      const json = await runCli(['status', runId, '--json'], { env: environment });
      expect(JSON.parse(json.stdout)).toMatchObject({
        runId,
        status: 'COMPLETED',
        state: null,
        result: { status: 'completed', finalText: 'done', turns: 2 },
      });
    } finally {
      await model.close();
    }
  });

  it('a cancelled run says cancelled, with its worker there and after it is gone', async () => {
    const blocking = blockingTool();
    const model = await ScriptedModel.start([reply.calls({ name: 'block', arguments: { label: 'x' } })]);
    try {
      const { runId, taskQueue } = await withTestWorker(
        server,
        { model, tools: [blocking.tool] },
        async ({ keel, taskQueue }) => {
          const runId = await keel.startRun({ task: 'Block' });
          await blocking.started.promise;
          await keel.cancelRun(runId);
          await keel.waitForResult(runId).catch(() => undefined);
          const withWorker = await runCli(['status', runId, '--task-queue', taskQueue], {
            env: environment,
          });
          expect(withWorker.code).toBe(0);
          expect(withWorker.stdout).toContain('■ cancelled');
          expect(withWorker.stdout).not.toMatch(/thinking|running|acting/u);
          return { runId, taskQueue };
        },
      );
      const gone = await timedCli(['status', runId, '--task-queue', taskQueue]);
      expect(gone.stdout).toContain('■ cancelled');
      const follow = await timedCli(['follow', runId, '--task-queue', taskQueue]);
      expect(follow.code).toBe(3);
      expect(follow.stdout).toContain('■ cancelled');
    } finally {
      await model.close();
    }
  });

  it('a run refused for invalid input says so and why, not that no worker answers', async () => {
    const model = await ScriptedModel.start([]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ taskQueue }) => {
        const queue = ['--task-queue', taskQueue];
        const started = await runCli(['run', 'Hi', '--agent', 'nosuch', '--detach', ...queue], {
          env: environment,
        });
        expect(started.code).toBe(0);
        const runId = started.stdout.trim();
        const result = await runCli(['result', runId, ...queue], { env: environment });
        expect(result.code).toBe(3);

        const status = await runCli(['status', runId, ...queue], { env: environment });
        expect(status.code).toBe(0);
        expect(status.stdout).toContain(`run ${runId} has ended`);
        expect(status.stdout).toContain('Invalid run input');
        expect(status.stdout).toContain('unknown agent nosuch');
        expect(status.stdout + status.stderr).not.toContain('no worker');
      });
      expect(model.requests).toEqual([]);
    } finally {
      await model.close();
    }
  });

  it('a running run whose worker has stopped: status says no worker answers, within its deadline', async () => {
    const blocking = blockingTool();
    const model = await ScriptedModel.start([reply.calls({ name: 'block', arguments: { label: 'x' } })]);
    try {
      const { runId, taskQueue } = await withTestWorker(
        server,
        { model, tools: [blocking.tool] },
        async ({ keel, taskQueue }) => {
          const runId = await keel.startRun({ task: 'Block' });
          await blocking.started.promise;
          return { runId, taskQueue };
        },
      );
      // The server still lists the stopped worker as a poller for a while: the query gets a deadline.
      const status = await timedCli(['status', runId, '--task-queue', taskQueue]);
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(
        /running, (but no worker answered within 5 s|waiting for a worker: none polls)/u,
      );
      await server.client.workflow.getHandle(runId).terminate('test over');
    } finally {
      await model.close();
    }
  });

  it('status, follow and result of a run that does not exist: exit code 1, saying so', async () => {
    const runId = `missing-${randomUUID()}`;
    for (const command of ['status', 'follow', 'result']) {
      const { code, stdout, stderr } = await runCli([command, runId, '--json'], { env: environment });
      expect(code).toBe(1);
      expect(JSON.parse(stdout)).toMatchObject({ error: { code: 'run-not-found', runId } });
      expect(stderr).toContain(`There is no run ${runId}`);
    }
  });
});
