/**
 * What a scripted model answers from, and what it records: the data shared by the step builders
 * (reply.ts) and the server (scripted-model.ts).
 */

/** A request the scripted model received, as the `openai` SDK sent it. */
export interface RecordedRequest {
  /** 0-based position in the script. */
  index: number;
  /** The HTTP method (always `POST` for a create request). */
  method: string;
  /** The request path (`/v1/responses`). */
  path: string;
  /** The HTTP headers as Node parsed them. */
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (a Responses API create request). */
  body: ResponsesRequestBody;
  /** Milliseconds since the server started. */
  receivedAt: number;
}

/** The parts of a Responses API create request tests look at; everything else is kept as sent. */
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

/** Ids the server hands out, so tests can predict them. */
export interface ResponseIds {
  /** `resp_<n>` for the n-th create request, counting from 1. */
  responseId: string;
  /** `call_<n>_<position + 1>`: the id of the call at `position` among the response's calls. */
  callId(position: number): string;
}

/** One scripted answer: a response (possibly held back), an HTTP error, or no answer at all. */
export type ScriptStep =
  | {
      kind: 'response';
      /** Builds the response body from the request it answers. */
      build: (request: RecordedRequest, ids: ResponseIds) => Record<string, unknown>;
      /** The answer is held back until this settles: the HTTP reply in foreground mode, completion in background mode. */
      hold?: Promise<unknown>;
      /** The create request is not answered before this settles, in either mode: a server slow to accept. */
      accept?: Promise<unknown>;
      /** How a streamed answer (`stream: true`) goes out; see {@link StreamPlan}. */
      stream?: StreamPlan;
    }
  | { kind: 'error'; status: number; headers?: Record<string, string>; body: unknown }
  | { kind: 'hang' };

/**
 * How a streamed answer goes out: text in word-sized deltas. `pauseAfter` deltas, it waits for
 * `resume` (a worker can be killed meanwhile; `pauseAfter: 0` holds back every output item, calls
 * too); `cutAfter` deltas, it drops the connection, as a
 * network fault would (a foreground attempt then fails).
 */
export interface StreamPlan {
  /** Milliseconds between deltas, as a model writing at that pace (default: one per event-loop turn). */
  deltaMs?: number;
  pauseAfter?: number;
  resume?: Promise<unknown>;
  cutAfter?: number;
}

/** Answers a request by looking at it, for runs whose requests interleave (concurrent runs). */
export type ScriptPolicy = (request: RecordedRequest) => ScriptStep;

/** What a scripted model answers from: steps in request order, or a policy. */
export type Script = ScriptStep[] | ScriptPolicy;
