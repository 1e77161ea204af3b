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
  [key: string]: unknown;
}

/** One scripted answer. */
export type ScriptStep =
  | { kind: 'response'; build: (request: RecordedRequest, ids: ResponseIds) => Record<string, unknown> }
  | { kind: 'error'; status: number; headers?: Record<string, string>; body: unknown }
  | { kind: 'hang' };

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
              content: [{ type: 'output_text', text: item.text, annotations: [] }],
            };
          }
          if ('reasoning' in item) {
            return {
              type: 'reasoning',
              id: `rs_${position}`,
              summary: [{ type: 'summary_text', text: item.reasoning }],
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

/**
 * A Responses API server on loopback that answers from a script and records every request. Asking for
 * more turns than scripted fails loudly: the request gets a 400 and {@link ScriptedModel.assertDone}
 * throws; so does leaving steps unused.
 */
export class ScriptedModel {
  readonly requests: RecordedRequest[] = [];
  readonly problems: string[] = [];
  readonly #steps: ScriptStep[];
  readonly #server: Server;
  readonly #started = Date.now();
  readonly #waiters: Array<{ count: number; resolve: () => void }> = [];
  readonly #hanging = new Set<ServerResponse>();

  private constructor(steps: ScriptStep[], server: Server) {
    this.#steps = steps;
    this.#server = server;
  }

  /** Starts a server on 127.0.0.1 with a random port. */
  static async start(steps: ScriptStep[]): Promise<ScriptedModel> {
    const server = createServer();
    const model = new ScriptedModel(steps, server);
    server.on(
      'request',
      (request: IncomingMessage, response: ServerResponse) => void model.handle(request, response),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return model;
  }

  /** Base URL for the `openai` SDK. */
  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  /** Resolves once `count` requests have arrived. */
  async waitForRequests(count: number): Promise<void> {
    if (this.requests.length >= count) return;
    await new Promise<void>((resolve) => this.#waiters.push({ count, resolve }));
  }

  /** Throws if a request found no step, a request was malformed, or steps were left unused. */
  assertDone(): void {
    const unused = this.#steps.length - this.requests.length;
    const problems = [...this.problems];
    if (unused > 0) problems.push(`${unused} scripted step(s) were never requested`);
    if (problems.length > 0) throw new Error(`Scripted model: ${problems.join('; ')}`);
  }

  async close(): Promise<void> {
    for (const response of this.#hanging) response.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    if (request.method !== 'POST' || request.url !== '/v1/responses') {
      this.problems.push(`unexpected ${request.method} ${request.url}`);
      return this.send(response, 404, {
        error: { message: `scripted model: no route ${request.method} ${request.url}` },
      });
    }
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
      method: request.method,
      path: request.url,
      headers: request.headers,
      body,
      receivedAt: Date.now() - this.#started,
    };
    this.requests.push(recorded);
    for (const waiter of this.#waiters.filter((w) => this.requests.length >= w.count)) {
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    const step = this.#steps[index];
    if (step === undefined) {
      this.problems.push(`request ${index} arrived but only ${this.#steps.length} step(s) were scripted`);
      return this.send(response, 400, {
        error: { message: `scripted model: no step ${index}; the run asked for more turns than scripted` },
      });
    }
    switch (step.kind) {
      case 'response':
        return this.send(
          response,
          200,
          step.build(recorded, {
            responseId: `resp_${index + 1}`,
            callId: (position) => `call_${index + 1}_${position + 1}`,
          }),
        );
      case 'error':
        return this.send(response, step.status, step.body, step.headers);
      case 'hang':
        this.#hanging.add(response);
        response.on('close', () => this.#hanging.delete(response));
        return;
    }
  }

  private send(
    response: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  }
}
