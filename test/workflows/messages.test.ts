import { randomUUID } from 'node:crypto';
import { ApplicationFailure, WorkflowUpdateFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { workflowMetadataQuery } from '@temporalio/workflow';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RunUpdateRefusedError } from '../../src/client.js';
import { AGENT_RUN_WORKFLOW } from '../../src/contract/defaults.js';
import type { RunEvent } from '../../src/contract/run-state.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { waitForState } from '../support/run-state.js';
import { reply } from '../support/scripted-model.js';
import { withScenario } from '../support/scenario.js';
import { settle } from '../support/settle.js';
import { deployTool, echoTool } from '../support/test-tools.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** Starts `agentRun` with exactly these arguments, as a client that does not use KeelClient would. */
async function startRaw(taskQueue: string, args: unknown[]): Promise<string> {
  const workflowId = `raw-${randomUUID()}`;
  await server.client.workflow.start(AGENT_RUN_WORKFLOW, { taskQueue, workflowId, args });
  return workflowId;
}

/** What an update sent with these arguments was answered, or the failure it was refused with. */
async function updateOutcome(workflowId: string, name: string, args: unknown[]): Promise<unknown> {
  return server.client.workflow
    .getHandle(workflowId)
    .executeUpdate(name, { args: args as [unknown] })
    .then(
      (answer: unknown) => ({ answer }),
      (error: unknown) => error,
    );
}

function refusals(events: readonly RunEvent[]): Array<{ signal: string; reason: string }> {
  return events.flatMap((event) =>
    event.kind === 'refused' ? [{ signal: event.signal, reason: event.reason }] : [],
  );
}

describe('arguments a run cannot use', () => {
  it('fails a run started with a second input at once as KeelError.InvalidInput, with no failed workflow task', async () => {
    await withScenario(server, [], { tools: [echoTool] }, async ({ taskQueue, model }) => {
      const runId = await startRaw(taskQueue, [{ task: 'x' }, { task: 'y' }]);
      const settled = await settle(server.client, runId);
      expect(settled).toMatchObject({
        status: 'FAILED',
        failureType: 'KeelError.InvalidInput',
        failureNonRetryable: true,
      });
      expect(settled.failureMessage).toContain(
        'agentRun takes one argument, the run input, but was started with 2',
      );
      expect(model.requests).toHaveLength(0);
    });
  });

  it('refuses carried state on a first execution, even when it is well formed', async () => {
    const carried = {
      turn: 3,
      toolCalls: 0,
      usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, totalTokens: 0 },
      usageByTurn: [],
      lastResponseId: null,
      lastText: '',
      lastAnswer: null,
      answers: 0,
      events: [],
      continuedAsNew: 1,
      startedAtMs: 0,
      next: { kind: 'task' },
      queue: ['a message nobody sent'],
      ending: false,
    };
    await withScenario(server, [], { tools: [echoTool] }, async ({ taskQueue }) => {
      const settled = await settle(server.client, await startRaw(taskQueue, [{ task: 'x' }, carried]));
      expect(settled).toMatchObject({ status: 'FAILED', failureType: 'KeelError.InvalidInput' });
    });
  });

  it('takes null for an absent second argument, as some SDKs write it', async () => {
    await withScenario(server, [reply.text('done')], { tools: [echoTool] }, async ({ taskQueue }) => {
      const settled = await settle(server.client, await startRaw(taskQueue, [{ task: 'x' }, null]));
      expect(settled.status).toBe('COMPLETED');
    });
  });

  it('fails a run with more than two arguments', async () => {
    await withScenario(server, [], { tools: [echoTool] }, async ({ taskQueue }) => {
      const settled = await settle(server.client, await startRaw(taskQueue, [{ task: 'x' }, null, 'z']));
      expect(settled).toMatchObject({ status: 'FAILED', failureType: 'KeelError.InvalidInput' });
      expect(settled.failureMessage).toContain('but was started with 3');
    });
  });

  it('answers a model that calls tools named after Object.prototype members, with toolTimeouts set', async () => {
    await withScenario(
      server,
      [
        reply.calls(
          { name: 'constructor', arguments: {} },
          { name: 'toString', arguments: {} },
          { name: '__proto__', arguments: {} },
        ),
        reply.text('ok'),
      ],
      { tools: [echoTool] },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'x', toolTimeouts: { echo: 5 } });
        const settled = await settle(server.client, runId);
        expect(settled.status).toBe('COMPLETED');
        const outputs = (model.requests[1]?.body.input ?? []).map(
          (item) => JSON.parse(item.output as string) as { error: string },
        );
        expect(outputs.map((output) => output.error)).toEqual([
          'unknown_tool',
          'unknown_tool',
          'unknown_tool',
        ]);
      },
    );
  });

  it('refuses a maxCostUsd for a model named after an Object.prototype member, which has no price', async () => {
    await withScenario(
      server,
      [],
      { tools: [echoTool], prices: { 'scripted-model': { input: 1, output: 1 } } },
      async ({ taskQueue }) => {
        const settled = await settle(
          server.client,
          await startRaw(taskQueue, [{ task: 'x', model: 'constructor', maxCostUsd: 1 }]),
        );
        expect(settled).toMatchObject({ status: 'FAILED', failureType: 'KeelError.InvalidInput' });
        expect(settled.failureMessage).toContain('no price for model constructor');
      },
    );
  });
});

