/**
 * A scripted Responses API server for tests and demos: it answers the `openai` SDK on loopback from a
 * script or a policy, in foreground and background mode, and records every request.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the scripted model received, as the `openai` SDK sent it. */
export interface RecordedRequest {
  /** 0-based position in the script. */
  index: number;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (a Responses API create request). */
  body: ResponsesRequestBody;
  /** Milliseconds since the server started. */
  receivedAt: number;
}

/** The parts of a Responses API request tests look at. */
export interface ResponsesRequestBody {
  model: string;
  instructions?: string;
  input: Array<Record<string, unknown>>;
  previous_response_id?: string;
  tools?: Array<{
    type: string;
    name: string;
    description: string;
    parameters: Record<string, unknown>;
    strict: boolean;
  }>;
  parallel_tool_calls?: boolean;
  max_output_tokens?: number;
  store?: boolean;
  include?: string[];
  [key: string]: unknown;
}

/** One scripted answer. */
export type ScriptStep =
  | {
      kind: 'response';
      build: (request: RecordedRequest, ids: ResponseIds) => Record<string, unknown>;
      /** The answer is held back until this settles: the HTTP reply in foreground mode, completion in background mode. */
      hold?: Promise<unknown>;
      /** The create request is not answered before this settles, in either mode: a server slow to accept. */
      accept?: Promise<unknown>;
    }
  | { kind: 'error'; status: number; headers?: Record<string, string>; body: unknown }
  | { kind: 'hang' };

/** Answers a request by looking at it, for runs whose requests interleave (concurrent runs). */
export type ScriptPolicy = (request: RecordedRequest) => ScriptStep;

/** Ids the server hands out, so tests can predict them. */
export interface ResponseIds {
  responseId: string;
  callId(position: number): string;
}

/** A function call the scripted model emits. */
export interface ScriptedCall {
  name: string;
  /** Arguments as an object (encoded as JSON) or as the exact raw string to send. */
  arguments: Record<string, unknown> | string;
  callId?: string;
}

/** An output item of a scripted response. */
export type ScriptedItem = { text: string } | { call: ScriptedCall } | { reasoning: string };

const usage = (input: number, output: number) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: input + output,
});

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Builders for scripted steps. */
export const reply = {
  /** A completed response with these output items, in this order. */
  items(
    items: ScriptedItem[],
    options: { status?: 'completed' | 'incomplete'; incompleteReason?: string } = {},
  ): ScriptStep {
    return {
      kind: 'response',
      build: (request, ids) => {
        let callPosition = 0;
        const output = items.map((item, position) => {
          if ('text' in item) {
            return {
              type: 'message',
              id: `msg_${position}`,
              role: 'assistant',
              status: 'completed',
              // As the API sends it: `logprobs` is always present, empty unless the request asked for them.
              content: [{ type: 'output_text', text: item.text, annotations: [], logprobs: [] }],
            };
          }
          if ('reasoning' in item) {
            // As the API does: reasoning comes back as encrypted content when the request asks for it.
            const encrypted = request.body.include?.includes('reasoning.encrypted_content') === true;
            return {
              type: 'reasoning',
              id: `rs_${position}`,
              summary: [{ type: 'summary_text', text: item.reasoning }],
              ...(encrypted ? { encrypted_content: `encrypted:${ids.responseId}:${item.reasoning}` } : {}),
            };
          }
          const call = item.call;
          return {
            type: 'function_call',
            id: `fc_${position}`,
            call_id: call.callId ?? ids.callId(callPosition++),
            name: call.name,
            arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
            status: 'completed',
          };
        });
        const status = options.status ?? 'completed';
        return {
          id: ids.responseId,
          object: 'response',
          created_at: 1_700_000_000,
          status,
          incomplete_details:
            status === 'incomplete' ? { reason: options.incompleteReason ?? 'max_output_tokens' } : null,
          error: null,
          model: request.body.model,
          output,
          usage: usage(100 + request.index, 10 + output.length),
        };
      },
    };
  },
  /** The same step, answered only once `hold` settles. */
  held(step: ScriptStep, hold: Promise<unknown>): ScriptStep {
    if (step.kind !== 'response') throw new Error('only responses can be held');
    return { ...step, hold };
  },
  /** The same step, but the create request itself is answered only once `accept` settles. */
  slowToAccept(step: ScriptStep, accept: Promise<unknown>): ScriptStep {
    if (step.kind !== 'response') throw new Error('only responses can be slow to accept');
    return { ...step, accept };
  },
  /** A final answer. */
  text(text: string): ScriptStep {
    return reply.items([{ text }]);
  },
  /** A response holding only these calls. */
  calls(...calls: ScriptedCall[]): ScriptStep {
    return reply.items(calls.map((call) => ({ call })));
  },
  /** An HTTP error with an OpenAI-style error body. */
  error(
    status: number,
    message: string,
    options: { headers?: Record<string, string>; code?: string } = {},
  ): ScriptStep {
    return {
      kind: 'error',
      status,
      ...(options.headers ? { headers: options.headers } : {}),
      body: { error: { message, type: 'error', code: options.code ?? null, param: null } },
    };
  },
  /** Never answers; the request ends only when the client aborts it. */
  hang(): ScriptStep {
    return { kind: 'hang' };
  },
};

