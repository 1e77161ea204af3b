import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent.js';
import { describeAgents } from '../../src/agents/describe-agents.js';
import type { KeelClient } from '../../src/client.js';
import { MAX_SUB_AGENT_CALLS_PER_TURN, MAX_SUB_AGENT_DEPTH } from '../../src/contract/defaults.js';
import type { RunResult } from '../../src/contract/run-result.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyEvents } from '../support/history.js';
import { withScenario } from '../support/scenario.js';
import { reply } from '../support/scripted-model.js';
import type { RecordedRequest, ScriptStep } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';
import { until } from '../support/until.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

const lead = defineAgent({
  name: 'lead',
  instructions: 'You lead. Delegate to your sub-agents.',
  tools: [],
  subAgents: ['researcher', 'writer'],
});
const researcher = defineAgent({
  name: 'researcher',
  description: 'Finds facts.',
  instructions: 'You research.',
  tools: ['echo'],
});
const writer = defineAgent({
  name: 'writer',
  description: 'Writes titles.',
  instructions: 'You write.',
  tools: [],
  output: z.object({ title: z.string() }),
});
const agents = [lead, researcher, writer];

/** Whether a request already carries tool results (a turn after calls). */
const hasResults = (request: RecordedRequest): boolean =>
  Array.isArray(request.body.input) &&
  (request.body.input as { type?: string }[]).some((item) => item.type === 'function_call_output');

/** The outputs of the function calls a request sends back, by call id. */
function outputs(request: RecordedRequest): Record<string, string> {
  const items = request.body.input as { type?: string; call_id?: string; output?: string }[];
  const answered: Record<string, string> = {};
  for (const item of items)
    if (item.type === 'function_call_output') answered[item.call_id ?? ''] = item.output ?? '';
  return answered;
}

/** The status of a workflow execution by id. */
async function statusOf(keel: KeelClient, workflowId: string): Promise<string> {
  return (await keel.temporal.workflow.getHandle(workflowId).describe()).status.name;
}

