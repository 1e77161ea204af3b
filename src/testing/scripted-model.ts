/**
 * A scripted Responses API server for tests and demos: it answers the `openai` SDK on loopback from a
 * script or a policy, in foreground and background mode, and records every request.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { asResource, unfinished } from './response-resource.js';
import { ResponseStream } from './response-stream.js';
import type { RecordedRequest, ResponsesRequestBody, Script, ScriptStep } from './script.js';

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Options for {@link ScriptedModel.start}. */
export interface ScriptedModelOptions {
  /**
   * Checks each create request's body; a non-empty list of problems answers 400, as the real API
   * would, and makes {@link ScriptedModel.assertDone} throw. Tests pass OpenAI's published schema.
   */
  validateRequest?: (body: unknown) => readonly string[];
  /**
   * Answers every request with JSON, a `stream: true` one too, as some Responses-compatible servers
   * that do not stream do.
   */
  jsonOnly?: boolean;
  /**
   * Answers as a server that keeps no conversation does (a chat-completions bridge, LiteLLM without
   * a database): it ignores `previous_response_id` and its responses continue nothing
   * (`previous_response_id: null`). By default it echoes the id a request continued, as OpenAI does.
   */
  forgetsConversation?: boolean;
  /**
   * Answers `GET /v1/responses/{id}` with 400, as a server that takes `background: true` but keeps no
   * response to retrieve does (LiteLLM without a database): a client that must poll cannot.
   */
  cannotRetrieve?: boolean;
  /**
   * The address to listen on: 127.0.0.1 unless given (a container reaches the host at its network's
   * gateway address, not at loopback).
   */
  host?: string;
  /**
   * A context window, in conversation items: a request whose conversation (the items of the responses
   * it continues, its input, one per answer) holds more fails with 400 `context_length_exceeded`, as
   * a model server does, unless it asks for `truncation: "auto"`: then the server drops items from
   * the middle and answers.
   */
  contextWindowItems?: number;
}

/** A background response the server is holding. */
interface StoredResponse {
  body: Record<string, unknown>;
  settled: boolean;
  cancelled: boolean;
  /** Its events, when it was created as a stream: a re-attaching client can stream it again. */
  stream?: ResponseStream;
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
  /** Text deltas streamed so far (`stream: true` requests), over all responses. */
  deltasSent = 0;
  /** Streams a client opened on a background response (`GET …?stream=true`), by id, one entry each. */
  readonly streamRetrievals: string[] = [];
  /** What went wrong so far (unscripted, invalid or failed requests); {@link assertDone} reports them. */
  readonly problems: string[] = [];
  readonly #script: Script;
  readonly #validateRequest: ScriptedModelOptions['validateRequest'];
  readonly #jsonOnly: boolean;
  readonly #forgetsConversation: boolean;
  readonly #contextWindowItems: number | undefined;
  /** Items in the conversation each response ends, by response id, under a context window. */
  readonly #conversationItems = new Map<string, number>();
  readonly #cannotRetrieve: boolean;
  readonly #server: Server;
  readonly #started = Date.now();
  readonly #waiters: Array<{ ready: () => boolean; resolve: () => void }> = [];
  readonly #hanging = new Set<ServerResponse>();
  readonly #stored = new Map<string, StoredResponse>();

  private constructor(script: Script, server: Server, options: ScriptedModelOptions) {
    this.#script = script;
    this.#server = server;
    this.#validateRequest = options.validateRequest;
    this.#jsonOnly = options.jsonOnly === true;
    this.#forgetsConversation = options.forgetsConversation === true;
    this.#contextWindowItems = options.contextWindowItems;
    this.#cannotRetrieve = options.cannotRetrieve === true;
  }