/** Options for {@link ScriptedModel.start}. */
export interface ScriptedModelOptions {
  /**
   * Checks each create request's body; a non-empty list of problems answers 400, as the real API
   * would, and makes {@link ScriptedModel.assertDone} throw. Tests pass OpenAI's published schema.
   */
  validateRequest?: (body: unknown) => readonly string[];
}

/** A background response the server is holding. */
interface StoredResponse {
  body: Record<string, unknown>;
  settled: boolean;
  cancelled: boolean;
}

/**
 * A Responses API server on loopback that answers from a script and records every request. It speaks
 * both modes: foreground (`POST /v1/responses` answers with the finished response) and background
 * (`background: true` answers `queued`; `GET /v1/responses/{id}` reports progress; `POST
 * /v1/responses/{id}/cancel` cancels). Asking for more turns than scripted fails loudly: the request
 * gets a 400 and {@link ScriptedModel.assertDone} throws; so does leaving steps unused.
 */
export class ScriptedModel {
  /** Every `create` request, in arrival order (the script position is the index). */
  readonly requests: RecordedRequest[] = [];
  /** Ids of background responses that were polled, one entry per poll. */
  readonly retrievals: string[] = [];
  /** Ids of background responses that were cancelled. */
  readonly cancellations: string[] = [];
  readonly problems: string[] = [];
  readonly #script: ScriptStep[] | ScriptPolicy;
  readonly #validateRequest: ScriptedModelOptions['validateRequest'];
  readonly #server: Server;
  readonly #started = Date.now();
  readonly #waiters: Array<{ ready: () => boolean; resolve: () => void }> = [];
  readonly #hanging = new Set<ServerResponse>();
  readonly #stored = new Map<string, StoredResponse>();

  private constructor(script: ScriptStep[] | ScriptPolicy, server: Server, options: ScriptedModelOptions) {
    this.#script = script;
    this.#server = server;
    this.#validateRequest = options.validateRequest;
  }

  /** Starts a server on 127.0.0.1 with a random port, answering from steps in order or from a policy. */
  static async start(
    script: ScriptStep[] | ScriptPolicy,
    options: ScriptedModelOptions = {},
  ): Promise<ScriptedModel> {
    const server = createServer();
    const model = new ScriptedModel(script, server, options);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      model.handle(request, response).catch((error: unknown) => model.fail(response, error));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return model;
  }

  /** Base URL for the `openai` SDK. */
  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  /** Resolves once `count` create requests have arrived. */
  async waitForRequests(count: number): Promise<void> {
    return this.waitUntil(() => this.requests.length >= count);
  }

