import { randomUUID } from 'node:crypto';
import { CancelledFailure, Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addUsage, emptyUsage } from '../../src/contract/usage.js';
import type { Usage } from '../../src/contract/usage.js';
import { freePort } from '../support/free-port.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { deferred } from '../support/deferred.js';
import { executionChain, waitForState } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { RecordedRequest, ScriptStep } from '../support/scripted-model.js';
import { blockingTool, echoTool, localEchoTool } from '../support/test-tools.js';
import { ACTIVITY_NAMES } from '../../src/contract/activity-names.js';
import { createLocalEnvironment } from '../../src/cli/dev-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** The usage the scripted model reports for a request, as Keel reads it. */
function usageOf(request: RecordedRequest, outputItems: number): Usage {
  const input = 100 + request.index;
  const output = 10 + outputItems;
  return {
    inputTokens: input,
    cachedInputTokens: 0,
    outputTokens: output,
    reasoningTokens: 0,
    totalTokens: input + output,
  };
}

/** `turns - 1` turns that each call echo, then an answer. */
function echoTurns(turns: number): ScriptStep[] {
  return [
    ...Array.from({ length: turns - 1 }, (_, index) =>
      reply.calls({ name: 'echo', arguments: { text: `t${index + 1}` } }),
    ),
    reply.text('done'),
  ];
}

describe('continue-as-new', () => {
  it('continues every N turns as the same run: one id, one response chain, totals and events carried', async () => {
    const hold = deferred();
    const steps = echoTurns(8);
    steps[4] = reply.held(steps[4]!, hold.promise);
    const model = await ScriptedModel.start(steps);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'echo a lot', continueAsNewAfterTurns: 3, maxTurns: 20 });
        // Turn 5 is in the second execution: the state query, by workflow id, reaches it.
        const middle = await waitForState(
          keel,
          runId,
          (state) => state.turn === 5 && state.phase === 'thinking',
        );
        expect(middle).toMatchObject({ continuedAsNew: 1, toolCalls: 4, lastResponseId: 'resp_4' });
        expect(
          middle.events.filter((event) => event.kind === 'observation').map((event) => event.turn),
        ).toEqual([1, 2, 3, 4]);
        hold.resolve();

        const result = await keel.waitForResult(runId);
        const expectedUsage = model.requests
          .map((request) => usageOf(request, 1))
          .reduce(addUsage, emptyUsage);
        expect(result).toMatchObject({
          status: 'completed',
          finalText: 'done',
          turns: 8,
          toolCalls: 7,
          lastResponseId: 'resp_8',
        });
        expect(result.usage).toEqual(expectedUsage);
        // One conversation on the model server: every turn chains from the one before, across executions.
        expect(model.requests.map((request) => request.body.previous_response_id)).toEqual([
          undefined,
          'resp_1',
          'resp_2',
          'resp_3',
          'resp_4',
          'resp_5',
          'resp_6',
          'resp_7',
        ]);
        expect(model.requests[3]?.body.input).toEqual([
          { type: 'function_call_output', call_id: 'call_3_1', output: 'echo: t3' },
        ]);
        const chain = await executionChain(server.client, runId);
        expect(chain).toHaveLength(3);
        for (const execution of chain.slice(0, -1)) {
          expect(execution.events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
        }
        const state = await keel.getRunState(runId);
        expect(state).toMatchObject({ continuedAsNew: 2, turn: 8, usage: expectedUsage });
        expect(state.usageByTurn).toHaveLength(8);
        expect(state.events.filter((event) => event.kind === 'turn').map((event) => event.turn)).toEqual([
          1, 2, 3, 4, 5, 6, 7, 8,
        ]);
      });
      model.assertDone();
    } finally {
      await model.close();
    }
  });

  it('cancels the current execution of a continued run by its workflow id', async () => {
    const blocking = blockingTool();
    const model = await ScriptedModel.start([
      reply.calls({ name: 'echo', arguments: { text: 'one' } }),
      reply.calls({ name: 'block', arguments: { label: 'two' } }),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool, blocking.tool] }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'then block', continueAsNewAfterTurns: 1 });
        await blocking.started.promise;
        await keel.cancelRun(runId);
        const error = await keel.waitForResult(runId).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(WorkflowFailedError);
        expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
        expect(await blocking.aborted.promise).toBeTruthy();
        expect(await executionChain(server.client, runId)).toHaveLength(2);
      });
    } finally {
      await model.close();
    }
  });
});

