import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { ScriptStep } from '../support/scripted-model.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** What LiteLLM answered when its upstream stream failed: `completed`, nothing in it, zero usage. */
const empty: ScriptStep = {
  kind: 'response',
  build: (request, ids) => ({
    id: ids.responseId,
    object: 'response',
    created_at: 1_700_000_000,
    status: 'completed',
    error: null,
    incomplete_details: null,
    model: request.body.model,
    output: [],
    usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
  }),
};

describe('a model turn that says nothing', () => {
  it('is not an answer: the turn is tried again, and the run completes with the real one', async () => {
    const model = await ScriptedModel.start([empty, reply.text('the real answer')]);
    try {
      await withTestWorker(server, { model, modelMode: 'foreground' }, async ({ keel }) => {
        const result = await keel.waitForResult(await keel.startRun({ task: 'answer me' }));
        expect(result).toMatchObject({ status: 'completed', finalText: 'the real answer', turns: 1 });
      });
      model.assertDone();
      expect(model.requests).toHaveLength(2);
    } finally {
      await model.close();
    }
  });
});