  /** Resolves once `ready()` holds; checked after every request the server handles. */
  async waitUntil(ready: () => boolean): Promise<void> {
    if (ready()) return;
    await new Promise<void>((resolve) => this.#waiters.push({ ready, resolve }));
  }

  /** Throws if a request found no step, a request was malformed, or steps were left unused. */
  assertDone(): void {
    const problems = [...this.problems];
    if (Array.isArray(this.#script)) {
      const unused = this.#script.length - this.requests.length;
      if (unused > 0) problems.push(`${unused} scripted step(s) were never requested`);
    }
    if (problems.length > 0) throw new Error(`Scripted model: ${problems.join('; ')}`);
  }

  async close(): Promise<void> {
    for (const response of this.#hanging) response.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  private notify(): void {
    for (const waiter of this.#waiters.filter((candidate) => candidate.ready())) {
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  /** A request that could not be answered (say, its hold rejected): a 500 and a problem, never silence. */
  private fail(response: ServerResponse, error: unknown): void {
    this.problems.push(`a request failed: ${messageOf(error)}`);
    this.#hanging.delete(response);
    if (response.headersSent) response.destroy();
    else this.send(response, 500, { error: { message: `scripted model: ${messageOf(error)}` } });
    this.notify();
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const route = `${request.method} ${request.url}`;
    try {
      const byId = /^\/v1\/responses\/([^/]+)(\/cancel)?$/.exec(request.url ?? '');
      if (request.method === 'POST' && request.url === '/v1/responses')
        return await this.create(request, response, raw);
      if (request.method === 'GET' && byId && !byId[2]) return this.retrieve(response, byId[1]!);
      if (request.method === 'POST' && byId?.[2]) return this.cancel(response, byId[1]!);
      this.problems.push(`unexpected ${route}`);
      return this.send(response, 404, { error: { message: `scripted model: no route ${route}` } });
    } finally {
      this.notify();
    }
  }

  private async create(request: IncomingMessage, response: ServerResponse, raw: string): Promise<void> {
    const index = this.requests.length;
    let body: ResponsesRequestBody;
    try {
      body = JSON.parse(raw) as ResponsesRequestBody;
    } catch {
      this.problems.push(`request ${index} is not JSON`);
      return this.send(response, 400, { error: { message: 'scripted model: body is not JSON' } });
    }
    const recorded: RecordedRequest = {
      index,
      method: 'POST',
      path: '/v1/responses',
      headers: request.headers,
      body,
      receivedAt: Date.now() - this.#started,
    };
    this.requests.push(recorded);
    // Waiters hear of the request now, not when its (possibly held) answer goes out.
    this.notify();
    const invalid = this.#validateRequest?.(body) ?? [];
    if (invalid.length > 0) {
      this.problems.push(...invalid.map((problem) => `request ${index} ${problem}`));
      return this.send(response, 400, {
        error: { message: invalid.join('; '), type: 'invalid_request_error', param: null, code: null },
      });
    }
    const step = Array.isArray(this.#script) ? this.#script[index] : this.#script(recorded);
    if (step === undefined) {
      this.problems.push(
        `request ${index} arrived but only ${this.requests.length - 1} step(s) were scripted`,
      );
      return this.send(response, 400, {
        error: { message: `scripted model: no step ${index}; the run asked for more turns than scripted` },
      });
    }
    switch (step.kind) {
      case 'response': {
        const answer = step.build(recorded, {
          responseId: `resp_${index + 1}`,
          callId: (position) => `call_${index + 1}_${position + 1}`,
        });
        if (step.accept !== undefined) {
          this.#hanging.add(response);
          await step.accept;
          this.#hanging.delete(response);
          // The client gave up waiting; like the real API, the response may exist all the same.
          if (response.destroyed && body.background !== true) return;
        }
        if (body.background === true) {
          const stored: StoredResponse = {
            body: { ...answer, background: true },
            settled: step.hold === undefined,
            cancelled: false,
          };
          this.#stored.set(answer.id as string, stored);
          step.hold?.then(
            () => {
              stored.settled = true;
            },
            (error: unknown) => {
              this.problems.push(`the hold of request ${index} rejected: ${messageOf(error)}`);
              this.notify();
            },
          );
          return this.send(response, 200, {
            ...answer,
            background: true,
            status: 'queued',
            output: [],
            usage: null,
          });
        }
        if (step.hold !== undefined) {
          this.#hanging.add(response);
          await step.hold;
          this.#hanging.delete(response);
          if (response.destroyed) return;
        }
        return this.send(response, 200, answer);
      }
      case 'error':
        return this.send(response, step.status, step.body, step.headers);
      case 'hang':
        this.#hanging.add(response);
        response.on('close', () => this.#hanging.delete(response));
        return;
    }
  }

  private retrieve(response: ServerResponse, id: string): void {
    this.retrievals.push(id);
    const stored = this.#stored.get(id);
    if (stored === undefined)
      return this.send(response, 404, { error: { message: `No response with id '${id}' found.` } });
    if (stored.cancelled)
      return this.send(response, 200, { ...stored.body, status: 'cancelled', output: [] });
    if (!stored.settled)
      return this.send(response, 200, { ...stored.body, status: 'in_progress', output: [], usage: null });
    return this.send(response, 200, stored.body);
  }

  private cancel(response: ServerResponse, id: string): void {
    this.cancellations.push(id);
    const stored = this.#stored.get(id);
    if (stored === undefined)
      return this.send(response, 404, { error: { message: `No response with id '${id}' found.` } });
    if (!stored.settled) stored.cancelled = true;
    return this.send(response, 200, {
      ...stored.body,
      status: stored.cancelled ? 'cancelled' : stored.body.status,
    });
  }

  private send(
    response: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    if (response.destroyed) return;
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  }
}
