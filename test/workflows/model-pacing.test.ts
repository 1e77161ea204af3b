import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deferred } from '../support/deferred.js';
import type { Deferred } from '../support/deferred.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { waitUntilModelTurnsStarted } from '../support/model-turns-started.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('model call pacing', () => {
  it('holds a burst of runs to the worker’s model concurrency: the rest wait, heartbeating, and all complete', async () => {
    const holds: Array<Deferred<void>> = [];
    const model = await ScriptedModel.start((request) => {
      const hold = deferred();
      holds[request.index] = hold;
      return reply.held(reply.text(`answer ${request.index}`), hold.promise);
    });
    try {
      await withTestWorker(
        server,
        { model, modelMode: 'foreground', modelPacing: { maxConcurrent: 1 } },
        async ({ keel }) => {
          const runIds = await Promise.all([1, 2, 3].map((n) => keel.startRun({ task: `run ${n}` })));
          // Every run's model turn is running as an activity and has heartbeated (the waiting ones
          // beat while they wait, a second apart), yet only one request reached the model.
          await model.waitForRequests(1);
          await waitUntilModelTurnsStarted(runIds, keel.temporal);
          expect(model.requests).toHaveLength(1);
          for (let index = 0; index < 3; index++) {
            await model.waitForRequests(index + 1);
            expect(model.requests).toHaveLength(index + 1);
            holds[index]!.resolve();
          }
          const results = await Promise.all(runIds.map((runId) => keel.waitForResult(runId)));
          expect(results.map((result) => result.status)).toEqual(['completed', 'completed', 'completed']);
        },
      );
    } finally {
      for (const hold of holds) hold?.resolve();
      await model.close();
    }
  });
});
