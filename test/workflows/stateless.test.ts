import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { executionChain } from '../support/run-state.js';
import { createResponseErrors } from '../support/responses-schema.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('stateless conversations (store: false)', () => {
  it('sends the whole conversation each turn, encrypted reasoning included, and never chains', async () => {
    const model = await ScriptedModel.start([
      reply.items([{ reasoning: 'look first' }, { call: { name: 'echo', arguments: { text: 'one' } } }]),
      reply.items([{ reasoning: 'again' }, { call: { name: 'echo', arguments: { text: 'two' } } }]),
      reply.text('done'),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ keel }) => {
        // Three turns in three executions: the conversation travels across continue-as-new.
        const runId = await keel.startRun({
          task: 'echo twice',
          conversation: 'stateless',
          continueAsNewAfterTurns: 1,
        });
        expect(await keel.waitForResult(runId)).toMatchObject({
          status: 'completed',
          finalText: 'done',
          turns: 3,
        });
        expect(await executionChain(server.client, runId)).toHaveLength(3);
      });
      model.assertDone();
      for (const request of model.requests) {
        expect(request.body).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
        expect(request.body.previous_response_id).toBeUndefined();
        expect(request.body.background).toBeUndefined();
      }
      // Background mode needs stored responses: stateless turns are plain requests, never polled.
      expect(model.retrievals).toEqual([]);
      const firstTurn = [
        { type: 'message', role: 'user', content: 'echo twice' },
        {
          type: 'reasoning',
          id: 'rs_0',
          summary: [{ type: 'summary_text', text: 'look first' }],
          encrypted_content: 'encrypted:resp_1:look first',
        },
        {
          type: 'function_call',
          id: 'fc_1',
          call_id: 'call_1_1',
          name: 'echo',
          arguments: '{"text":"one"}',
          status: 'completed',
        },
        { type: 'function_call_output', call_id: 'call_1_1', output: 'echo: one' },
      ];
      expect(model.requests[0]!.body.input).toEqual(firstTurn.slice(0, 1));
      expect(model.requests[1]!.body.input).toEqual(firstTurn);
      expect(model.requests[2]!.body.input).toEqual([
        ...firstTurn,
        {
          type: 'reasoning',
          id: 'rs_0',
          summary: [{ type: 'summary_text', text: 'again' }],
          encrypted_content: 'encrypted:resp_2:again',
        },
        {
          type: 'function_call',
          id: 'fc_1',
          call_id: 'call_2_1',
          name: 'echo',
          arguments: '{"text":"two"}',
          status: 'completed',
        },
        { type: 'function_call_output', call_id: 'call_2_1', output: 'echo: two' },
      ]);
    } finally {
      await model.close();
    }
  });

  it('sends the model’s own messages back as valid input, status included', async () => {
    const model = await ScriptedModel.start([
      reply.items([{ text: 'Checking first.' }, { call: { name: 'echo', arguments: { text: 'one' } } }]),
      reply.text('done'),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'check, then echo', conversation: 'stateless' });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'done' });
      });
      model.assertDone();
      // OpenAI refuses an assistant message item without its status (the OutputMessage schema).
      expect(model.requests[1]!.body.input[1]).toEqual({
        type: 'message',
        id: 'msg_0',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Checking first.', annotations: [], logprobs: [] }],
      });
      for (const request of model.requests) expect(createResponseErrors(request.body)).toEqual([]);
    } finally {
      await model.close();
    }
  });

  it('fails at the first turn the server did not continue, not turns later, when it keeps no conversation', async () => {
    // As LiteLLM without a database does: previous_response_id is ignored, the model sees only the
    // newest input (here the tool's output), and the answer continues nothing.
    const model = await ScriptedModel.start(
      [
        reply.calls({ name: 'echo', arguments: { text: 'one' } }),
        reply.calls({ name: 'echo', arguments: { text: 'two' } }),
      ],
      { forgetsConversation: true },
    );
    try {
      await withTestWorker(
        server,
        { model, tools: [echoTool], modelMode: 'foreground' },
        async ({ keel }) => {
          const result = await keel.waitForResult(await keel.startRun({ task: 'echo' }));
          expect(result).toMatchObject({
            status: 'failed',
            errorType: 'ModelError.ConversationNotContinued',
            turns: 2,
          });
          const reason = result.status === 'failed' ? result.reason : '';
          expect(reason).toContain(
            'The model server did not continue the conversation: this turn continues response resp_1 (previous_response_id), and its answer resp_2 continues nothing.',
          );
          expect(reason).toContain('KEEL_CONVERSATION=stateless');
        },
      );
      // Not retried: the second turn was asked once.
      expect(model.requests).toHaveLength(2);
      expect(model.requests[1]!.body.previous_response_id).toBe('resp_1');
    } finally {
      await model.close();
    }
  });

  it('runs stateless when the worker says so (KEEL_CONVERSATION) and the run names no mode, on a server that keeps none', async () => {
    const model = await ScriptedModel.start(
      [reply.calls({ name: 'echo', arguments: { text: 'one' } }), reply.text('done')],
      { forgetsConversation: true },
    );
    try {
      await withTestWorker(
        server,
        { model, tools: [echoTool], conversation: 'stateless' },
        async ({ keel }) => {
          const runId = await keel.startRun({ task: 'echo', continueAsNewAfterTurns: 1 });
          expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'done' });
          // Pinned across continue-as-new: the next execution's input names the mode.
          expect(await executionChain(server.client, runId)).toHaveLength(2);
        },
      );
      model.assertDone();
      expect(model.requests.map((request) => request.body.store)).toEqual([false, false]);
      expect(model.requests[1]!.body.input[0]).toEqual({ type: 'message', role: 'user', content: 'echo' });
      expect(model.requests[1]!.body.previous_response_id).toBeUndefined();
    } finally {
      await model.close();
    }
  });

  it('fails clearly, without retrying, when a chained run’s previous response has expired', async () => {
    const model = await ScriptedModel.start([
      reply.calls({ name: 'echo', arguments: { text: 'one' } }),
      reply.error(400, "Previous response with id 'resp_1' not found.", {
        code: 'previous_response_not_found',
      }),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ keel }) => {
        const result = await keel.waitForResult(await keel.startRun({ task: 'echo' }));
        expect(result).toMatchObject({
          status: 'failed',
          errorType: 'ModelError.PreviousResponseNotFound',
          turns: 2,
        });
        expect(result.status === 'failed' && result.reason).toContain(
          'Start the run with conversation "stateless" to keep the whole conversation in the run instead.',
        );
      });
      model.assertDone();
    } finally {
      await model.close();
    }
  });
});
