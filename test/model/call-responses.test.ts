import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildResponsesRequest } from '../../src/model/build-request.js';
import { callResponses, continued } from '../../src/model/call-responses.js';
import { classifyModelError } from '../../src/model/classify-error.js';
import { createOpenAIClient } from '../../src/model/client.js';
import { ModelError } from '../../src/model/model-error.js';
import { streamCutAt } from '../../src/model/stream-events.js';
import { deferred } from '../support/deferred.js';
import { echoRequest, echoTools } from './echo-request.js';

/** A request as it reached the loopback server. */
interface ReceivedRequest {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: unknown;
}

type Respond = (request: IncomingMessage, response: ServerResponse) => void;

let server: Server;
let baseURL: string;
let received: ReceivedRequest[];
let respond: Respond;
let requestArrived = deferred();

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      received.push({
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: text === '' ? undefined : (JSON.parse(text) as unknown),
      });
      respond(request, response);
      requestArrived.resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
});

beforeEach(() => {
  received = [];
  requestArrived = deferred();
  respond = () => {
    throw new Error('the test did not say how the server should answer');
  };
});

function answerJson(status: number, body: unknown, headers: Record<string, string> = {}): Respond {
  return (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };
}

const tools = echoTools;
const request = echoRequest;

const completedResponse = {
  id: 'resp_loopback',
  object: 'response',
  created_at: 1_700_000_000,
  model: 'gpt-test-2030-01-01',
  status: 'completed',
  error: null,
  incomplete_details: null,
  output: [
    {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Calling echo.', annotations: [] }],
    },
    {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_1',
      name: 'echo',
      arguments: '{"text":"hello"}',
      status: 'completed',
    },
  ],
  usage: {
    input_tokens: 40,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 12,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 52,
  },
};

const context = (clean: (text: string) => string = (text) => text) => ({
  model: request.model,
  host: new URL(baseURL).host,
  clean,
});

describe('continued: a chained turn the server did not continue fails at once', () => {
  const response = (previous: unknown) =>
    ({ ...completedResponse, previous_response_id: previous }) as unknown as Parameters<typeof continued>[1];

  it('passes the answer that continues the response the turn continued, and any answer to a turn that continues none', () => {
    expect(continued({ previous_response_id: 'resp_1' }, response('resp_1')).id).toBe('resp_loopback');
    expect(continued({}, response(null)).id).toBe('resp_loopback');
    expect(continued({}, response(undefined)).id).toBe('resp_loopback');
  });

  it.each([
    ['another id', 'resp_other', 'continues resp_other'],
    ['null', null, 'continues nothing'],
    ['no field', undefined, 'continues nothing'],
  ])('refuses an answer whose previous_response_id is %s, not retried', (_what, previous, says) => {
    let caught: unknown;
    try {
      continued({ previous_response_id: 'resp_1' }, response(previous));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ModelError);
    expect(caught).toMatchObject({ type: 'ModelError.ConversationNotContinued', retryable: false });
    expect((caught as Error).message).toContain(`its answer resp_loopback ${says}.`);
  });

  it('cuts a server-written id that runs long, and keeps it on one line', () => {
    let caught: unknown;
    try {
      continued({ previous_response_id: 'resp_1' }, response(`resp_${'x'.repeat(500)}\n\u001b[2J`));
    } catch (error) {
      caught = error;
    }
    const message = (caught as Error).message;
    expect(message).toContain(`continues resp_${'x'.repeat(59)}…. The model saw`);
    expect(message).not.toContain('\n');
    expect(message.length).toBeLessThan(800);
  });

  it('refuses it on every path: a plain request to a server that ignores previous_response_id', async () => {
    respond = answerJson(200, { ...completedResponse, previous_response_id: null });
    const chained = {
      ...request,
      input: { kind: 'observations' as const, previousResponseId: 'resp_1', observations: [] },
    };
    await expect(callResponses(new OpenAI({ apiKey: 'k', baseURL }), chained, tools)).rejects.toMatchObject({
      type: 'ModelError.ConversationNotContinued',
    });
    expect(received[0]!.body).toMatchObject({ previous_response_id: 'resp_1' });
  });
});

