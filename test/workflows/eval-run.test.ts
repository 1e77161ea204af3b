import { ApplicationFailure, CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidEvalInputError } from '../../src/client.js';
import type { RecordedRequest } from '../../src/testing/script.js';
import { EVAL_RUN_WORKFLOW } from '../../src/workflows/eval-messages.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyEvents } from '../support/history.js';
import { withScenario } from '../support/scenario.js';
import { reply } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';

const { EventType } = proto.temporal.api.enums.v1;

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

const CHILD_CLOSED = new Set([
  EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED,
  EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED,
  EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED,
  EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED,
  EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT,
]);

/** From the eval's history: the children in the order they were started, and the most open at once. */
async function childStarts(evalId: string): Promise<{ order: string[]; mostAtOnce: number }> {
  const order: string[] = [];
  let open = 0;
  let mostAtOnce = 0;
  for (const event of await historyEvents(server.client, evalId)) {
    if (event.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED) {
      order.push(event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? '?');
      open += 1;
      mostAtOnce = Math.max(mostAtOnce, open);
    }
    if (event.eventType !== null && event.eventType !== undefined && CHILD_CLOSED.has(event.eventType)) {
      open -= 1;
    }
  }
  return { order, mostAtOnce };
}

/** Each case's model answers by its instructions, so one scripted model serves every child. */
function byCase(request: RecordedRequest) {
  const answered = request.body.input.some((item) => item.type === 'function_call_output');
  switch (request.body.instructions ?? '') {
    case 'case a':
      return answered ? reply.text('A') : reply.calls({ name: 'echo', arguments: { text: 'hi' } });
    case 'case b':
      return reply.error(400, 'the request is malformed');
    case 'case c':
      return reply.calls({ name: 'echo', arguments: { text: 'again' } });
    case 'case hang':
      return reply.hang();
    default:
      return reply.text('D');
  }
}