  /** Starts a server on 127.0.0.1 (or `options.host`) with a random port, answering from steps in order or from a policy. */
  static async start(script: Script, options: ScriptedModelOptions = {}): Promise<ScriptedModel> {
    const server = createServer();
    const model = new ScriptedModel(script, server, options);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      model.handle(request, response).catch((error: unknown) => model.fail(response, error));
    });
    await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
    return model;
  }

  /** Base URL for the `openai` SDK. */
  get url(): string {
    const { address, port } = this.#server.address() as AddressInfo;
    return `http://${address.includes(':') ? `[${address}]` : address}:${port}/v1`;
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

  /** Stops the server, dropping any request still held or hanging. */
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
      const url = new URL(request.url ?? '/', 'http://scripted');
      const byId = /^\/v1\/responses\/([^/]+)(\/cancel)?$/.exec(url.pathname);
      if (request.method === 'POST' && url.pathname === '/v1/responses')
        return await this.create(request, response, raw);
      if (request.method === 'GET' && byId && !byId[2] && url.searchParams.get('stream') === 'true')
        return await this.retrieveStream(response, byId[1]!, url.searchParams.get('starting_after'));
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
    const window = this.#contextWindowItems;
    if (window !== undefined) {
      const before =
        typeof body.previous_response_id === 'string'
          ? (this.#conversationItems.get(body.previous_response_id) ?? 0)
          : 0;
      const items = before + (Array.isArray(body.input) ? body.input.length : 1);
      if (items > window && body.truncation !== 'auto')
        return this.send(response, 400, {
          error: {
            message: `Your input exceeds the context window of this model (${items} items, at most ${window}).`,
            type: 'invalid_request_error',
            param: 'input',
            code: 'context_length_exceeded',
          },
        });
      this.#conversationItems.set(`resp_${index + 1}`, Math.min(items, window) + 1);
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
        const answer = asResource(
          {
            // What the response continued, as OpenAI echoes it; a step's own value wins.
            previous_response_id: this.#forgetsConversation ? null : (body.previous_response_id ?? null),
            ...step.build(recorded, {
              responseId: `resp_${index + 1}`,
              callId: (position) => `call_${index + 1}_${position + 1}`,
            }),
          },
          body,
        );
        if (step.accept !== undefined) {
          this.#hanging.add(response);
          await step.accept;
          this.#hanging.delete(response);
          // The client gave up waiting; like the real API, the response may exist all the same.
          if (response.destroyed && body.background !== true) return;
        }
        if (body.stream === true && !this.#jsonOnly)
          return await this.stream(response, answer, step, body.background === true);
        if (body.background === true) {
          const stored: StoredResponse = {
            body: { ...answer, background: true },
            settled: step.hold === undefined,
            cancelled: false,
          };
          this.#stored.set(String(answer.id), stored);
          step.hold?.then(
            () => {
              stored.settled = true;
            },
            (error: unknown) => {
              this.problems.push(`the hold of request ${index} rejected: ${messageOf(error)}`);
              this.notify();
            },
          );
          return this.send(response, 200, unfinished({ ...answer, background: true }, 'queued'));
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

  /** Answers with server-sent events, generated as the step's plan says (a background one is kept). */
  private async stream(
    response: ServerResponse,
    answer: Record<string, unknown>,
    step: Extract<ScriptStep, { kind: 'response' }>,
    background: boolean,
  ): Promise<void> {
    const generation = new ResponseStream(background ? { ...answer, background: true } : answer);
    const plan = step.stream ?? {};
    // A held step streams nothing until its hold settles, as a model still thinking would.
    const paced =
      step.hold !== undefined && plan.resume === undefined
        ? { ...plan, pauseAfter: plan.pauseAfter ?? 0, resume: step.hold }
        : plan;
    const finished = generation.generate(paced, () => {
      this.deltasSent += 1;
      this.notify();
    });
    if (background) {
      const stored: StoredResponse = {
        body: { ...answer, background: true },
        settled: false,
        cancelled: false,
        stream: generation,
      };
      this.#stored.set(answer.id as string, stored);
      finished.then(
        (how) => {
          stored.settled = how === 'done';
        },
        (error: unknown) =>
          this.problems.push(`the stream of ${String(answer.id)} failed: ${messageOf(error)}`),
      );
    }
    this.#hanging.add(response);
    await generation.pipe(response, -1, finished);
    this.#hanging.delete(response);
  }

  /** Streams a stored background response again, from after `startingAfter`. */
  private async retrieveStream(
    response: ServerResponse,
    id: string,
    startingAfter: string | null,
  ): Promise<void> {
    this.streamRetrievals.push(id);
    // Waiters hear of it now: the stream itself may stay open until the test lets the response finish.
    this.notify();
    const stream = this.#stored.get(id)?.stream;
    if (stream === undefined)
      return this.send(response, 404, { error: { message: `No streamed response with id '${id}' found.` } });
    this.#hanging.add(response);
    await stream.pipe(response, startingAfter === null ? -1 : Number(startingAfter));
    this.#hanging.delete(response);
  }

  private retrieve(response: ServerResponse, id: string): void {
    this.retrievals.push(id);
    if (this.#cannotRetrieve)
      return this.send(response, 400, {
        error: {
          message: 'GET responses is not supported',
          type: 'invalid_request_error',
          param: null,
          code: '400',
        },
      });
    const stored = this.#stored.get(id);
    if (stored === undefined)
      return this.send(response, 404, { error: { message: `No response with id '${id}' found.` } });
    if (stored.cancelled)
      return this.send(response, 200, {
        ...stored.body,
        status: 'cancelled',
        output: [],
        completed_at: null,
      });
    if (!stored.settled) return this.send(response, 200, unfinished(stored.body, 'in_progress'));
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