describe('callResponses', () => {
  it('posts the built request to /v1/responses with the key and returns the parsed turn', async () => {
    respond = answerJson(200, completedResponse);
    const client = createOpenAIClient({ apiKey: 'sk-loopback-key', baseURL });

    const turn = await callResponses(client, request, tools);

    expect(received).toHaveLength(1);
    const [arrived] = received;
    expect(arrived?.method).toBe('POST');
    expect(arrived?.url).toBe('/v1/responses');
    expect(arrived?.headers.authorization).toBe('Bearer sk-loopback-key');
    expect(arrived?.body).toEqual(JSON.parse(JSON.stringify(buildResponsesRequest(request, tools))));
    expect(arrived?.body).toMatchObject({
      model: 'gpt-test',
      instructions: 'Be careful.',
      input: [{ type: 'message', role: 'user', content: 'Echo hello.' }],
      tools: [{ type: 'function', name: 'echo', strict: true }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      max_output_tokens: 512,
      store: true,
    });
    expect(turn).toEqual({
      responseId: 'resp_loopback',
      model: 'gpt-test-2030-01-01',
      status: 'completed',
      incompleteReason: null,
      text: 'Calling echo.',
      toolCalls: [{ callId: 'call_1', name: 'echo', argumentsJson: '{"text":"hello"}' }],
      usage: { inputTokens: 40, cachedInputTokens: 0, outputTokens: 12, reasoningTokens: 0, totalTokens: 52 },
    });
  });

  it('sends a placeholder key when none is configured, so keyless servers still work', async () => {
    respond = answerJson(200, completedResponse);
    const client = createOpenAIClient({ apiKey: undefined, baseURL });

    await callResponses(client, request, tools);

    expect(received[0]?.headers.authorization).toBe('Bearer not-set');
  });

  it('makes exactly one request on a 500 and rejects with the APIError, leaving retries to Temporal', async () => {
    respond = answerJson(500, { error: { message: 'The server had an error', type: 'server_error' } });
    const client = createOpenAIClient({ apiKey: 'sk-loopback-key', baseURL });

    const error = await callResponses(client, request, tools).then(
      () => undefined,
      (rejection: unknown) => rejection,
    );

    expect(received).toHaveLength(1);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(500);
    const failure = classifyModelError(error, context());
    expect(failure.type).toBe('ModelError.ServerError');
    expect(failure.retryable).toBe(true);
  });

  it('makes one request on a 500 even with a client that retries by default (a user’s own new OpenAI())', async () => {
    respond = answerJson(500, { error: { message: 'The server had an error', type: 'server_error' } });
    const client = new OpenAI({ apiKey: 'sk-loopback-key', baseURL }); // maxRetries: 2 by default
    await expect(callResponses(client, request, tools)).rejects.toBeInstanceOf(APIError);
    expect(received).toHaveLength(1);
  });

  it('does not retry a 429 itself and hands its retry-after to the classification', async () => {
    respond = answerJson(429, { error: { message: 'Rate limit reached' } }, { 'retry-after': '2' });
    const client = createOpenAIClient({ apiKey: 'sk-loopback-key', baseURL });

    const error = await callResponses(client, request, tools).then(
      () => undefined,
      (rejection: unknown) => rejection,
    );

    expect(received).toHaveLength(1);
    const failure = classifyModelError(error, context());
    expect(failure.type).toBe('ModelError.RateLimit');
    expect(failure.retryAfterMs).toBe(2000);
  });

  it('rejects with a connection error, once, when the server drops the connection', async () => {
    respond = (incoming) => incoming.socket.destroy();
    const client = createOpenAIClient({ apiKey: 'sk-loopback-key', baseURL });

    const error = await callResponses(client, request, tools).then(
      () => undefined,
      (rejection: unknown) => rejection,
    );

    expect(received).toHaveLength(1);
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(classifyModelError(error, context()).type).toBe('ModelError.Connection');
  });

  it('rejects when the passed AbortSignal is aborted while the request is in flight', async () => {
    respond = () => undefined; // never answers
    const client = createOpenAIClient({ apiKey: 'sk-loopback-key', baseURL });
    const controller = new AbortController();

    const call = callResponses(client, request, tools, { signal: controller.signal });
    await Promise.race([requestArrived.promise, call]);
    controller.abort();

    await expect(call).rejects.toBeInstanceOf(APIUserAbortError);
    expect(received).toHaveLength(1);
  });

  it('rejects with a timeout error when the server does not answer within timeoutMs', async () => {
    respond = () => undefined; // never answers
    const client = createOpenAIClient({ apiKey: 'sk-loopback-key', baseURL });

    const error = await callResponses(client, request, tools, { timeoutMs: 200 }).then(
      () => undefined,
      (rejection: unknown) => rejection,
    );

    expect(error).toBeInstanceOf(APIConnectionTimeoutError);
    expect(received).toHaveLength(1);
    expect(classifyModelError(error, context()).type).toBe('ModelError.Timeout');
  });

  it('cleans server text of a failed response before it reaches the classified failure', async () => {
    const secret = 'sk-leaked-0123456789';
    respond = answerJson(200, {
      ...completedResponse,
      status: 'failed',
      output: [],
      error: { code: 'invalid_prompt', message: `Prompt rejected; it contains ${secret}` },
    });
    const client = createOpenAIClient({ apiKey: 'sk-loopback-key', baseURL });

    const error = await callResponses(client, request, tools).then(
      () => undefined,
      (rejection: unknown) => rejection,
    );

    expect(error).toBeInstanceOf(ModelError);
    // callModel stores exactly this message in workflow history.
    const failure = classifyModelError(
      error,
      context((text) => text.split(secret).join('[redacted]')),
    );
    expect(failure.type).toBe('ModelError.ResponseFailed');
    expect(failure.retryable).toBe(false);
    expect(failure.message).not.toContain(secret);
  });
});

describe('a streamed turn still writing when its time is nearly up', () => {
  it('is cut at cutAtMs and comes back incomplete (model_timeout) with what it wrote, its request closed', async () => {
    const closed = deferred();
    let sent = 0;
    const sentAtCut = deferred<number>();
    respond = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (data: Record<string, unknown>) =>
        response.write(`event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`);
      event({
        type: 'response.created',
        sequence_number: 0,
        response: { ...completedResponse, status: 'in_progress', output: [], usage: null },
      });
      // A model writing at its pace, far from any output cap, that would go on past the turn's timeout.
      const timer = setInterval(() => {
        sent += 1;
        event({ type: 'response.output_text.delta', sequence_number: sent, delta: 'more ', output_index: 0 });
      }, 10);
      response.on('close', () => {
        clearInterval(timer);
        sentAtCut.resolve(sent);
        closed.resolve();
      });
    };
    const heard: string[] = [];
    const cutAtMs = Date.now() + 300;
    const turn = await callResponses(createOpenAIClient({ apiKey: 'k', baseURL }), request, tools, {
      sink: { text: (delta) => heard.push(delta), toolCall: () => undefined },
      cutAtMs,
    });
    await closed.promise;
    expect(Date.now()).toBeGreaterThanOrEqual(cutAtMs);
    expect(turn).toMatchObject({ status: 'incomplete', incompleteReason: 'model_timeout', toolCalls: [] });
    // What was heard before the cut is the turn's text: the delta that crossed the bound is not.
    expect(turn.text).toBe(heard.join(''));
    expect(turn.text).toMatch(/^(more )+$/u);
    expect(heard.length).toBeLessThan(await sentAtCut.promise);
  });

  it('is read whole when it ends before then', async () => {
    respond = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const data of [
        { type: 'response.output_text.delta', sequence_number: 1, delta: 'quick', output_index: 0 },
        { type: 'response.completed', sequence_number: 2, response: completedResponse },
      ])
        response.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
      response.end();
    };
    const turn = await callResponses(createOpenAIClient({ apiKey: 'k', baseURL }), request, tools, {
      sink: { text: () => undefined, toolCall: () => undefined },
      cutAtMs: Date.now() + 60_000,
    });
    expect(turn.status).toBe('completed');
  });

  it('falls 10% of the timeout before it, 2 to 30 s, and not at all under 20 s', () => {
    expect(streamCutAt(1_000, 600_000)).toBe(1_000 + 600_000 - 30_000);
    expect(streamCutAt(0, 120_000)).toBe(108_000);
    expect(streamCutAt(0, 20_000)).toBe(18_000);
    expect(streamCutAt(0, 8_000)).toBeUndefined();
  });
});

