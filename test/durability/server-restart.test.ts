import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { startTestWorker } from '../support/harness.js';
import { historyText } from '../support/history.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { blockingTool } from '../support/test-tools.js';
import { createLocalEnvironment } from '../../src/cli/dev-server.js';

/** A dev server of this test's own, persisted to `dbFilename`, that the test stops and starts again. */
function startServer(port: number, dbFilename: string): Promise<TestWorkflowEnvironment> {
  return createLocalEnvironment({
    server: {
      executable: inject('temporalExecutable'),
      ip: '127.0.0.1',
      port,
      dbFilename,
      log: { format: 'pretty', level: 'error' },
    },
  });
}

describe('a Temporal server restart', () => {
  it('mid-run loses nothing: the run completes with every observation, response id and call id', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'keel-restart-'));
    const dbFilename = path.join(directory, 'temporal.db');
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    let environment = await startServer(port, dbFilename);
    const blocking = blockingTool();
    const model = await ScriptedModel.start([
      reply.calls({ name: 'block', arguments: { label: 'before' } }),
      reply.calls({ name: 'block', arguments: { label: 'after' } }),
      reply.text('survived'),
    ]);
    const nativeConnection = await NativeConnection.connect({ address });
    const connection = await Connection.connect({ address });
    const server = {
      connection: nativeConnection,
      client: new Client({ connection }),
      close: () => Promise.resolve(),
    };
    const { worker, keel } = await startTestWorker(server, { model, tools: [blocking.tool] });
    const running = worker.run();
    // Awaited in finally, where a worker failure fails the test; until then it must not go unhandled.
    running.catch(() => undefined);
    try {
      const runId = await keel.startRun({ task: 'survive a restart', heartbeatTimeoutSeconds: 5 });
      await blocking.started.promise;

      await environment.teardown();
      // The tool finishes while the server is down; its completion must still reach the restarted server.
      blocking.release.resolve('released');
      environment = await startServer(port, dbFilename);

      const result = await keel.waitForResult(runId);
      expect(result).toMatchObject({ status: 'completed', finalText: 'survived', turns: 3, toolCalls: 2 });
      expect(model.requests.map((request) => request.body.previous_response_id)).toEqual([
        undefined,
        'resp_1',
        'resp_2',
      ]);
      expect(model.requests[1]?.body.input).toEqual([
        { type: 'function_call_output', call_id: 'call_1_1', output: 'before: released' },
      ]);
      expect(model.requests[2]?.body.input).toEqual([
        { type: 'function_call_output', call_id: 'call_2_1', output: 'after: released' },
      ]);
      const history = await historyText(server.client, runId);
      for (const id of ['resp_1', 'resp_2', 'resp_3', 'call_1_1', 'call_2_1', 'before: released']) {
        expect(history).toContain(id);
      }
      model.assertDone();
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
      await nativeConnection.close();
      await environment.teardown();
      await model.close();
      await rm(directory, { recursive: true, force: true });
    }
  });
});
