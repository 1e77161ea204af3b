import { spawn } from 'node:child_process';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool.js';
import { deferred } from '../support/deferred.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { processFixture, victimAndSurvivors } from '../support/process/fixture.js';
import { withScenario } from '../support/scenario.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { blockingTool } from '../support/test-tools.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function expectCanceled(result: Promise<unknown>): Promise<void> {
  const error = await result.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
}

describe('cancelling a run', () => {
  it.each([2, 10])(
    'aborts the running tool within the heartbeat interval (heartbeat timeout %i s)',
    async (seconds) => {
      const blocking = blockingTool();
      await withScenario(
        server,
        [reply.calls({ name: 'block', arguments: { label: 'x' } })],
        { tools: [blocking.tool] },
        async ({ keel }) => {
          const runId = await keel.startRun({ task: 'block', heartbeatTimeoutSeconds: seconds });
          await blocking.started.promise;
          const requestedAt = Date.now();
          await keel.cancelRun(runId);
          expect(await blocking.aborted.promise).toBeInstanceOf(CancelledFailure);
          console.info(
            `[measure] cancel request -> tool AbortSignal: ${Date.now() - requestedAt} ms (heartbeat timeout ${seconds} s)`,
          );
          await expectCanceled(keel.waitForResult(runId));
        },
      );
    },
  );

  it('abandons a tool that ignores its signal: the run ends Canceled while the tool is still busy', async () => {
    const stubborn = blockingTool({ ignoreAbort: true });
    try {
      await withScenario(
        server,
        [reply.calls({ name: 'block', arguments: { label: 'x' } })],
        { tools: [stubborn.tool] },
        async ({ keel }) => {
          const runId = await keel.startRun({ task: 'block', heartbeatTimeoutSeconds: 2 });
          await stubborn.started.promise;
          await keel.cancelRun(runId);
          await expectCanceled(keel.waitForResult(runId));
          expect(stubborn.calls).toHaveLength(1);
        },
      );
    } finally {
      stubborn.release.resolve('finally');
    }
  });

  it('leaves no orphan: a child process the tool started with its signal is killed', async () => {
    const spawned = deferred<number>();
    const exited = deferred<NodeJS.Signals | null>();
    const sleeper = defineTool({
      name: 'sleep_process',
      description: 'Runs `sleep 60`.',
      schema: z.object({}),
      execute: (_input, { signal }) =>
        new Promise<string>((resolve, reject) => {
          const child = spawn('sleep', ['60'], { signal, stdio: 'ignore' });
          child.once('spawn', () => spawned.resolve(child.pid!));
          child.once('exit', (_code, exitSignal) => exited.resolve(exitSignal));
          child.once('error', reject);
          child.once('close', () => resolve('slept'));
        }),
    });
    await withScenario(
      server,
      [reply.calls({ name: 'sleep_process', arguments: {} })],
      { tools: [sleeper] },
      async ({ keel }) => {
        const runId = await keel.startRun({ task: 'sleep', heartbeatTimeoutSeconds: 2 });
        const pid = await spawned.promise;
        await keel.cancelRun(runId);
        expect(await exited.promise).toBe('SIGTERM');
        expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }) as Error);
        await expectCanceled(keel.waitForResult(runId));
      },
    );
  });

  it('ends the run Canceled even when the worker running the tool is frozen and cannot hear the cancel', async () => {
    const model = await ScriptedModel.start([reply.calls({ name: 'step', arguments: { label: 'never' } })]);
    const fixture = await processFixture(server, model);
    try {
      const workers = await Promise.all([fixture.startWorker(), fixture.startWorker()]);
      const runId = await fixture.keel.startRun({ task: 'step', heartbeatTimeoutSeconds: 2 });
      const started = await Promise.race(
        workers.map((worker) => worker.waitFor((event) => event.type === 'tool-started')),
      );
      const [frozen] = victimAndSurvivors(workers, started.pid);
      frozen.freeze();
      const requestedAt = Date.now();
      await fixture.keel.cancelRun(runId);
      await expectCanceled(fixture.keel.waitForResult(runId));
      console.info(
        `[measure] cancel request -> run Canceled with a frozen worker: ${Date.now() - requestedAt} ms (heartbeat timeout 2 s)`,
      );
      expect(frozen.events.some((event) => event.type === 'tool-finished')).toBe(false);
    } finally {
      await fixture.cleanUp();
      await model.close();
    }
  });
});
