import type OpenAI from 'openai';
import type { Response, ResponseCreateParamsNonStreaming } from 'openai/resources/responses/responses';
import type { ModelRequest } from '../contract/model-request.js';
import type { ModelTurn } from '../contract/model-turn.js';
import type { FunctionToolParam } from './responses-tools.js';
import { runBackgroundResponse } from './background.js';
import type { BackgroundOptions } from './background.js';
import { buildResponsesRequest } from './build-request.js';
import { ModelError, shownId } from './model-error.js';
import { parseResponse } from './parse-response.js';
import {
  readResponseEvents,
  readResponseJson,
  responseBody,
  streamBudgetChars,
  wasCut,
} from './stream-events.js';
import type { TurnSink } from './stream-events.js';

/** A sink for a turn nobody watches. */
const SILENT: TurnSink = { text: () => undefined, toolCall: () => undefined };

/** Options for {@link callResponses}. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Run the turn in background mode (create, then poll) instead of one foreground request. */
  background?: Omit<BackgroundOptions, 'signal' | 'sink'>;
  /** Stream the turn (`stream: true`) and tell its text and call starts here as they come. */
  sink?: TurnSink;
  /**
   * Called with a warning each time the server answers a streamed turn with plain JSON instead of
   * events: the turn still succeeds, and the sink hears it whole at its end.
   */
  onStreamFallback?: (detail: string) => void;
  /**
   * When a streamed turn that is still writing is cut and ends `incomplete` (`model_timeout`), a
   * `Date.now()` value: shortly before the attempt's own timeout (see `streamCutAt`).
   */
  cutAtMs?: number | undefined;
}

/** A hook for {@link CallOptions.onStreamFallback} that passes on only the first warning. */
export function warnOnce<T = string>(warn: (detail: T) => void): (detail: T) => void {
  let warned = false;
  return (detail) => {
    if (warned) return;
    warned = true;
    warn(detail);
  };
}

/** One model turn through the `openai` SDK. Errors are the SDK's; classify them with `classifyModelError`. */
export async function callResponses(
  client: OpenAI,
  request: ModelRequest,
  tools: readonly FunctionToolParam[],
  options: CallOptions = {},
): Promise<ModelTurn> {
  const params = buildResponsesRequest(request, tools);
  const stateless = request.input.kind === 'items';
  // Background mode needs stored responses, so a stateless turn (`store: false`) is always foreground.
  if (options.background !== undefined && !stateless) {
    const signal = options.signal ?? new AbortController().signal;
    const response = await runBackgroundResponse(client, params, {
      ...options.background,
      signal,
      ...(options.sink !== undefined ? { sink: options.sink } : {}),
      ...(options.cutAtMs !== undefined ? { cutAtMs: options.cutAtMs } : {}),
    });
    return parseResponse(atCap(params, continued(params, response)));
  }
  // Temporal retries a model turn: the SDK's own retries, whatever the client says, would multiply
  // attempts and hide failures from history.
  const requestOptions = {
    maxRetries: 0,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
  };
  if (options.sink !== undefined) {
    const streamed = await streamTurn(client, params, requestOptions, options.sink, options);
    return parseResponse(atCap(params, continued(params, streamed)), { keepItems: stateless });
  }
  // Read here, not by the SDK: an empty or non-JSON body then fails with a reason that says so.
  const answer = await client.responses.create(params, requestOptions).asResponse();
  const response = readResponseJson(await responseBody(answer), SILENT);
  return parseResponse(atCap(params, continued(params, response)), { keepItems: stateless });
}

/**
 * `response`, or, when it says `completed` with as many output tokens as the request allowed, the same
 * response `incomplete` for `max_output_tokens`, as the Responses API reports a turn its cap cut.
 * llama.cpp's server says `completed` there: an answer cut mid-sentence would end a run as
 * completed, and a cut call's arguments would run.
 */
export function atCap(params: { max_output_tokens?: number | null }, response: Response): Response {
  const cap = params.max_output_tokens;
  if (response.status !== 'completed' || cap === undefined || cap === null) return response;
  if ((response.usage?.output_tokens ?? 0) < cap) return response;
  return { ...response, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
}

/**
 * `response`, when it continued the conversation the request asked it to continue; otherwise a
 * {@link ModelError} that fails the run at once. A server that keeps no conversation (a
 * chat-completions bridge such as LiteLLM without a database, Ollama, llama.cpp's server) ignores
 * `previous_response_id` and answers the newest input alone: without the task and every turn
 * before, so a run would go on blind until its limits. OpenAI (and Azure, vLLM) echo the id they
 * continued; anything else (another id, `null`, none) means the conversation was not continued.
 */
export function continued(params: { previous_response_id?: string | null }, response: Response): Response {
  const asked = params.previous_response_id;
  // A turn cut at its stream budget ends the run as incomplete; what it continued no longer matters.
  if (asked === undefined || asked === null || wasCut(response)) return response;
  const answered = (response as { previous_response_id?: unknown }).previous_response_id;
  if (answered === asked) return response;
  throw new ModelError(
    'ModelError.ConversationNotContinued',
    `The model server did not continue the conversation: this turn continues response ${shownId(asked)} ` +
      `(previous_response_id), and its answer ${shownId(response.id)} continues ` +
      `${typeof answered === 'string' ? shownId(answered) : 'nothing'}. The model saw only this turn's input, not ` +
      'the task or the turns before it. The server keeps no conversation (as LiteLLM without a database, ' +
      'Ollama and llama.cpp do): set KEEL_CONVERSATION=stateless on the worker (or ' +
      'conversation "stateless" in the run input, keel run --conversation stateless), which sends the whole ' +
      'conversation every turn.',
    false,
  );
}

/**
 * One streamed turn. Some Responses-compatible servers ignore `stream: true` and answer with the
 * whole response as JSON; that turn is read whole rather than failed as a stream that never finished.
 */
async function streamTurn(
  client: OpenAI,
  params: ResponseCreateParamsNonStreaming,
  requestOptions: OpenAI.RequestOptions,
  sink: TurnSink,
  { onStreamFallback, cutAtMs }: Pick<CallOptions, 'onStreamFallback' | 'cutAtMs'>,
): Promise<Response> {
  const { data: events, response } = await client.responses
    .create({ ...params, stream: true }, requestOptions)
    .withResponse();
  const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
  // Only a JSON media type means JSON: events without a content type are read as events, as the SDK does.
  if (mediaType !== 'application/json' && !mediaType.endsWith('+json'))
    return readResponseEvents(events, sink, {
      budgetChars: streamBudgetChars(params.max_output_tokens),
      cutAtMs,
    });
  const turn = readResponseJson(await responseBody(response), sink);
  onStreamFallback?.(
    `The model server answered a streaming request with ${mediaType} instead of server-sent events: ` +
      'each turn is read whole, and watchers see its text only when it ends',
  );
  return turn;
}
