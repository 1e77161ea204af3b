import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keelStatus, keelTokens } from '../../src/workflows/search-attributes.js';
import { connectTestServer } from '../support/harness.js';
import { withScenario } from '../support/scenario.js';
import type { TestServer, TestWorkerOptions } from '../support/harness.js';
import { executionChain, waitForState } from '../support/run-state.js';
import { reply } from '../support/scripted-model.js';
import type { ScriptStep } from '../support/scripted-model.js';
import { blockingTool, echoTool } from '../support/test-tools.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

const echo = (text: string): ScriptStep => reply.calls({ name: 'echo', arguments: { text } });

/** A worker with echo; a budget may stop a run before the script is used up. */
const worker = (options: Omit<TestWorkerOptions, 'model'> = {}) => ({
  tools: [echoTool],
  allStepsUsed: false,
  ...options,
});

// The scripted model reports 100 + n input and 11 output tokens for its nth request (from 0).
describe('budgets', () => {
  it('stops at the token budget with max_tokens and the usage so far; the last turn’s calls do not run', async () => {
    await withScenario(
      server,
      [echo('one'), echo('two'), echo('three')],
      worker(),
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'spend', maxTotalTokens: 200 });
        const result = await keel.waitForResult(runId);
        expect(result).toMatchObject({ status: 'max_tokens', turns: 2, toolCalls: 1, lastText: '' });
        expect(result.usage.totalTokens).toBe(111 + 112);
        expect(model.requests).toHaveLength(2);
        const { typedSearchAttributes } = await server.client.workflow.getHandle(runId).describe();
        expect(typedSearchAttributes.get(keelStatus)).toBe('max_tokens');
        expect(typedSearchAttributes.get(keelTokens)).toBe(223);
      },
    );
  });

  it('applies the worker’s budget to runs that set none, and the run’s own first', async () => {
    await withScenario(
      server,
      [echo('a'), echo('b'), echo('c')],
      worker({ budgets: { maxTotalTokens: 100 } }),
      async ({ keel }) => {
        expect(await keel.waitForResult(await keel.startRun({ task: 'worker budget' }))).toMatchObject({
          status: 'max_tokens',
          turns: 1,
        });
        expect(
          await keel.waitForResult(await keel.startRun({ task: 'own budget', maxTotalTokens: 200 })),
        ).toMatchObject({ status: 'max_tokens', turns: 2 });
      },
    );
  });

  it('prices every turn, shows the cost in state and result, and stops at the cost budget', async () => {
    // $1,000 per million tokens: a turn of 111 tokens costs $0.111.
    const prices = { 'scripted-model': { input: 1000, output: 1000 } };
    await withScenario(
      server,
      [echo('one'), echo('two'), echo('three')],
      worker({ prices }),
      async ({ keel }) => {
        const runId = await keel.startRun({ task: 'spend money', maxCostUsd: 0.2 });
        const result = await keel.waitForResult(runId);
        expect(result).toMatchObject({ status: 'max_cost', turns: 2, toolCalls: 1 });
        expect(result.costUsd).toBeCloseTo(0.223, 9);
        expect((await keel.getRunState(runId)).costUsd).toBeCloseTo(0.223, 9);
      },
    );
  });

  it('refuses a cost budget for a model the worker has no price for', async () => {
    await withScenario(server, [], worker(), async ({ keel, model }) => {
      const runId = await keel.startRun({ task: 'spend', maxCostUsd: 1 });
      const error = await keel.waitForResult(runId).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      expect((error as WorkflowFailedError).cause?.message).toContain(
        "maxCostUsd: the worker has no price for model scripted-model; add it to the worker's KEEL_MODEL_PRICES",
      );
      expect(model.requests).toHaveLength(0);
    });
  });

  it('ends with max_time at the first boundary after the time budget', async () => {
    const blocking = blockingTool();
    await withScenario(
      server,
      [reply.calls({ name: 'block', arguments: { label: 'slow' } })],
      worker({ tools: [blocking.tool] }),
      async ({ keel }) => {
        const runId = await keel.startRun({ task: 'slow', maxDurationSeconds: 1 });
        await blocking.started.promise;
        // The budget's timer fires while the tool runs; the run stops once the tool is done.
        await waitForTimerFired(runId);
        blocking.release.resolve('finally');
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'max_time', turns: 1, toolCalls: 1 });
      },
    );
  });

  it('counts the time budget from the first execution when the run continues as new', async () => {
    await withScenario(server, [echo('a'), echo('b'), reply.text('in time')], worker(), async ({ keel }) => {
      const runId = await keel.startRun({
        task: 'quick',
        maxDurationSeconds: 60,
        continueAsNewAfterTurns: 1,
      });
      expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', turns: 3 });
      const chain = await executionChain(server.client, runId);
      expect(chain).toHaveLength(3);
      const timers = chain.map((execution) => {
        const started = execution.events.find((event) => event.timerStartedEventAttributes);
        const timeout = started?.timerStartedEventAttributes?.startToFireTimeout;
        // The workflow's clock: the time of its first workflow task.
        const startedAt = execution.events.find(
          (event) => event.workflowTaskStartedEventAttributes,
        )!.eventTime!;
        return {
          seconds: Number(timeout?.seconds ?? 0) + (timeout?.nanos ?? 0) / 1e9,
          at: Number(startedAt.seconds ?? 0) + (startedAt.nanos ?? 0) / 1e9,
        };
      });
      expect(timers[0]!.seconds).toBe(60);
      // Each later execution's timer is what is left: 60 s minus the time since the first one started.
      for (const timer of timers.slice(1)) {
        expect(timer.seconds).toBeLessThan(60);
        expect(timer.seconds + (timer.at - timers[0]!.at)).toBeCloseTo(60, 1);
      }
    });
  });

  it('stops a wait for approval when the time budget runs out', async () => {
    await withScenario(server, [echo('needs a yes')], worker(), async ({ keel, model }) => {
      const runId = await keel.startRun({ task: 'wait', approvalTools: ['echo'], maxDurationSeconds: 1 });
      await waitForState(keel, runId, (state) => state.pendingApprovals.length === 1);
      expect(await keel.waitForResult(runId)).toMatchObject({ status: 'max_time', turns: 1, toolCalls: 1 });
      const events = (await keel.getRunState(runId)).events;
      expect(events.at(-2)).toMatchObject({ kind: 'approval', decision: 'timed_out' });
      expect(model.requests).toHaveLength(1);
    });
  });

  async function waitForTimerFired(runId: string): Promise<void> {
    for (;;) {
      const history = await server.client.workflow.getHandle(runId).fetchHistory();
      if (history.events?.some((event) => event.timerFiredEventAttributes)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
});