describe('evalRun', () => {
  it('runs one child per case, in order, at most `concurrency` at once, and records how each ended', async () => {
    await withScenario(server, byCase, { tools: [echoTool] }, async ({ keel, model }) => {
      const evalId = await keel.startEval({
        concurrency: 2,
        cases: [
          {
            caseId: 'a',
            input: {
              task: 'first',
              instructions: 'case a',
              replay: {
                calls: [
                  {
                    name: 'echo',
                    argumentsJson: '{"text":"hi"}',
                    answer: { ok: true, output: 'recorded hi' },
                  },
                ],
              },
            },
          },
          { caseId: 'b', input: { task: 'second', instructions: 'case b' } },
          { caseId: 'c', input: { task: 'third', instructions: 'case c', maxTurns: 1 } },
          { caseId: 'd', input: { task: 'fourth', instructions: 'case d' } },
          { caseId: 'e', input: { task: 'fifth', instructions: 'case e' } },
        ],
      });
      expect(evalId).toMatch(/^keel-eval-[0-9a-f-]{36}$/);
      const result = await keel.waitForEval(evalId);
      expect(result.cases).toEqual([
        { caseId: 'a', runId: `${evalId}.a`, status: 'completed' },
        { caseId: 'b', runId: `${evalId}.b`, status: 'failed', errorType: 'ModelError.BadRequest' },
        { caseId: 'c', runId: `${evalId}.c`, status: 'max_turns' },
        { caseId: 'd', runId: `${evalId}.d`, status: 'completed' },
        { caseId: 'e', runId: `${evalId}.e`, status: 'completed' },
      ]);
      expect(await keel.waitForResult(`${evalId}.a`)).toMatchObject({ status: 'completed', finalText: 'A' });
      // The case's replay reached its child: the model heard the recorded answer, not the tool's.
      const answered = model.requests.find(
        (request) =>
          request.body.instructions === 'case a' &&
          request.body.input.some((item) => item.type === 'function_call_output'),
      );
      expect(answered?.body.input).toContainEqual(expect.objectContaining({ output: 'recorded hi' }));

      const starts = await childStarts(evalId);
      expect(starts.order).toEqual(['a', 'b', 'c', 'd', 'e'].map((caseId) => `${evalId}.${caseId}`));
      expect(starts.mostAtOnce).toBe(2);
      const state = await keel.getEvalState(evalId);
      expect([state.total, state.running]).toEqual([5, []]);
      expect([...state.ended].sort((x, y) => x.caseId.localeCompare(y.caseId))).toEqual(result.cases);
      const child = await server.client.workflow.getHandle(`${evalId}.a`).describe();
      expect(child.parentExecution?.workflowId).toBe(evalId);
      expect(await child.staticSummary()).toBe(`eval ${evalId} · case a: first`);
    });
  });

  it('cancelling the eval cancels its running child and starts no more', async () => {
    await withScenario(server, byCase, { tools: [echoTool] }, async ({ keel, model }) => {
      const evalId = await keel.startEval({
        concurrency: 1,
        cases: [
          { caseId: 'hang', input: { task: 'wait', instructions: 'case hang', heartbeatTimeoutSeconds: 2 } },
          { caseId: 'later', input: { task: 'never', instructions: 'case d' } },
        ],
      });
      await model.waitForRequests(1);
      expect(await keel.getEvalState(evalId)).toEqual({ total: 2, running: ['hang'], ended: [] });
      await server.client.workflow.getHandle(evalId).cancel();

      const error = await keel.waitForEval(evalId).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
      const child = await server.client.workflow.getHandle(`${evalId}.hang`).describe();
      expect(child.status.name).toBe('CANCELLED');
      await expect(server.client.workflow.getHandle(`${evalId}.later`).describe()).rejects.toBeInstanceOf(
        WorkflowNotFoundError,
      );
      expect(model.requests).toHaveLength(1);
    });
  });

  it('refuses an eval too large for one workflow input before anything starts, and says how to split it', async () => {
    await withScenario(server, [], {}, async ({ keel }) => {
      // 12 cases of 190,000 characters of instructions each: about 2.3 MB, over the server's 2 MB;
      // 30 cases, about 5.7 MB, over gRPC's 4 MB message limit too (refused before the server's check).
      for (const count of [12, 30]) {
        const cases = Array.from({ length: count }, (_, index) => ({
          caseId: `big-${index}`,
          input: { task: 'x', instructions: 'i'.repeat(190_000) },
        }));
        const evalId = `big-eval-${count}-${Date.now()}`;
        const error: unknown = await keel.startEval({ cases }, { evalId }).catch((caught: unknown) => caught);
        expect(error, String(error)).toBeInstanceOf(InvalidEvalInputError);
        expect((error as Error).message).toMatch(/\d\.\d MB/u);
        expect((error as Error).message).toContain(`${count} cases`);
        expect((error as Error).message).toMatch(/split/iu);
        await expect(server.client.workflow.getHandle(evalId).describe()).rejects.toThrow(
          WorkflowNotFoundError,
        );
      }
    });
  });

  it('refuses a bad input: in the client before starting, and in the workflow with KeelError.InvalidInput', async () => {
    await withScenario(server, [], {}, async ({ keel, taskQueue }) => {
      const twice = { caseId: 'same', input: { task: 'x' } };
      await expect(keel.startEval({ cases: [twice, twice] })).rejects.toThrow(InvalidEvalInputError);
      await expect(keel.startEval({ cases: [{ caseId: 'bad id!', input: { task: 'x' } }] })).rejects.toThrow(
        /cases\[0\]\.caseId/,
      );

      const handle = await server.client.workflow.start(EVAL_RUN_WORKFLOW, {
        taskQueue,
        workflowId: `bad-eval-${Date.now()}`,
        args: [{ cases: [] }],
      });
      const error: unknown = await handle.result().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      const cause = (error as WorkflowFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect((cause as ApplicationFailure).type).toBe('KeelError.InvalidInput');
      expect((cause as ApplicationFailure).message).toMatch(/Invalid eval input:\ncases/);
    });
  });
});