describe('sub-agents: an agent calls other agents as tools, each a child run', () => {
  it('runs two sub-agents of one turn in parallel as children; their answers are the observations and their usage is the parent’s', async () => {
    const policy = (request: RecordedRequest): ScriptStep => {
      if (request.body.instructions === 'You research.') return reply.text('Facts: A and B.');
      if (request.body.instructions === 'You write.') return reply.text('{"title":"A and B"}');
      return hasResults(request)
        ? reply.text('Done: "A and B".')
        : reply.calls(
            { name: 'researcher', arguments: { task: 'Find the facts.' }, callId: 'call_r' },
            { name: 'writer', arguments: { task: 'Write a title.' }, callId: 'call_w' },
          );
    };
    await withScenario(server, policy, { agents, tools: [echoTool] }, async ({ keel, model }) => {
      const runId = await keel.startRun({ agent: 'lead', task: 'Make a title.', parallelToolCalls: true });
      const result = await keel.waitForResult(runId);
      expect(result).toMatchObject({
        status: 'completed',
        finalText: 'Done: "A and B".',
        turns: 2,
        toolCalls: 2,
      });

      const children = [`${runId}.1.researcher.1`, `${runId}.1.writer.2`];
      const childResults: RunResult[] = [];
      for (const child of children) {
        const description = await keel.temporal.workflow.getHandle(child).describe();
        expect(description.status.name).toBe('COMPLETED');
        expect(description.parentExecution?.workflowId).toBe(runId);
        childResults.push(await keel.waitForResult(child));
      }
      expect(childResults[1]).toMatchObject({ status: 'completed', output: { title: 'A and B' } });
      // The parent's totals hold its own two turns and both children's.
      const leadRequests = model.requests.filter(
        (request) => request.body.instructions === lead.instructions,
      );
      expect(leadRequests).toHaveLength(2);
      const childTokens = childResults.reduce((sum, child) => sum + child.usage.totalTokens, 0);
      expect(childTokens).toBeGreaterThan(0);
      expect(result.usage.totalTokens).toBeGreaterThan(childTokens);

      // The model saw both sub-agents as tools taking a task, and their answers as the calls' results.
      expect(leadRequests[0]!.body.tools).toEqual([
        expect.objectContaining({
          name: 'researcher',
          strict: true,
          parameters: expect.objectContaining({ required: ['task'] }) as unknown,
        }),
        expect.objectContaining({ name: 'writer' }),
      ]);
      expect(outputs(leadRequests[1]!)).toEqual({ call_r: 'Facts: A and B.', call_w: '{"title":"A and B"}' });
      const childRequest = model.requests.find((request) => request.body.instructions === 'You research.')!;
      expect(childRequest.body.input).toEqual([
        { type: 'message', role: 'user', content: 'Find the facts.' },
      ]);

      // Both started before either ended: they ran side by side.
      const events = await historyEvents(server.client, runId);
      const started = events.findLastIndex((event) => event.childWorkflowExecutionStartedEventAttributes);
      const ended = events.findIndex((event) => event.childWorkflowExecutionCompletedEventAttributes);
      expect(started).toBeGreaterThan(-1);
      expect(started).toBeLessThan(ended);
    });
  });

  it('cancelling the parent while two sub-agents work ends all three Canceled', async () => {
    const policy = (request: RecordedRequest): ScriptStep =>
      request.body.instructions === lead.instructions
        ? reply.calls(
            { name: 'researcher', arguments: { task: 'Dig.' } },
            { name: 'researcher', arguments: { task: 'Dig deeper.' } },
          )
        : reply.hang();
    await withScenario(server, policy, { agents, tools: [echoTool] }, async ({ keel, model }) => {
      const runId = await keel.startRun({ agent: 'lead', task: 'Research.', parallelToolCalls: true });
      const children = [`${runId}.1.researcher.1`, `${runId}.1.researcher.2`];
      await until(
        () =>
          Promise.resolve(
            model.requests.filter((request) => request.body.instructions === 'You research.').length === 2,
          ),
        'both sub-agents ask the model',
        { timeoutMs: 60_000, intervalMs: 100 },
      );
      await keel.cancelRun(runId);
      const ended = await keel.waitForResult(runId).catch((error: unknown) => error);
      expect(ended).toBeInstanceOf(WorkflowFailedError);
      expect(await statusOf(keel, runId)).toBe('CANCELLED');
      for (const child of children) expect(await statusOf(keel, child)).toBe('CANCELLED');
    });
  });

  it(`starts at most ${MAX_SUB_AGENT_CALLS_PER_TURN} per turn, refuses a call without a task, offers none at depth ${MAX_SUB_AGENT_DEPTH}, and only those a run names`, async () => {
    // A malformed call first (it counts), then as many good ones as may start: the last is one too many.
    const calls = Array.from({ length: MAX_SUB_AGENT_CALLS_PER_TURN }, (_, index) => ({
      name: 'researcher',
      arguments: { task: `Fact ${index}.` },
      callId: `call_${index}`,
    }));
    const policy = (request: RecordedRequest): ScriptStep => {
      if (request.body.instructions === 'You research.') return reply.text('A fact.');
      if (
        (request.body.input as unknown[]).some((item) => /Deep task|Narrow task/.test(JSON.stringify(item)))
      )
        return reply.text('No sub-agents here.');
      return hasResults(request)
        ? reply.text('Enough.')
        : reply.calls({ name: 'writer', arguments: { topic: 'no task' }, callId: 'call_bad' }, ...calls);
    };
    await withScenario(server, policy, { agents, tools: [echoTool] }, async ({ keel, model }) => {
      const { result } = await run(keel, { agent: 'lead', task: 'Many facts.', parallelToolCalls: true });
      expect(result.status).toBe('completed');
      const last = model.requests
        .filter((request) => request.body.instructions === lead.instructions)
        .at(-1)!;
      const answered = outputs(last);
      expect(Object.values(answered).filter((output) => output === 'A fact.')).toHaveLength(
        MAX_SUB_AGENT_CALLS_PER_TURN - 1,
      );
      expect(answered[`call_${MAX_SUB_AGENT_CALLS_PER_TURN - 1}`]).toContain(
        `At most ${MAX_SUB_AGENT_CALLS_PER_TURN} sub-agents start in one turn`,
      );
      expect(JSON.parse(answered.call_bad!)).toMatchObject({
        error: 'invalid_arguments',
        message: expect.stringContaining('A sub-agent takes {"task": "<what to do>"}') as unknown,
      });

      const deep = await run(keel, { agent: 'lead', task: 'Deep task.', subAgentDepth: MAX_SUB_AGENT_DEPTH });
      expect(deep.result.status).toBe('completed');
      const deepRequest = model.requests.at(-1)!;
      expect(deepRequest.body.tools ?? []).toEqual([]);

      // A run that names its tools offers only the sub-agents it names.
      const narrow = await run(keel, { agent: 'lead', task: 'Narrow task.', tools: ['researcher'] });
      expect(narrow.result.status).toBe('completed');
      expect(
        (model.requests.at(-1)!.body.tools ?? []).map((tool) => (tool as { name: string }).name),
      ).toEqual(['researcher']);
    });
  });

  it('refuses, when the worker is built, a sub-agent it does not have, the agent itself, or one named like a tool', () => {
    const registry = new ToolRegistry([echoTool]);
    const named = (subAgents: string[], name = 'boss') =>
      defineAgent({ name, instructions: 'Boss.', subAgents });
    expect(() => describeAgents([named(['ghost']), researcher], registry)).toThrow(
      'names sub-agent ghost, which is not an agent of this worker',
    );
    expect(() => describeAgents([named(['boss'])], registry)).toThrow(
      'names sub-agent boss, which is itself',
    );
    const echoAgent = defineAgent({ name: 'echo', instructions: 'Echo.' });
    expect(() => describeAgents([named(['echo']), echoAgent], registry)).toThrow('has the name of a tool');
    const versions = [named([]), named(['researcher'])].map(
      (agent) => describeAgents([agent, researcher], registry).get('boss')!.version,
    );
    expect(versions[0]).not.toBe(versions[1]);
  });
});

async function run(keel: KeelClient, input: Parameters<KeelClient['startRun']>[0]) {
  const runId = await keel.startRun(input);
  return { runId, result: await keel.waitForResult(runId) };
}
