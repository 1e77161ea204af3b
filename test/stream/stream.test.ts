import { Client, ServiceError } from '@temporalio/client';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_NAMES, StreamRead } from '../../src/contract/stream-event.js';
import type { StreamItem } from '../../src/contract/stream-event.js';
import { KeelClient } from '../../src/client.js';
import type { ModelMode } from '../../src/model/config.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { deferred } from '../support/deferred.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';
import { historyText } from '../support/history.js';
import { offsetProblems, shownText } from './shown-text.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function collect(keel: KeelClient, runId: string, from = 0): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  for await (const item of keel.stream(runId, { from })) items.push(item);
  return items;
}

/** A client of the test server whose workflow queries go through `query` (the real query is `next`). */
function clientQuerying(query: NonNullable<WorkflowClientInterceptor['query']>): Client {
  return new Client({
    connection: server.client.connection,
    namespace: server.client.options.namespace,
    interceptors: { workflow: [{ query }] },
  });
}

const ANSWER = 'The answer is forty two, said the model.';

describe.each<ModelMode>(['foreground', 'background'])('the stream of a run (%s model mode)', (modelMode) => {
  it('carries the text as it is written, the calls, their observations and the end, in order', async () => {
    const model = await ScriptedModel.start([
      reply.items([{ text: 'Let me echo. ' }, { call: { name: 'echo', arguments: { text: 'hi' } } }]),
      reply.text(ANSWER),
    ]);
    await withTestWorker(server, { model, tools: [echoTool], modelMode }, async ({ keel }) => {
      const runId = await keel.startRun({ task: 'echo hi' });
      const items = await collect(keel, runId);
      const result = await keel.waitForResult(runId);
      expect(result).toMatchObject({ status: 'completed', finalText: ANSWER });
      expect(offsetProblems(items)).toEqual([]);
      expect(items[0]?.offset).toBe(0);
      const kinds = items
        .map(({ event }) => event.type)
        .filter((type, index, all) => type !== all[index - 1]);
      expect(kinds).toEqual([
        'turn_start',
        'text',
        'tool_call',
        'turn_end',
        'observation',
        'turn_start',
        'text',
        'turn_end',
        'end',
      ]);
      expect(items.find(({ event }) => event.type === 'tool_call')?.event).toEqual({
        type: 'tool_call',
        turn: 1,
        callId: 'call_1_1',
        name: 'echo',
      });
      expect(items.find(({ event }) => event.type === 'observation')?.event).toMatchObject({
        callId: 'call_1_1',
        ok: true,
        preview: 'echo: hi',
      });
      expect(shownText(items)).toEqual(['Let me echo. ', ANSWER]);
      expect(items.at(-1)?.event).toEqual({ type: 'end', status: 'completed' });
    });
    model.assertDone();
  });

  it('resumes from an offset after the subscriber disconnects, without a repeat or a gap', async () => {
    const resume = deferred();
    const model = await ScriptedModel.start([
      reply.streamed(reply.text(ANSWER), { pauseAfter: 3, resume: resume.promise }),
    ]);
    await withTestWorker(server, { model, modelMode }, async ({ keel }) => {
      const runId = await keel.startRun({ task: 'answer' });
      const first: StreamItem[] = [];
      for await (const item of keel.stream(runId)) {
        first.push(item);
        // Disconnects mid-turn, having seen some text.
        if (item.event.type === 'text') break;
      }
      resume.resolve();
      const rest = await collect(keel, runId, first.at(-1)!.offset + 1);
      const all = [...first, ...rest];
      expect(offsetProblems(first)).toEqual([]);
      expect(offsetProblems(rest)).toEqual([]);
      // Resumed one past a live event, the reader gets a reset, then the turn again from its start.
      expect(rest[0]?.event).toEqual({ type: 'reset', turn: 1, reason: 'retried' });
      expect(shownText(rest)).toEqual([ANSWER]);
      expect(shownText(all)).toEqual([ANSWER]);
      // One attempt did it all: a pause in the model's output is not a failure (the one reset is the resume's).
      expect(all.filter(({ event }) => event.type === 'reset')).toHaveLength(1);
      expect(model.requests).toHaveLength(1);
      expect(model.streamRetrievals).toEqual([]);
    });
  });
});

