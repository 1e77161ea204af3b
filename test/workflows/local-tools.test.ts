import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool.js';
import { deferred } from '../support/deferred.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyEvents } from '../support/history.js';
import { reply } from '../support/scripted-model.js';
import { withScenario } from '../support/scenario.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

const upper = defineTool({
  name: 'upper',
  description: 'Upper-case a text.',
  schema: z.object({ text: z.string() }),
  readOnly: true,
  local: true,
  execute: ({ text }) => text.toUpperCase(),
});

describe('local tools', () => {
  it('run as local activities: no activity task of their own, the same observation for the model', async () => {
    await withScenario(
      server,
      [reply.calls({ name: 'upper', arguments: { text: 'quiet' } }), reply.text('QUIET')],
      { tools: [upper] },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'shout' });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', toolCalls: 1 });
        expect(model.requests[1]?.body.input).toEqual([
          { type: 'function_call_output', call_id: 'call_1_1', output: 'QUIET' },
        ]);
        const events = await historyEvents(server.client, runId);
        const scheduled = events.flatMap(
          (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
        );
        expect(scheduled).toEqual(['keel.describeWorker', 'keel.callModel', 'keel.callModel']);
        const markers = events.filter(
          (event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity',
        );
        expect(markers).toHaveLength(1);
      },
    );
  });

  it('hear a cancel at once: the tool’s signal fires and the run ends as Canceled', async () => {
    const started = deferred();
    const aborted = deferred<unknown>();
    const waiting = defineTool({
      name: 'wait_local',
      description: 'Waits until aborted.',
      schema: z.object({}),
      readOnly: true,
      local: true,
      timeoutSeconds: 30,
      execute: (_, { signal }) =>
        new Promise<string>((_resolve, reject) => {
          started.resolve();
          signal.addEventListener('abort', () => {
            aborted.resolve(signal.reason);
            reject(signal.reason as Error);
          });
        }),
    });
    await withScenario(
      server,
      [reply.calls({ name: 'wait_local', arguments: {} })],
      { tools: [waiting] },
      async ({ keel }) => {
        const runId = await keel.startRun({ task: 'wait' });
        await started.promise;
        await keel.cancelRun(runId);
        expect(await aborted.promise).toBeDefined();
        const error = await keel.waitForResult(runId).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(WorkflowFailedError);
        expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
      },
    );
  });
});