/**
 * A server of this test's own with continue-as-new suggested early, so a long run goes through many
 * executions in little time. Temporal's default suggestion comes at 4,096 events or 4 MiB. At 100
 * events a turn (about 12 events) fits 8 times: 120 turns cross 14 executions, each handing its
 * totals, chain and conversation to the next. `KEEL_LONG_RUN_TURNS` makes it longer (1,000 turns
 * cross 120).
 */
const SUGGEST_AT_EVENTS = 100;
const LONG_RUN_TURNS = Number(process.env.KEEL_LONG_RUN_TURNS ?? 120);

describe(`a ${LONG_RUN_TURNS}-turn run with continue-as-new suggested at ${SUGGEST_AT_EVENTS} events`, () => {
  it(
    'completes with every turn, bounded history per execution and the totals of all of them',
    { timeout: 600_000 },
    async () => {
      const port = await freePort();
      const environment = await createLocalEnvironment({
        server: {
          executable: inject('temporalExecutable'),
          ip: '127.0.0.1',
          port,
          log: { format: 'pretty', level: 'error' },
          extraArgs: [
            '--dynamic-config-value',
            `limit.historyCount.suggestContinueAsNew=${SUGGEST_AT_EVENTS}`,
            '--dynamic-config-value',
            'limit.historySize.suggestContinueAsNew=262144',
          ],
        },
      });
      const address = `127.0.0.1:${port}`;
      const nativeConnection = await NativeConnection.connect({ address });
      const connection = await Connection.connect({ address });
      const own: TestServer = {
        connection: nativeConnection,
        client: new Client({ connection }),
        close: () => Promise.resolve(),
      };
      // The model answers from a policy: a call to echo until the last turn, then the answer. Echo runs
      // as a local tool, which halves the time a turn takes; continue-as-new works the same either way.
      const model = await ScriptedModel.start((request) =>
        request.index + 1 < LONG_RUN_TURNS
          ? reply.calls({ name: 'echo', arguments: { text: `turn ${request.index + 1}` } })
          : reply.text('all turns done'),
      );
      try {
        await withTestWorker(
          own,
          {
            model,
            tools: [localEchoTool],
            modelMode: 'foreground',
            searchAttributes: false,
            taskQueue: `long-${randomUUID()}`,
          },
          async ({ keel }) => {
            const runId = await keel.startRun({ task: 'a very long job', maxTurns: LONG_RUN_TURNS });
            const result = await keel.waitForResult(runId);
            expect(result).toMatchObject({
              status: 'completed',
              finalText: 'all turns done',
              turns: LONG_RUN_TURNS,
              toolCalls: LONG_RUN_TURNS - 1,
            });
            expect(result.usage.totalTokens).toBe(
              model.requests.map((request) => usageOf(request, 1).totalTokens).reduce((a, b) => a + b, 0),
            );
            expect(model.requests.map((request) => request.body.previous_response_id)).toEqual(
              model.requests.map((_, index) => (index === 0 ? undefined : `resp_${index}`)),
            );

            const chain = await executionChain(own.client, runId);
            const turnsPer = chain.map(
              (execution) =>
                execution.events.filter(
                  (event) =>
                    event.activityTaskScheduledEventAttributes?.activityType?.name ===
                    ACTIVITY_NAMES.callModel,
                ).length,
            );
            expect(turnsPer.reduce((a, b) => a + b, 0)).toBe(LONG_RUN_TURNS);
            expect(chain.length).toBeGreaterThan(1);
            const largestEvents = Math.max(...chain.map((execution) => execution.events.length));
            const largestBytes = Math.max(...chain.map((execution) => execution.bytes));
            // Each execution stops soon after the suggestion: one turn's events (and a little) past it.
            expect(largestEvents).toBeLessThan(SUGGEST_AT_EVENTS + 40);
            const full = chain.slice(0, -1);
            const perTurnBytes =
              full.reduce((sum, execution) => sum + execution.bytes, 0) /
              turnsPer.slice(0, -1).reduce((a, b) => a + b, 0);
            const perTurnEvents =
              full.reduce((sum, execution) => sum + execution.events.length, 0) /
              turnsPer.slice(0, -1).reduce((a, b) => a + b, 0);
            console.log(
              `[long run] ${LONG_RUN_TURNS} turns in ${chain.length} executions; per execution at most ` +
                `${largestEvents} events / ${largestBytes} bytes; per turn ${perTurnEvents.toFixed(1)} events / ` +
                `${perTurnBytes.toFixed(0)} bytes; turns per execution ${Math.min(...turnsPer.slice(0, -1))}-${Math.max(...turnsPer)}`,
            );
          },
        );
        model.assertDone();
      } finally {
        await model.close();
        await connection.close();
        await nativeConnection.close();
        await environment.teardown();
      }
    },
  );
});
