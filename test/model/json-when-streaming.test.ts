import { afterEach, describe, expect, it } from 'vitest';
import { callResponses, warnOnce } from '../../src/model/call-responses.js';
import { createOpenAIClient } from '../../src/model/client.js';
import { ModelError } from '../../src/model/model-error.js';
import type { TurnSink } from '../../src/model/stream-events.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { echoRequest, echoTools } from './echo-request.js';
import type { ScriptStep } from '../support/scripted-model.js';

const tools = echoTools;
const request = echoRequest;

const callingEcho = reply.items([
  { text: 'Calling echo now.' },
  { call: { name: 'echo', arguments: { text: 'hello' } } },
]);

let model: ScriptedModel | undefined;

afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function serve(steps: ScriptStep[], options: { jsonOnly?: boolean } = {}) {
  model = await ScriptedModel.start(steps, options);
  return { model, client: createOpenAIClient({ apiKey: 'sk-test', baseURL: model.url }) };
}

/** A sink that writes down what it hears, in order. */
function recordingSink() {
  const heard: string[] = [];
  const sink: TurnSink = {
    text: (delta) => heard.push(`text ${delta}`),
    toolCall: (callId, name) => heard.push(`call ${callId} ${name}`),
    responseId: (id) => heard.push(`id ${id}`),
  };
  return { sink, heard };
}

describe('callResponses with a server that answers a stream with JSON', () => {
  it('reads the JSON answer as the turn, tells the sink its text and calls, and warns', async () => {
    const { model, client } = await serve([callingEcho], { jsonOnly: true });
    const { sink, heard } = recordingSink();
    const warnings: string[] = [];
    const turn = await callResponses(client, request, tools, {
      sink,
      onStreamFallback: (detail) => warnings.push(detail),
    });
    expect(model.requests[0]?.body.stream).toBe(true);
    expect(model.deltasSent).toBe(0);
    expect(turn).toMatchObject({
      responseId: 'resp_1',
      status: 'completed',
      text: 'Calling echo now.',
      toolCalls: [{ callId: 'call_1_1', name: 'echo', argumentsJson: '{"text":"hello"}' }],
    });
    expect(heard).toEqual(['id resp_1', 'text Calling echo now.', 'call call_1_1 echo']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('application/json');
    model.assertDone();
  });

  it('warns on every such turn, and warnOnce passes on only the first', async () => {
    const { model, client } = await serve([reply.text('one'), reply.text('two')], { jsonOnly: true });
    const every: string[] = [];
    const once: string[] = [];
    const onFirst = warnOnce((detail) => once.push(detail));
    for (const expected of ['one', 'two']) {
      const turn = await callResponses(client, request, tools, {
        sink: recordingSink().sink,
        onStreamFallback: (detail) => {
          every.push(detail);
          onFirst(detail);
        },
      });
      expect(turn.text).toBe(expected);
    }
    expect(every).toHaveLength(2);
    expect(once).toEqual([every[0]]);
    model.assertDone();
  });

  it('fails the attempt as a retryable server error when the JSON is an error body, without warning', async () => {
    const overloaded: ScriptStep = {
      kind: 'response',
      build: () => ({ error: { message: 'The server is overloaded.', code: 'server_busy' } }),
    };
    const { client } = await serve([overloaded], { jsonOnly: true });
    const warnings: string[] = [];
    const failure = await callResponses(client, request, tools, {
      sink: recordingSink().sink,
      onStreamFallback: (detail) => warnings.push(detail),
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ModelError);
    expect(failure).toMatchObject({ type: 'ModelError.ServerError', retryable: true });
    expect((failure as ModelError).message).toContain('server_busy');
    expect(warnings).toEqual([]);
  });

  it('streams as before, without a warning, when the server sends events', async () => {
    const { model, client } = await serve([callingEcho]);
    const { sink, heard } = recordingSink();
    const warnings: string[] = [];
    const turn = await callResponses(client, request, tools, {
      sink,
      onStreamFallback: (detail) => warnings.push(detail),
    });
    expect(turn.text).toBe('Calling echo now.');
    expect(turn.toolCalls).toEqual([{ callId: 'call_1_1', name: 'echo', argumentsJson: '{"text":"hello"}' }]);
    expect(model.deltasSent).toBeGreaterThan(1);
    expect(heard.filter((line) => line.startsWith('text ')).length).toBe(model.deltasSent);
    expect(heard.at(-1)).toBe('call call_1_1 echo');
    expect(warnings).toEqual([]);
    model.assertDone();
  });
});