describe('a streamed turn that writes past its budget (a server that ignores max_output_tokens)', () => {
  it('is cut near max_output_tokens × 8 characters and comes back incomplete, its request closed', async () => {
    const closed = deferred();
    let sent = 0;
    respond = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (data: Record<string, unknown>) =>
        response.write(`event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`);
      event({
        type: 'response.created',
        sequence_number: 0,
        response: { ...completedResponse, status: 'in_progress', output: [], usage: null },
      });
      // A runaway model: the same words until the client goes away.
      const timer = setInterval(() => {
        sent += 1;
        event({
          type: 'response.output_text.delta',
          sequence_number: sent,
          delta: 'again and ',
          output_index: 0,
        });
      }, 1);
      response.on('close', () => {
        clearInterval(timer);
        closed.resolve();
      });
    };
    const heard: string[] = [];
    const turn = await callResponses(
      createOpenAIClient({ apiKey: 'k', baseURL }),
      { ...request, maxOutputTokens: 16 },
      tools,
      { sink: { text: (delta) => heard.push(delta), toolCall: () => undefined } },
    );
    await closed.promise;
    expect((received[0]!.body as { max_output_tokens?: number }).max_output_tokens).toBe(16);
    expect(turn).toMatchObject({
      status: 'incomplete',
      incompleteReason: 'max_output_tokens',
      toolCalls: [],
    });
    // 128 characters allowed: twelve deltas of ten heard and kept, the thirteenth over.
    expect(turn.text).toBe('again and '.repeat(12));
    expect(heard.join('')).toBe(turn.text);
    expect(turn.usage.outputTokens).toBe(Math.ceil(130 / 4));
    expect(turn.responseId).toBe(completedResponse.id);
  });

  it('is read whole when it stays within the budget', async () => {
    respond = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const data of [
        { type: 'response.output_text.delta', sequence_number: 1, delta: 'x'.repeat(128), output_index: 0 },
        { type: 'response.completed', sequence_number: 2, response: completedResponse },
      ])
        response.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
      response.end();
    };
    const turn = await callResponses(
      createOpenAIClient({ apiKey: 'k', baseURL }),
      { ...request, maxOutputTokens: 16 },
      tools,
      { sink: { text: () => undefined, toolCall: () => undefined } },
    );
    expect(turn.status).toBe('completed');
  });
});