describe('a turn whose attempt dies mid-stream', () => {
  it('is reset and streamed again by the retry: the caller never sees text twice', async () => {
    const resume = deferred();
    const model = await ScriptedModel.start([
      // The first attempt writes two deltas, waits until the caller has seen them, writes one more and dies.
      reply.streamed(reply.text(ANSWER), { pauseAfter: 2, resume: resume.promise, cutAfter: 3 }),
      reply.text(ANSWER),
    ]);
    await withTestWorker(server, { model, modelMode: 'foreground' }, async ({ keel }) => {
      const runId = await keel.startRun({ task: 'answer' });
      const items: StreamItem[] = [];
      for await (const item of keel.stream(runId)) {
        items.push(item);
        if (item.event.type === 'text') resume.resolve();
      }
      expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: ANSWER });
      const types = items.map(({ event }) => event.type);
      expect(types.filter((type) => type === 'reset')).toHaveLength(1);
      const reset = types.indexOf('reset');
      const before = items
        .slice(0, reset)
        .map(({ event }) => (event.type === 'text' ? event.delta : ''))
        .join('');
      expect(before.length).toBeGreaterThan(0);
      expect(ANSWER.startsWith(before)).toBe(true);
      expect(items[reset]?.event).toEqual({ type: 'reset', turn: 1, reason: 'retried' });
      expect(shownText(items)).toEqual([ANSWER]);
      expect(offsetProblems(items)).toEqual([]);
    });
  });
});

describe('a secret the model writes into its streamed text', () => {
  it('is redacted before it leaves the worker: neither the caller nor the history sees it', async () => {
    const secret = 'sk-live-7f3a9c2e5b1d8f4a';
    const model = await ScriptedModel.start([reply.text(`Your key is ${secret} and nothing else.`)]);
    await withTestWorker(server, { model, modelMode: 'foreground', secrets: [secret] }, async ({ keel }) => {
      const runId = await keel.startRun({ task: 'tell me the key' });
      const items = await collect(keel, runId);
      expect(shownText(items)).toEqual(['Your key is [redacted] and nothing else.']);
      expect(await historyText(keel.temporal, runId)).not.toContain(secret);
    });
  });
});

describe('a query of the run the server could not answer', () => {
  it('is asked again, as when the worker it went to was killed mid-query; another failure ends the stream at once', async () => {
    const model = await ScriptedModel.start([reply.text(ANSWER)]);
    await withTestWorker(server, { model }, async ({ keel, taskQueue }) => {
      // What the client raised when a worker was SIGKILLed while it answered the stream's query.
      const cancelled = (): ServiceError =>
        new ServiceError('Failed to query Workflow', {
          cause: Object.assign(new Error('1 CANCELLED: context canceled'), { code: 1 }),
        });
      let failing = 2;
      let queried = 0;
      const flaky = clientQuerying(async (input, next) => {
        queried += 1;
        if (failing > 0) {
          failing -= 1;
          throw cancelled();
        }
        return next(input);
      });
      const runId = await keel.startRun({ task: 'answer' });
      const items = await collect(new KeelClient(flaky, taskQueue), runId);
      expect(queried).toBeGreaterThan(2);
      expect(shownText(items)).toEqual([ANSWER]);
      expect(items.at(-1)?.event).toEqual({ type: 'end', status: 'completed' });

      // A failure no retry mends (the server refused the query itself) is not hidden.
      const refusing = clientQuerying(() =>
        Promise.reject(
          new ServiceError('Failed to query Workflow', {
            cause: Object.assign(new Error('7 PERMISSION_DENIED: no'), { code: 7 }),
          }),
        ),
      );
      await expect(collect(new KeelClient(refusing, taskQueue), runId)).rejects.toThrow(
        'Failed to query Workflow',
      );
    });
  });
});

describe('a reader whose read of the log came before the turn opened', () => {
  it('reads the log again and follows the turn live, rather than waiting out the turn in history', async () => {
    const resume = deferred();
    // The answer stops after two deltas until the first text reached the reader.
    const model = await ScriptedModel.start([
      reply.streamed(reply.text(ANSWER), { pauseAfter: 2, resume: resume.promise }),
    ]);
    // Background mode: the attempt says where it streams only once the model has created its
    // response, so a look at the run just after the request finds the attempt without it.
    await withTestWorker(server, { model, modelMode: 'background' }, async ({ keel, taskQueue }) => {
      let first = true;
      // The first read of the log is answered as the log was before the turn opened, and only once
      // the turn's request reached the model: the race of a read answered before the look that follows.
      const late = clientQuerying(async (input, next) => {
        const answer = await next(input);
        if (!first || input.queryType !== STREAM_NAMES.read) return answer;
        first = false;
        const read = StreamRead.parse(answer);
        await model.waitForRequests(1);
        const opened = read.open?.offset ?? read.head;
        return {
          base: read.base,
          head: opened,
          items: read.items.filter((item) => item.offset < opened),
        } satisfies StreamRead;
      });
      const runId = await keel.startRun({ task: 'answer' });
      const items: StreamItem[] = [];
      for await (const item of new KeelClient(late, taskQueue).stream(runId)) {
        items.push(item);
        // Text while the model still holds the rest back came live: the reader did not wait for the turn's end.
        if (item.event.type === 'text') resume.resolve();
      }
      expect(first).toBe(false);
      expect(items.find(({ event }) => event.type === 'text')?.event).toMatchObject({ turn: 1 });
      expect(shownText(items)).toEqual([ANSWER]);
      expect(items.at(-1)?.event).toEqual({ type: 'end', status: 'completed' });
    });
  });
});
