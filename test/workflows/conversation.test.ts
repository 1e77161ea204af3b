import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunUpdateRefusedError } from '../../src/client.js';
import { keelStatus } from '../../src/workflows/search-attributes.js';
import { deferred } from '../support/deferred.js';
import { connectTestServer } from '../support/harness.js';
import { withScenario } from '../support/scenario.js';
import type { TestServer } from '../support/harness.js';
import { waitForState } from '../support/run-state.js';
import { reply } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('messages and sessions', () => {
  it('delivers a message sent mid-turn at the next turn boundary, after the observations', async () => {
    const hold = deferred();
    await withScenario(
      server,
      [
        reply.held(reply.calls({ name: 'echo', arguments: { text: 'a' } }), hold.promise),
        reply.text('Done, and noted.'),
      ],
      { tools: [echoTool] },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'echo a' });
        await model.waitForRequests(1);
        expect(await keel.sendMessage(runId, 'Also: be brief.')).toEqual({ queued: 1 });
        expect((await keel.getRunState(runId)).queuedMessages).toBe(1);
        hold.resolve();
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', turns: 2 });
        expect(model.requests[1]?.body).toMatchObject({
          previous_response_id: 'resp_1',
          input: [
            { type: 'function_call_output', call_id: 'call_1_1', output: 'echo: a' },
            { type: 'message', role: 'user', content: 'Also: be brief.' },
          ],
        });
        const state = await keel.getRunState(runId);
        expect(state.queuedMessages).toBe(0);
        expect(state.events.filter((event) => event.kind === 'message')).toMatchObject([
          { kind: 'message', turn: 2, text: 'Also: be brief.' },
        ]);
        // The run has ended: a message now is refused, not silently dropped.
        await expect(keel.sendMessage(runId, 'too late')).rejects.toThrow(
          new RunUpdateRefusedError(`Run ${runId} has ended`),
        );
      },
    );
  });

  it('answers a message that arrived while the model was answering, instead of ending', async () => {
    const hold = deferred();
    await withScenario(
      server,
      [reply.held(reply.text('First answer.'), hold.promise), reply.text('Second answer.')],
      { tools: [] },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'answer' });
        await model.waitForRequests(1);
        await keel.sendMessage(runId, 'And one more thing?');
        hold.resolve();
        expect(await keel.waitForResult(runId)).toMatchObject({
          status: 'completed',
          finalText: 'Second answer.',
          turns: 2,
        });
        expect(model.requests[1]?.body).toMatchObject({
          previous_response_id: 'resp_1',
          input: [{ type: 'message', role: 'user', content: 'And one more thing?' }],
        });
      },
    );
  });

  it('keeps a session open between answers, continues the same chain, and ends on request', async () => {
    await withScenario(
      server,
      [reply.text('Hello! What next?'), reply.text('Here is the plan.')],
      { tools: [echoTool] },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'Say hello', session: true });
        const idle = await waitForState(keel, runId, (state) => state.phase === 'idle');
        expect(idle).toMatchObject({ answers: 1, lastAnswer: 'Hello! What next?', result: null });
        const handle = server.client.workflow.getHandle(runId);
        expect((await handle.describe()).typedSearchAttributes.get(keelStatus)).toBe('idle');

        await expect(keel.sendMessage(runId, '   ')).rejects.toThrow(/text: must not be empty/);
        await keel.sendMessage(runId, 'Make a plan.');
        await waitForState(keel, runId, (state) => state.answers === 2 && state.phase === 'idle');
        expect(model.requests[1]?.body).toMatchObject({
          previous_response_id: 'resp_1',
          input: [{ type: 'message', role: 'user', content: 'Make a plan.' }],
        });
        await keel.endSession(runId);
        expect(await keel.waitForResult(runId)).toMatchObject({
          status: 'completed',
          finalText: 'Here is the plan.',
          turns: 2,
        });
      },
    );
  });

  it('ends an idle session after idleTimeoutSeconds, and refuses session-only requests elsewhere', async () => {
    await withScenario(
      server,
      [reply.text('Anything else?'), reply.text('plain')],
      { tools: [] },
      async ({ keel }) => {
        const session = await keel.startRun({ task: 'hi', session: true, idleTimeoutSeconds: 1 });
        expect(await keel.waitForResult(session)).toMatchObject({
          status: 'completed',
          finalText: 'Anything else?',
          turns: 1,
        });
        const plain = await keel.startRun({ task: 'plain' });
        await expect(keel.endSession(plain)).rejects.toThrow(/not a session|has ended/);
        await keel.waitForResult(plain);
      },
    );
  });

  it('cancels an idle session: it ends as Canceled and says so in its search attributes', async () => {
    await withScenario(server, [reply.text('Waiting for you.')], { tools: [] }, async ({ keel }) => {
      const runId = await keel.startRun({ task: 'wait', session: true });
      await waitForState(keel, runId, (state) => state.phase === 'idle');
      await keel.cancelRun(runId);
      const error = await keel.waitForResult(runId).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
      const { typedSearchAttributes } = await server.client.workflow.getHandle(runId).describe();
      expect(typedSearchAttributes.get(keelStatus)).toBe('cancelled');
    });
  });

  it('refuses an idle timeout for a run that is not a session before starting anything', async () => {
    await withScenario(server, [], { tools: [] }, async ({ keel }) => {
      await expect(keel.startRun({ task: 'hi', idleTimeoutSeconds: 5 })).rejects.toThrow(
        'idleTimeoutSeconds: applies only to a session: set session to true as well',
      );
    });
  });
});
