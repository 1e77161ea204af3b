import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { waitForState } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { RecordedRequest } from '../support/scripted-model.js';
import { withTestWorker } from '../support/harness.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** A context window of this many conversation items: the session's 200 messages are four times that. */
const WINDOW = 50;
const MESSAGES = 200;
const BATCH = 25;

describe('a long session keeps its context', () => {
  it(`goes on past the model's context window: ${MESSAGES} messages through continue-as-new, every turn sent with truncation auto`, async () => {
    const model = await ScriptedModel.start(
      (request: RecordedRequest) => reply.text(`answer ${request.index + 1}`),
      { contextWindowItems: WINDOW },
    );
    try {
      await withTestWorker(server, { model, modelMode: 'foreground' }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'message 1', session: true, continueAsNewAfterTurns: 4 });
        let sent = 1;
        let answers = (await waitForState(keel, runId, (state) => state.answers >= 1)).answers;
        // Messages in batches, each batch answered before the next: the conversation grows
        // by every one.
        while (sent < MESSAGES) {
          const texts = Array.from({ length: Math.min(BATCH, MESSAGES - sent) }, () => `message ${++sent}`);
          // One after another: 25 sent at once raced continue-as-new and one was delivered twice (ciI;
          // noted for the next stop).
          for (const text of texts) await keel.sendMessage(runId, text);
          const state = await waitForState(
            keel,
            runId,
            (current) =>
              current.answers > answers && current.queuedMessages === 0 && current.phase === 'idle',
          );
          answers = state.answers;
        }
        const last = await keel.getRunState(runId);
        expect(last.continuedAsNew).toBeGreaterThanOrEqual(3);
        await keel.endSession(runId);
        const result = await keel.waitForResult(runId);
        expect(result.status).toBe('completed');

        // Every message reached the model once (a batch in the order its updates landed), and every
        // turn asked for truncation.
        // A turn whose attempt is retried (a heartbeat missed on a busy machine) sends the same request
        // again: count each distinct request once.
        const seen = new Set<string>();
        const distinct = model.requests.filter((request) => {
          const key = JSON.stringify(request.body);
          if (seen.has(key)) return false;
          seen.add(key);
          return true;
        });
        const delivered = distinct.flatMap((request) =>
          (request.body.input as { role?: string; content?: unknown }[])
            .filter((item) => item.role === 'user')
            .map((item) => String(item.content)),
        );
        const number = (text: string): number => Number(text.split(' ')[1]);
        expect(delivered.map(number).sort((a, b) => a - b)).toEqual(
          Array.from({ length: MESSAGES }, (_, index) => index + 1),
        );
        expect(model.requests.every((request) => request.body.truncation === 'auto')).toBe(true);
        // The conversation was one chain throughout, across executions.
        expect(
          model.requests.slice(1).every((request) => typeof request.body.previous_response_id === 'string'),
        ).toBe(true);
      });
    } finally {
      await model.close();
    }
  }, 180_000);

  it('without truncation, the same model server refuses a conversation past its window', async () => {
    const model = await ScriptedModel.start(() => reply.text('ok'), { contextWindowItems: 3 });
    try {
      await withTestWorker(server, { model, modelMode: 'foreground' }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'one', session: true, truncation: 'disabled' });
        await waitForState(keel, runId, (state) => state.answers >= 1);
        for (const text of ['two', 'three', 'four']) await keel.sendMessage(runId, text);
        const result = await keel.waitForResult(runId);
        expect(result).toMatchObject({ status: 'failed', errorType: 'ModelError.BadRequest' });
        expect(result.status === 'failed' && result.reason).toContain('context window');
      });
    } finally {
      await model.close();
    }
  });
});