describe('an answer with nothing in it (llama-cpp-python answers some streaming requests with 200 and no body)', () => {
  const client = () => createOpenAIClient({ apiKey: 'k', baseURL });
  const sink = { text: () => undefined, toolCall: () => undefined };
  const answer =
    (contentType: string | undefined, body = ''): Respond =>
    (_request, response) => {
      response.writeHead(200, contentType === undefined ? {} : { 'content-type': contentType });
      response.end(body);
    };

  it.each([
    ['a plain request, JSON', 'application/json', false],
    ['a plain request, no content type', undefined, false],
    ['a streaming request, JSON', 'application/json', true],
  ])('is no answer: %s with an empty body is retried, saying so', async (_case, contentType, streamed) => {
    respond = answer(contentType);
    const error = await callResponses(client(), request, tools, streamed ? { sink } : {}).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({
      type: 'ModelError.EmptyResponse',
      retryable: true,
      message: 'The model server answered HTTP 200 with an empty body, which is no answer',
    });
  });

  it('is no answer: a stream with not one event', async () => {
    respond = answer('text/event-stream');
    await expect(callResponses(client(), request, tools, { sink })).rejects.toMatchObject({
      type: 'ModelError.EmptyResponse',
      retryable: true,
      message:
        'The model server answered a streaming request with an empty stream (not one event), which is no answer',
    });
  });

  it('names a body that is not JSON by its length, not its text', async () => {
    respond = answer('application/json', '<html>Bad gateway</html>');
    await expect(callResponses(client(), request, tools)).rejects.toMatchObject({
      type: 'ModelError.ServerError',
      retryable: true,
      message: 'The model server answered HTTP 200 with 24 characters that are not JSON',
    });
  });
});
