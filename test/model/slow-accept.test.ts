import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { RecordedRequest, ScriptStep } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';

/** How long the server takes to accept each create: three times the runs' heartbeat timeout. */
const ACCEPT_MS = 6_000;
const HEARTBEAT_TIMEOUT_SECONDS = 2;

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('a model server slow to accept a background request', () => {
  it('costs one create per turn: the turn heartbeats while the create is pending', async () => {
    const steps = [reply.calls({ name: 'echo', arguments: { text: 'one' } }), reply.text('done')];
    // The latency starts when each request arrives: the server's, not the test's, clock.
    const slow = (request: RecordedRequest): ScriptStep =>
      reply.slowToAccept(steps[request.index] ?? reply.text('unexpected extra turn'), delay(ACCEPT_MS));
    const model = await ScriptedModel.start(slow);
    try {
      await withTestWorker(
        server,
        { model, tools: [echoTool], modelMode: 'background' },
        async ({ keel }) => {
          const runId = await keel.startRun({
            task: 'echo once',
            heartbeatTimeoutSeconds: HEARTBEAT_TIMEOUT_SECONDS,
          });
          const result = await keel.waitForResult(runId);
          expect(result).toMatchObject({
            status: 'completed',
            finalText: 'done',
            turns: 2,
          });
        },
      );
      expect(model.requests.map((request) => request.body.background)).toEqual([true, true]);
      expect(model.cancellations).toEqual([]);
      model.assertDone();
    } finally {
      await model.close();
    }
  }, 60_000);
});