describe('updates', () => {
  it('refuses an invalid update as a non-retryable KeelError.InvalidUpdate', async () => {
    await withScenario(
      server,
      [reply.text('first answer'), reply.text('second answer')],
      { tools: [echoTool] },
      async ({ keel }) => {
        const runId = await keel.startRun({ task: 'x', session: true });
        await waitForState(keel, runId, (state) => state.phase === 'idle');
        const refusedWith = async (name: string, args: unknown[]): Promise<ApplicationFailure> => {
          const error = await updateOutcome(runId, name, args);
          expect(error, `${name} ${JSON.stringify(args)}`).toBeInstanceOf(WorkflowUpdateFailedError);
          const cause = (error as WorkflowUpdateFailedError).cause;
          expect(cause).toBeInstanceOf(ApplicationFailure);
          return cause as ApplicationFailure;
        };
        for (const [name, args] of [
          ['send', [{ text: '   ' }]],
          ['send', [{ text: 'a' }, { text: 'b' }]],
          ['send', []],
          ['approve', [{ callId: 'call_9_9' }]],
          ['reject', [{ callId: 7 }]],
          ['endSession', [{ now: true }]],
        ] as const) {
          const failure = await refusedWith(name, [...args]);
          expect({ name, type: failure.type, nonRetryable: failure.nonRetryable }).toEqual({
            name,
            type: 'KeelError.InvalidUpdate',
            nonRetryable: true,
          });
        }
        // KeelClient says the same: the refusal keeps Temporal's failure as its cause.
        const refused = await keel.sendMessage(runId, ' ').catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(RunUpdateRefusedError);
        expect((refused as RunUpdateRefusedError).cause).toMatchObject({
          type: 'KeelError.InvalidUpdate',
          nonRetryable: true,
        });
        // No handler at all: Temporal refuses it, also for good.
        expect((await refusedWith('frobnicate', [{}])).nonRetryable).toBe(true);
        expect(await keel.sendMessage(runId, 'and now?')).toEqual({ queued: 1 });
        await waitForState(keel, runId, (state) => state.answers === 2 && state.phase === 'idle');
        await keel.endSession(runId);
        expect(await keel.waitForResult(runId)).toMatchObject({
          status: 'completed',
          finalText: 'second answer',
        });
      },
    );
  });
});

describe('signals', () => {
  it('delivers send and endSession signals as the updates would, and records every other signal as refused', async () => {
    await withScenario(
      server,
      [reply.text('first answer'), reply.text('second answer')],
      { tools: [echoTool] },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'x', session: true });
        const handle = server.client.workflow.getHandle(runId);
        await waitForState(keel, runId, (state) => state.phase === 'idle');
        await handle.signal('send', { text: '   ' });
        await handle.signal('frobnicate', { anything: 1 });
        await handle.signal('cancel');
        const refused = await waitForState(keel, runId, (state) => refusals(state.events).length === 3);
        const [blank, unknown, cancel] = refusals(refused.events);
        expect([blank?.signal, unknown?.signal, cancel?.signal]).toEqual(['send', 'frobnicate', 'cancel']);
        expect(blank?.reason).toBe('Invalid message: text: must not be empty');
        expect(unknown?.reason).toContain('send, approve, reject and endSession');
        expect(cancel?.reason).toContain('cancel the workflow (`temporal workflow cancel`');
        expect((await handle.query(workflowMetadataQuery)).currentDetails).toContain(
          'Last refused signal: `cancel`',
        );
        await handle.signal('send', { text: 'a follow-up by signal' });
        await waitForState(keel, runId, (state) => state.answers === 2 && state.phase === 'idle');
        expect(model.requests[1]?.body.input).toEqual([
          { type: 'message', role: 'user', content: 'a follow-up by signal' },
        ]);
        await handle.signal('endSession');
        expect(await keel.waitForResult(runId)).toMatchObject({
          status: 'completed',
          finalText: 'second answer',
        });

        // The handling is deterministic: the history replays against the same workflow code.
        const history = await handle.fetchHistory();
        await Worker.runReplayHistory(
          { workflowBundle: { codePath: inject('workflowBundlePath') } },
          history,
          runId,
        );
      },
    );
  });

  it('approves and rejects calls through signals, refusing a decision for a call that does not wait', async () => {
    const deploy = deployTool();
    await withScenario(
      server,
      [
        reply.calls({ name: 'deploy', arguments: { service: 'api', replicas: 2 } }),
        reply.calls({ name: 'deploy', arguments: { service: 'db', replicas: 1 } }),
        reply.text('done'),
      ],
      { tools: [deploy.tool] },
      async ({ keel }) => {
        const runId = await keel.startRun({ task: 'deploy' });
        const handle = server.client.workflow.getHandle(runId);
        await waitForState(keel, runId, (state) => state.pendingApprovals[0]?.callId === 'call_1_1');
        await handle.signal('approve', { callId: 'call_9_9' });
        await handle.signal('approve', {
          callId: 'call_1_1',
          arguments: { service: 'api', replicas: 'many' },
        });
        await handle.signal('approve', { callId: 'call_1_1' });
        await waitForState(keel, runId, (state) => state.pendingApprovals[0]?.callId === 'call_2_1');
        await handle.signal('reject', { callId: 'call_2_1', reason: 'frozen' });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', toolCalls: 2 });
        expect(deploy.ran).toEqual([{ service: 'api', replicas: 2 }]);
        const state = await keel.getRunState(runId);
        const [unknownCall, badArguments, ...more] = refusals(state.events);
        expect(more).toEqual([]);
        expect([unknownCall?.signal, badArguments?.signal]).toEqual(['approve', 'approve']);
        expect(unknownCall?.reason).toContain('No call call_9_9 waits for approval');
        expect(badArguments?.reason).toContain('The edited arguments for deploy are invalid');
        expect(state.events.flatMap((event) => (event.kind === 'approval' ? [event.decision] : []))).toEqual([
          'requested',
          'approved',
          'requested',
          'rejected',
        ]);
      },
    );
  });
});
