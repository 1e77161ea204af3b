import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { defineAgent } from '../../src/agents/define-agent.js';
import type { Agent } from '../../src/agents/agent.js';
import { KeelClient } from '../../src/client.js';
import type { ModelRequest } from '../../src/contract/model-request.js';
import type { WorkerProfile } from '../../src/contract/tool-info.js';
import { createOpenAIClient } from '../../src/model/client.js';
import type { Tool } from '../../src/tools/define-tool.js';
import { createKeelWorker } from '../../src/worker.js';
import { cliEnvironment, runCli } from '../support/cli.js';
import { connectTestServer, temporaryWorkspace, TEST_API_KEY } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyEvents } from '../support/history.js';
import { waitForState } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { ScriptStep } from '../support/scripted-model.js';
import { addTool, deployTool, echoTool } from '../support/test-tools.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

const triage = defineAgent({
  name: 'triage',
  description: 'Sorts incoming tickets.',
  instructions: 'You triage support tickets. Answer with one label.',
  model: 'triage-model',
  tools: ['echo'],
  limits: { maxTurns: 3 },
  budgets: { maxTotalTokens: 50_000 },
});
const coder = defineAgent({ name: 'coder', instructions: 'You write code.', approvalTools: ['add'] });

/** A Keel worker with `agents`, on its own task queue, talking to a scripted model. */
async function withAgentWorker<T>(
  steps: ScriptStep[],
  options: { agents: readonly Agent[]; tools?: readonly Tool[] },
  body: (context: { keel: KeelClient; model: ScriptedModel; taskQueue: string }) => Promise<T>,
): Promise<T> {
  const model = await ScriptedModel.start(steps);
  const taskQueue = `keel-test-${randomUUID()}`;
  try {
    const worker = await createKeelWorker({
      connection: server.connection,
      namespace: inject('temporalNamespace'),
      taskQueue,
      workspace: await temporaryWorkspace(),
      stateDirectory: await mkdtemp(path.join(tmpdir(), 'keel-state-')),
      openai: createOpenAIClient({ apiKey: TEST_API_KEY, baseURL: model.url }),
      defaultModel: 'worker-model',
      modelMode: 'foreground',
      searchAttributes: false,
      tools: options.tools ?? [echoTool, addTool, deployTool().tool],
      agents: options.agents,
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    const result = await worker.runUntil(
      body({ keel: new KeelClient(server.client, taskQueue), model, taskQueue }),
    );
    model.assertDone();
    return result;
  } finally {
    await model.close();
  }
}

/** What the run's activities were given and answered, from its history. */
async function recorded(runId: string) {
  const events = await historyEvents(server.client, runId);
  const decode = (payload: { data?: Uint8Array | null } | undefined): unknown =>
    JSON.parse(Buffer.from(payload?.data ?? new Uint8Array()).toString('utf8'));
  const requests = events.flatMap((event) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    return scheduled?.activityType?.name === 'keel.callModel'
      ? [decode(scheduled.input?.payloads?.[0]) as ModelRequest]
      : [];
  });
  const profile = decode(
    events.find((event) => event.activityTaskCompletedEventAttributes)?.activityTaskCompletedEventAttributes
      ?.result?.payloads?.[0],
  ) as WorkerProfile;
  return { requests, profile };
}

describe('named agents', () => {
  it('give a run their instructions, model, tools and limits, and record their version on every turn', async () => {
    await withAgentWorker(
      [reply.calls({ name: 'echo', arguments: { text: 'ticket' } }), reply.text('bug')],
      { agents: [triage, coder] },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ agent: 'triage', task: 'The export button does nothing.' });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'bug' });
        for (const request of model.requests) {
          expect(request.body.instructions).toBe(triage.instructions);
          expect(request.body.model).toBe('triage-model');
          expect(request.body.tools?.map((tool) => tool.name)).toEqual(['echo']);
        }
        const { requests, profile } = await recorded(runId);
        expect(profile.agents).toEqual(['triage', 'coder']);
        expect(profile.agent).toMatchObject({
          name: 'triage',
          instructions: triage.instructions,
          model: 'triage-model',
          tools: ['echo'],
          limits: { maxTurns: 3 },
          budgets: { maxTotalTokens: 50_000 },
        });
        const version = profile.agent!.version;
        expect(version).toMatch(/^[0-9a-f]{16}$/);
        expect(requests.map((request) => request.agent)).toEqual([
          { name: 'triage', version },
          { name: 'triage', version },
        ]);
        const state = await keel.getRunState(runId);
        expect(state.agent).toEqual({ name: 'triage', version });
        // The agent's path is deterministic: its history replays against the workflow code.
        await Worker.runReplayHistory(
          { workflowBundle: { codePath: inject('workflowBundlePath') } },
          await server.client.workflow.getHandle(runId).fetchHistory(),
          runId,
        );
        expect(state.maxTurns).toBe(3);
        expect(state.events.filter((event) => event.kind === 'turn').map((event) => event.agent)).toEqual([
          { name: 'triage', version },
          { name: 'triage', version },
        ]);
      },
    );
  });

  it('take the run’s own fields first: instructions, model and limits it sets override the agent’s', async () => {
    await withAgentWorker(
      [reply.calls({ name: 'echo', arguments: { text: 'a' } })],
      { agents: [triage] },
      async ({ keel, model }) => {
        const runId = await keel.startRun({
          agent: 'triage',
          task: 'x',
          instructions: 'Answer in French.',
          model: 'own-model',
          maxTurns: 1,
        });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'max_turns', turns: 1 });
        expect(model.requests[0]?.body).toMatchObject({
          instructions: 'Answer in French.',
          model: 'own-model',
        });
        expect(model.requests[0]?.body.tools?.map((tool) => tool.name)).toEqual(['echo']);
      },
    );
  });

  it('keep their approvals: a run of an agent that asks approval for a tool waits for a person', async () => {
    await withAgentWorker(
      [reply.calls({ name: 'add', arguments: { a: 1, b: 2, note: null } }), reply.text('not added')],
      { agents: [coder] },
      async ({ keel, model }) => {
        // A run that names no approvals of its own cannot drop the agent's.
        const runId = await keel.startRun({ agent: 'coder', task: 'Add 1 and 2.', approvalTools: [] });
        const state = await waitForState(keel, runId, (current) => current.pendingApprovals.length > 0);
        const [pending] = state.pendingApprovals;
        expect(pending?.name).toBe('add');
        await keel.rejectCall(runId, pending!.callId, 'not today');
        expect(await keel.waitForResult(runId)).toMatchObject({
          status: 'completed',
          finalText: 'not added',
        });
        const output = model.requests[1]?.body.input as Array<{ type: string; output: string }>;
        expect(output).toHaveLength(1);
        expect(output[0]?.type).toBe('function_call_output');
        expect(output[0]?.output).toContain('rejected');
      },
    );
  });

  it('refuse an unknown agent, naming the agents the worker has, before any model turn', async () => {
    await withAgentWorker([], { agents: [triage, coder] }, async ({ keel, model }) => {
      const runId = await keel.startRun({ agent: 'constructor', task: 'x' });
      const error = await keel.waitForResult(runId).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      expect((error as WorkflowFailedError).cause?.message).toBe(
        'Invalid run input:\nagent: unknown agent constructor; this worker has triage, coder',
      );
      expect(model.requests).toHaveLength(0);
    });
  });

  it('refuse a run that would add tools the agent does not offer', async () => {
    await withAgentWorker([], { agents: [triage] }, async ({ keel }) => {
      const runId = await keel.startRun({ agent: 'triage', task: 'x', tools: ['echo', 'deploy'] });
      const error = await keel.waitForResult(runId).catch((caught: unknown) => caught);
      expect((error as WorkflowFailedError).cause?.message).toBe(
        'Invalid run input:\ntools: deploy not among the tools of agent triage (echo)',
      );
    });
  });

  it('are started by name from the CLI: keel run --agent', async () => {
    await withAgentWorker(
      [reply.text('feature request')],
      { agents: [triage] },
      async ({ model, taskQueue }) => {
        const environment = cliEnvironment({
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        });
        const ran = await runCli(
          ['run', 'Add dark mode', '--agent', 'triage', '--json', '--task-queue', taskQueue],
          {
            env: environment,
          },
        );
        expect(ran.code).toBe(0);
        expect(JSON.parse(ran.stdout)).toMatchObject({
          result: { status: 'completed', finalText: 'feature request' },
        });
        expect(model.requests[0]?.body).toMatchObject({
          instructions: triage.instructions,
          model: 'triage-model',
        });
      },
    );
  });
});
