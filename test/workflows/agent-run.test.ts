import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_RUN_WORKFLOW } from '../../src/contract/defaults.js';
import type { RunResult } from '../../src/contract/run-result.js';
import { fileTools } from '../../src/tools/builtin/file-tools.js';
import { connectTestServer, RecordingLogger, TEST_API_KEY, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyEvents, historyText } from '../support/history.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { withScenario } from '../support/scenario.js';
import { waitForRecordedResponseId } from '../support/process/fixture.js';
import {
  addTool,
  bigOutputTool,
  blockingTool,
  echoTool,
  knownFailureTool,
  unknownFailureTool,
} from '../support/test-tools.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

function outputsOf(request: {
  body: { input: Array<Record<string, unknown>> };
}): Array<{ call_id: string; output: string }> {
  return request.body.input.map((item) => {
    expect(item.type).toBe('function_call_output');
    return { call_id: item.call_id as string, output: item.output as string };
  });
}

describe('agentRun', () => {
  it('runs a tool and chains the next turn with previous_response_id, call_id and the instructions again', async () => {
    await withScenario(
      server,
      [
        reply.calls({ name: 'read_file', arguments: { path: 'notes.txt', startLine: null, endLine: null } }),
        reply.text('The notes say hello.'),
      ],
      {},
      async ({ keel, model, run, workspace }) => {
        await writeFile(path.join(workspace, 'notes.txt'), 'hello from the workspace\n');
        const { runId, result } = await run({ task: 'What do the notes say?', instructions: 'Be brief.' });
        expect(result).toMatchObject({
          status: 'completed',
          finalText: 'The notes say hello.',
          turns: 2,
          toolCalls: 1,
          lastResponseId: 'resp_2',
          model: 'scripted-model',
        });
        const [first, second] = model.requests;
        expect(first?.body.instructions).toBe('Be brief.');
        expect(first?.body.previous_response_id).toBeUndefined();
        expect(first?.body.input).toEqual([
          { type: 'message', role: 'user', content: 'What do the notes say?' },
        ]);
        expect(first?.body.parallel_tool_calls).toBe(false);
        const readFileTool = first?.body.tools?.find((tool) => tool.name === 'read_file');
        expect(readFileTool).toMatchObject({ type: 'function', strict: true });
        expect(readFileTool?.parameters).toMatchObject({
          type: 'object',
          additionalProperties: false,
          required: ['path', 'startLine', 'endLine'],
          properties: { startLine: { type: ['integer', 'null'] } },
        });
        expect(first?.body.tools?.map((tool) => tool.name)).toEqual(
          fileTools({ root: workspace }).map((tool) => tool.name),
        );

        expect(second?.body.previous_response_id).toBe('resp_1');
        expect(second?.body.instructions).toBe('Be brief.');
        expect(outputsOf(second!)).toEqual([{ call_id: 'call_1_1', output: 'hello from the workspace\n' }]);
        expect(result.usage.totalTokens).toBe(
          model.requests.reduce((sum, request) => sum + 100 + request.index + 11, 0),
        );
        const state = await keel.getRunState(runId);
        expect(state).toMatchObject({
          phase: 'finished',
          turn: 2,
          pendingCalls: [],
          lastResponseId: 'resp_2',
        });
        expect(state.usageByTurn).toHaveLength(2);
      },
    );
  });

  it('answers two calls of one response with two outputs, matched by call_id, in call order', async () => {
    await withScenario(
      server,
      [
        reply.calls(
          { name: 'echo', arguments: { text: 'first' } },
          { name: 'add', arguments: { a: 2, b: 3, note: null } },
        ),
        reply.text('done'),
      ],
      { tools: [echoTool, addTool] },
      async ({ run, model }) => {
        const { result } = await run({ task: 'two things' });
        expect(result).toMatchObject({ status: 'completed', toolCalls: 2 });
        expect(outputsOf(model.requests[1]!)).toEqual([
          { call_id: 'call_1_1', output: 'echo: first' },
          { call_id: 'call_1_2', output: '5' },
        ]);
      },
    );
  });

  it('runs the call in a response that mixes text, reasoning and a call, and keeps going', async () => {
    await withScenario(
      server,
      [
        reply.items([
          { reasoning: 'I should echo.' },
          { text: 'Let me echo that first.' },
          { call: { name: 'echo', arguments: { text: 'mixed' } } },
        ]),
        reply.text('All done.'),
      ],
      { tools: [echoTool] },
      async ({ run, model }) => {
        const { result } = await run({ task: 'mix' });
        expect(result).toMatchObject({ status: 'completed', finalText: 'All done.', turns: 2, toolCalls: 1 });
        expect(outputsOf(model.requests[1]!)).toEqual([{ call_id: 'call_1_1', output: 'echo: mixed' }]);
      },
    );
  });

  it('runs model turns in background mode by default: one streamed create per turn, no polls', async () => {
    await withScenario(
      server,
      [reply.calls({ name: 'echo', arguments: { text: 'bg' } }), reply.text('done')],
      { tools: [echoTool] },
      async ({ keel, model }) => {
        expect(await keel.waitForResult(await keel.startRun({ task: 'background' }))).toMatchObject({
          status: 'completed',
        });
        expect(model.requests.map((request) => request.body.background)).toEqual([true, true]);
        expect(model.requests[1]?.body.previous_response_id).toBe('resp_1');
        // A streaming run reads its turns as they are generated instead of polling for them.
        expect(model.requests.map((request) => request.body.stream)).toEqual([true, true]);
        expect(model.retrievals).toEqual([]);
      },
    );
  });

  it('sends one plain request per turn in foreground mode', async () => {
    await withScenario(
      server,
      [reply.calls({ name: 'echo', arguments: { text: 'fg' } }), reply.text('done')],
      { tools: [echoTool], modelMode: 'foreground' },
      async ({ keel, model }) => {
        expect(await keel.waitForResult(await keel.startRun({ task: 'foreground' }))).toMatchObject({
          status: 'completed',
          finalText: 'done',
        });
        expect(model.requests.map((request) => request.body.background)).toEqual([undefined, undefined]);
        expect(model.retrievals).toEqual([]);
      },
    );
  });

  it('cancels the in-flight background response on the server when the run is cancelled', async () => {
    const never = new Promise<never>(() => undefined);
    await withScenario(server, [reply.held(reply.text('too late'), never)], {}, async ({ keel, model }) => {
      const runId = await keel.startRun({ task: 'think hard', heartbeatTimeoutSeconds: 2 });
      // The attempt knows the response id (from the stream's first event) once it has heartbeated it.
      await waitForRecordedResponseId(keel, runId);
      await keel.cancelRun(runId);
      await model.waitUntil(() => model.cancellations.length > 0);
      expect(model.cancellations).toEqual(['resp_1']);
      const error = await keel.waitForResult(runId).catch((failure: unknown) => failure);
      expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    });
  });

  it('aborts the in-flight foreground request when the run is cancelled', async () => {
    await withScenario(server, [reply.hang()], { modelMode: 'foreground' }, async ({ keel, model }) => {
      const runId = await keel.startRun({ task: 'think hard', heartbeatTimeoutSeconds: 2 });
      await model.waitForRequests(1);
      await keel.cancelRun(runId);
      const error = await keel.waitForResult(runId).catch((failure: unknown) => failure);
      expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
      expect(model.cancellations).toEqual([]);
    });
  });

  describe('turns every executor failure into an observation the model can act on', () => {
    const secret = 'hunter2-db-password-771';
    const logger = new RecordingLogger();
    let model: ScriptedModel;
    let result: RunResult;
    let history: string;
    let observations: Map<
      string,
      { ok: boolean; error?: string; message?: string; preview?: string; raw: string }
    >;

    beforeAll(async () => {
      const slow = blockingTool({ name: 'slow', timeoutSeconds: 1, ignoreAbort: true });
      const steps = [
        reply.calls(
          { name: 'no_such_tool', arguments: {}, callId: 'unknown' },
          { name: 'add', arguments: '{"a": 1, "b":', callId: 'badjson' },
          { name: 'add', arguments: { a: 'one', c: 2 }, callId: 'schema' },
          { name: 'known_failure', arguments: {}, callId: 'known' },
          { name: 'unknown_failure', arguments: {}, callId: 'internal' },
          { name: 'big_output', arguments: { characters: 20_000 }, callId: 'big' },
          { name: 'slow', arguments: { label: 'never' }, callId: 'timeout' },
        ),
        reply.calls({ name: 'add', arguments: { a: 1, b: 2, note: null }, callId: 'fixed' }),
        reply.text('1 + 2 = 3'),
      ];
      await withScenario(
        server,
        steps,
        {
          tools: [addTool, knownFailureTool, unknownFailureTool(secret), bigOutputTool, slow.tool],
          logger,
          secrets: [secret],
        },
        async (context) => {
          model = context.model;
          const runId = await context.keel.startRun({ task: 'add numbers', observationCharLimit: 5_000 });
          result = await context.keel.waitForResult(runId);
          history = await historyText(server.client, runId);
        },
      );
      observations = new Map(
        outputsOf(model.requests[1]!).map(({ call_id, output }) => {
          let parsed: Record<string, unknown>;
          try {
            parsed = JSON.parse(output) as Record<string, unknown>;
          } catch {
            parsed = {};
          }
          return [call_id, { ok: parsed.error === undefined, ...parsed, raw: output }];
        }),
      );
    });

    it('keeps going after every failure and lets the model correct its call', () => {
      expect(result).toMatchObject({ status: 'completed', finalText: '1 + 2 = 3', turns: 3, toolCalls: 8 });
      expect([...observations.keys()]).toEqual([
        'unknown',
        'badjson',
        'schema',
        'known',
        'internal',
        'big',
        'timeout',
      ]);
      expect(outputsOf(model.requests[2]!)).toEqual([{ call_id: 'fixed', output: '3' }]);
    });

    it('names the available tools for an unknown tool', () => {
      expect(observations.get('unknown')).toMatchObject({ error: 'unknown_tool' });
      expect(observations.get('unknown')?.message).toContain(
        'Available tools: add, known_failure, unknown_failure, big_output, slow',
      );
    });

    it('reports invalid JSON', () => {
      expect(observations.get('badjson')).toMatchObject({ error: 'invalid_json' });
      expect(observations.get('badjson')?.message).toMatch(/not valid JSON/);
    });

    it('lists each schema violation as path: message', () => {
      const message = observations.get('schema')?.message ?? '';
      expect(observations.get('schema')).toMatchObject({ error: 'invalid_arguments' });
      expect(message).toMatch(/^- a: .*expected number/m);
      expect(message).toMatch(/^- b: .*expected number/m);
      expect(message).toMatch(/^- \(root\): unknown key "c"$/m);
    });

    it('passes a known tool error through and hides an unknown one', () => {
      expect(observations.get('known')).toMatchObject({
        error: 'tool_error',
        message: 'the record is locked by another job; try again later',
      });
      const internal = observations.get('internal');
      expect(internal?.error).toBe('tool_error');
      expect(internal?.message).toContain('internal error (reference internal)');
      expect(internal?.raw).not.toContain(secret);
      expect(internal?.raw).not.toContain('/srv/keel');
      expect(internal?.raw).not.toMatch(/\bat .*:\d+/);
      const logged = logger.entries.find((entry) => entry.message === 'Tool unknown_failure failed');
      // The worker log keeps the full error, worker path and stack included, but not the secret.
      const loggedError = logged?.meta?.error as Error | undefined;
      expect(loggedError?.message).toBe(
        'database password [redacted] rejected at /srv/keel/internal/db.ts:42',
      );
      expect(loggedError?.stack).toMatch(/\n\s+at /);
      expect(loggedError?.stack).not.toContain(secret);
    });

    it('cuts oversized output to a preview under the cap', () => {
      const big = observations.get('big');
      expect(big).toMatchObject({ error: 'output_too_large' });
      expect(big?.message).toContain('20000 characters, more than the limit of 5000');
      expect(big?.preview).toBe('x'.repeat(4_600));
      expect(big?.raw.length).toBeLessThan(5_000);
    });

    it('stops a tool that runs past its timeout', () => {
      expect(observations.get('timeout')).toMatchObject({
        error: 'timeout',
        message: 'slow did not finish within 1 seconds and was stopped.',
      });
    });

    it('keeps secrets out of the history', () => {
      // The decoded history does hold the observations, so the absences below mean something.
      expect(history).toContain('internal error (reference internal)');
      expect(history).not.toContain(secret);
      expect(history).not.toContain(TEST_API_KEY);
      expect(history).not.toContain('/srv/keel');
    });
  });

  it('stops with max_turns, without running the calls of the last turn', async () => {
    await withScenario(
      server,
      [
        reply.calls({ name: 'echo', arguments: { text: '1' } }),
        reply.calls({ name: 'echo', arguments: { text: '2' } }),
      ],
      { tools: [echoTool] },
      async ({ run }) => {
        const { result } = await run({ task: 'loop forever', maxTurns: 2 });
        expect(result).toMatchObject({
          status: 'max_turns',
          turns: 2,
          toolCalls: 1,
          lastResponseId: 'resp_2',
        });
      },
    );
  });

  it('never runs the calls of an incomplete response, and ends incomplete when only text was cut off', async () => {
    await withScenario(
      server,
      [
        reply.items([{ call: { name: 'echo', arguments: '{"text": "trunc' } }], { status: 'incomplete' }),
        reply.items([{ text: 'The answer is' }], {
          status: 'incomplete',
          incompleteReason: 'max_output_tokens',
        }),
      ],
      { tools: [echoTool] },
      async ({ keel, model }) => {
        const result = await keel.waitForResult(
          await keel.startRun({ task: 'long answer', maxOutputTokens: 64 }),
        );
        expect(model.requests[0]?.body.max_output_tokens).toBe(64);
        const [observation] = outputsOf(model.requests[1]!);
        expect(JSON.parse(observation!.output)).toMatchObject({ error: 'not_executed' });
        expect(result).toMatchObject({
          status: 'incomplete',
          reason: 'max_output_tokens',
          partialText: 'The answer is',
        });
      },
    );
  });

  it('waits as long as a 429 Retry-After asks, then succeeds', async () => {
    await withScenario(
      server,
      [
        reply.error(429, 'Rate limit reached for requests', { headers: { 'retry-after': '2' } }),
        reply.text('ok'),
      ],
      {},
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'hurry' });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'ok' });
        const [first, second] = model.requests;
        // Temporal's own first backoff is 1 s; only the honoured Retry-After makes the gap 2 s or more.
        expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(1_900);
        const started = (await historyEvents(server.client, runId)).find(
          (event) => event.activityTaskStartedEventAttributes?.attempt === 2,
        )?.activityTaskStartedEventAttributes;
        expect(started?.lastFailure?.applicationFailureInfo?.type).toBe('ModelError.RateLimit');
        expect(Number(started?.lastFailure?.applicationFailureInfo?.nextRetryDelay?.seconds)).toBe(2);
      },
    );
  });

  it('retries a 500 from the model server', async () => {
    await withScenario(
      server,
      [reply.error(500, 'The server had an error'), reply.text('recovered')],
      {},
      async ({ run }) => {
        const { result } = await run({ task: 'flaky server' });
        expect(result).toMatchObject({ status: 'completed', finalText: 'recovered' });
      },
    );
  });

  it('ends the run as failed with a clear reason on a 401, after one request', async () => {
    await withScenario(
      server,
      [reply.error(401, `Incorrect API key provided: ${TEST_API_KEY.slice(0, 8)}****************6f.`)],
      {},
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'anything' });
        const result = await keel.waitForResult(runId);
        expect(result).toMatchObject({ status: 'failed', errorType: 'ModelError.Authentication', turns: 1 });
        if (result.status !== 'failed') throw new Error('unreachable');
        expect(result.reason).toContain('answered 401');
        expect(result.reason).toContain('Check OPENAI_API_KEY on the worker.');
        expect(result.reason).not.toContain(TEST_API_KEY.slice(0, 8));
        expect(model.requests).toHaveLength(1);
        const history = await historyText(server.client, runId);
        expect(history).toContain('Incorrect API key provided: [redacted]');
        expect(history).not.toContain(TEST_API_KEY.slice(0, 8));
      },
    );
  });

  it('starts one run per business key when asked to be idempotent, running or ended', async () => {
    await withScenario(server, [reply.text('once')], {}, async ({ keel, model }) => {
      const runId = `ticket-${randomUUID()}`;
      expect(await keel.startRun({ task: 'once' }, { runId, idempotent: true })).toBe(runId);
      expect(await keel.startRun({ task: 'once' }, { runId, idempotent: true })).toBe(runId);
      expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'once' });
      expect(await keel.startRun({ task: 'once' }, { runId, idempotent: true })).toBe(runId);
      expect(model.requests).toHaveLength(1);
    });
  });

  it("lets a run set a tool's timeout, and refuses a timeout for a tool it does not offer", async () => {
    const slow = blockingTool({ name: 'slow', ignoreAbort: true });
    await withScenario(
      server,
      [reply.calls({ name: 'slow', arguments: { label: 'x' } }), reply.text('gave up')],
      { tools: [slow.tool, echoTool] },
      async ({ keel, model }) => {
        const result = await keel.waitForResult(
          await keel.startRun({ task: 'hurry', toolTimeouts: { slow: 1 } }),
        );
        expect(result).toMatchObject({ status: 'completed', finalText: 'gave up' });
        expect(JSON.parse(String(model.requests[1]?.body.input[0]?.output))).toEqual({
          error: 'timeout',
          message: 'slow did not finish within 1 seconds and was stopped.',
        });
        const error = await keel
          .waitForResult(await keel.startRun({ task: 'x', tools: ['echo'], toolTimeouts: { slow: 5 } }))
          .catch((failure: unknown) => failure);
        expect((error as WorkflowFailedError).cause?.message).toContain('toolTimeouts: unknown tool(s) slow');
      },
    );
    slow.release.resolve('late');
  });

  it('refuses an invalid input at once with a readable, non-retryable error', async () => {
    await withScenario(server, [], {}, async ({ taskQueue }) => {
      const handle = await server.client.workflow.start(AGENT_RUN_WORKFLOW, {
        taskQueue,
        workflowId: `invalid-${taskQueue}`,
        args: [{ task: '   ', maxTurns: 0, colour: 'blue' }],
      });
      const error = await handle.result().then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(WorkflowFailedError);
      const cause = (error as WorkflowFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect((cause as ApplicationFailure).type).toBe('KeelError.InvalidInput');
      expect((cause as ApplicationFailure).nonRetryable).toBe(true);
      expect(cause?.message).toContain('task: must describe the task');
      expect(cause?.message).toMatch(/maxTurns: .*>=1/);
      expect(cause?.message).toMatch(/Unrecognized key.*"colour"/);
    });
  });

  it('refuses a run that names a tool the worker does not have', async () => {
    await withScenario(server, [], { tools: [echoTool] }, async ({ keel }) => {
      const error = await keel
        .waitForResult(await keel.startRun({ task: 'x', tools: ['echo', 'launch_rockets'] }))
        .catch((failure: unknown) => failure);
      expect((error as WorkflowFailedError).cause?.message).toContain(
        'tools: unknown tool(s) launch_rockets; this worker has echo',
      );
    });
  });

  it('cancels the running tool through its AbortSignal and ends the run as Canceled', async () => {
    const blocking = blockingTool();
    await withScenario(
      server,
      [reply.calls({ name: 'block', arguments: { label: 'wait' } })],
      { tools: [blocking.tool] },
      async ({ keel }) => {
        const runId = await keel.startRun({ task: 'block', heartbeatTimeoutSeconds: 2 });
        const started = await blocking.started.promise;
        expect(await keel.getRunState(runId)).toMatchObject({
          phase: 'acting',
          turn: 1,
          pendingCalls: [{ callId: started.callId, name: 'block' }],
        });
        await keel.cancelRun(runId);
        expect(await blocking.aborted.promise).toBeInstanceOf(CancelledFailure);
        const error = await keel.waitForResult(runId).catch((failure: unknown) => failure);
        expect((error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
        expect((await server.client.workflow.getHandle(runId).describe()).status.name).toBe('CANCELLED');
      },
    );
  });

  it('finishes a run on a new worker after the first one stopped mid-tool', async () => {
    const blocking = blockingTool();
    const model = await ScriptedModel.start([
      reply.calls({ name: 'block', arguments: { label: 'resumed' } }),
      reply.text('finished'),
    ]);
    try {
      const options = { model, tools: [blocking.tool], workerOptions: { shutdownGraceTime: 0 } };
      let runId = '';
      let taskQueue = '';
      await withTestWorker(server, options, async (first) => {
        taskQueue = first.taskQueue;
        runId = await first.keel.startRun({ task: 'survive', heartbeatTimeoutSeconds: 2 });
        await blocking.started.promise;
        first.worker.shutdown();
      });
      expect(await blocking.aborted.promise).toBeInstanceOf(CancelledFailure);
      blocking.release.resolve('released');
      const result = await withTestWorker(server, { ...options, taskQueue }, ({ keel }) =>
        keel.waitForResult(runId),
      );
      expect(result).toMatchObject({ status: 'completed', finalText: 'finished', turns: 2 });
      expect(blocking.calls).toHaveLength(2);
      expect(blocking.calls[0]).toEqual(blocking.calls[1]);
      expect(blocking.calls[0]?.idempotencyKey).toBe(`${runId}:call_1_1`);
      expect(outputsOf(model.requests[1]!)).toEqual([{ call_id: 'call_1_1', output: 'resumed: released' }]);
      model.assertDone();
    } finally {
      await model.close();
    }
  });
});
