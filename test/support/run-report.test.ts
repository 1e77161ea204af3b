import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deferred } from './deferred.js';
import { connectTestServer, withTestWorker } from './harness.js';
import type { TestServer } from './harness.js';
import { reply, ScriptedModel } from './scripted-model.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('a test that fails inside withTestWorker', () => {
  it('says where its runs stood on the server: status, the pending model call, the last events', async () => {
    const thinking = deferred();
    const model = await ScriptedModel.start([reply.held(reply.text('late'), thinking.promise)]);
    let runId = '';
    try {
      const failure = await withTestWorker(server, { model }, async ({ keel }) => {
        runId = await keel.startRun({ task: 'Think' });
        await model.waitForRequests(1);
        throw new Error('timed out waiting for the answer');
      }).then(
        () => undefined,
        (error: unknown) => error as Error,
      );
      expect(failure?.message).toMatch(/^timed out waiting for the answer\nThe runs on keel-test-/u);
      expect(failure?.message).toContain(`${runId} (agentRun): RUNNING`);
      expect(failure?.message).toMatch(
        / {2}activity keel\.callModel \(\S+\): state STARTED, attempt 1, last heartbeat /u,
      );
      expect(failure?.message).toMatch(/#\d+ [\d:.]+ ACTIVITY_TASK_SCHEDULED/u);
    } finally {
      thinking.resolve();
      await server.client.workflow
        .getHandle(runId)
        .terminate('test over')
        .catch(() => undefined);
      await model.close();
    }
  });
});
