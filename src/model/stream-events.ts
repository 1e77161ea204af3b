import type { Response, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { ModelError } from './model-error.js';

/** Hears a streamed turn as it is generated. */
export interface TurnSink {
  /** A piece of the turn's text. */
  text(delta: string): void;
  /** A call the model started writing (its arguments follow in the final response). */
  toolCall(callId: string, name: string): void;
  /** The response's id, as soon as the stream says it. */
  responseId?(id: string): void;
}

/**
 * How many characters a streamed turn may write per output token it may spend: a turn that streams
 * more (text, call arguments, reasoning summaries, refusals) than `max_output_tokens` times this is
 * cut there. A token is about 4 characters of English and rarely more than 8 of anything, so a
 * server that honours the cap never meets this; one that ignores it (and a runaway model) is stopped
 * near it instead of writing until the turn's timeout.
 */
export const STREAM_CHARS_PER_TOKEN = 8;

/** The most characters a turn may stream under `maxOutputTokens` (none without a cap). */
export function streamBudgetChars(maxOutputTokens: number | null | undefined): number | undefined {
  return typeof maxOutputTokens === 'number' ? maxOutputTokens * STREAM_CHARS_PER_TOKEN : undefined;
}

/**
 * What a streamed turn may spend before it is cut and ends `incomplete`, as a turn the server capped
 * does: characters (`budgetChars`, reason `max_output_tokens`), and time (`cutAtMs`, a `Date.now()`
 * value, reason `model_timeout`). The time bound falls shortly before the attempt's own timeout, so
 * a model that is still writing when its time is up keeps what it wrote, instead of the attempt
 * timing out and its retry writing it all again. A stream that stalls is not cut: it times out and
 * is tried again.
 */
export interface StreamBounds {
  budgetChars?: number | undefined;
  cutAtMs?: number | undefined;
}

/** The reason a turn cut at its time bound ends `incomplete` with. */
export const MODEL_TIMEOUT_REASON = 'model_timeout';

/** The shortest model timeout whose attempts are cut before it; a shorter one just times out. */
export const STREAM_CUT_MIN_TIMEOUT_MS = 20_000;

/**
 * When a streamed attempt that may take `timeoutMs` and started at `startedAtMs` is cut: 10% of its
 * time (2 to 30 s) before its timeout, time to hand back what it wrote before Temporal gives up on it.
 * None under {@link STREAM_CUT_MIN_TIMEOUT_MS}: there the margin would eat the turn.
 */
export function streamCutAt(startedAtMs: number, timeoutMs: number): number | undefined {
  if (timeoutMs < STREAM_CUT_MIN_TIMEOUT_MS) return undefined;
  return startedAtMs + timeoutMs - Math.min(30_000, Math.max(2_000, timeoutMs / 10));
}

/** Responses that {@link readResponseEvents} made up when it cut a turn at its budget. */
const cutResponses = new WeakSet<Response>();

/** The response stands for a turn cut at its stream budget: the server may still be generating it. */
export function wasCut(response: Response): boolean {
  return cutResponses.has(response);
}

/**
 * Reads a Responses API event stream to its end: tells `sink` the text deltas and call starts, and
 * returns the final response (`response.completed`, `.incomplete` or `.failed`). A stream that ends
 * without one, or says `error`, fails the attempt as retryable: Temporal runs the turn again.
 *
 * Past one of its `bounds`, a turn stops being read (which closes the request) and comes back
 * `incomplete`, as the Responses API answers a turn that reached its cap: with the text written so
 * far, no call, and usage estimated at 4 characters a token.
 */
export async function readResponseEvents(
  events: AsyncIterable<ResponseStreamEvent>,
  sink: TurnSink,
  bounds: StreamBounds = {},
): Promise<Response> {
  const { budgetChars, cutAtMs } = bounds;
  const bounded = budgetChars !== undefined || cutAtMs !== undefined;
  let created: Response | undefined;
  let streamed = 0;
  let text = '';
  let seen = 0;
  for await (const event of events) {
    seen += 1;
    const delta = (event as { delta?: unknown }).delta;
    if (typeof delta === 'string') {
      streamed += delta.length;
      if (budgetChars !== undefined && streamed > budgetChars)
        return cut(created, text, streamed, 'max_output_tokens');
      if (cutAtMs !== undefined && Date.now() >= cutAtMs)
        return cut(created, text, streamed, MODEL_TIMEOUT_REASON);
    }
    // Only these events matter to the loop; the final response carries everything else.
    if (event.type === 'response.created') {
      created = event.response;
      sink.responseId?.(event.response.id);
    } else if (event.type === 'response.output_text.delta') {
      sink.text(event.delta);
      if (bounded) text += event.delta;
    } else if (event.type === 'response.output_item.added' && event.item.type === 'function_call')
      sink.toolCall(event.item.call_id, event.item.name);
    else if (
      event.type === 'response.completed' ||
      event.type === 'response.incomplete' ||
      event.type === 'response.failed'
    )
      return event.response;
    else if (event.type === 'error')
      throw new ModelError(
        'ModelError.ServerError',
        `The model stream reported an error (${event.code ?? 'no code'}): ${event.message}`,
        true,
      );
  }
  throw new ModelError(
    seen === 0 ? 'ModelError.EmptyResponse' : 'ModelError.ServerError',
    seen === 0
      ? 'The model server answered a streaming request with an empty stream (not one event), which is no answer'
      : 'The model stream ended before the response did',
    true,
  );
}

/** The response of a turn cut at one of its bounds, as the API would have ended it at its cap. */
function cut(created: Response | undefined, text: string, streamed: number, reason: string): Response {
  const estimated = Math.ceil(streamed / 4);
  const response = {
    ...(created ?? { id: 'unknown', object: 'response', model: 'unknown', created_at: 0 }),
    status: 'incomplete',
    incomplete_details: { reason },
    output:
      text === ''
        ? []
        : [
            {
              type: 'message',
              id: 'cut',
              role: 'assistant',
              status: 'incomplete',
              content: [{ type: 'output_text', text, annotations: [] }],
            },
          ],
    usage: {
      input_tokens: 0,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: estimated,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: estimated,
    },
  } as unknown as Response;
  cutResponses.add(response);
  return response;
}

/**
 * The JSON a model server answered with, read from its HTTP response: an empty body or one that is
 * not JSON fails the attempt as retryable (a server fault: `llama-cpp-python`'s server answers some
 * streaming requests with 200 and no body), with a reason that says what came back.
 */
export async function responseBody(response: { status: number; text(): Promise<string> }): Promise<unknown> {
  const text = await response.text();
  if (text.trim() === '')
    throw new ModelError(
      'ModelError.EmptyResponse',
      `The model server answered HTTP ${response.status} with an empty body, which is no answer`,
      true,
    );
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ModelError(
      'ModelError.ServerError',
      `The model server answered HTTP ${response.status} with ${text.length} characters that are not JSON`,
      true,
    );
  }
}

/**
 * Reads the JSON body a server answered a streaming request with, as a server that does not stream
 * does: tells `sink` the whole response and returns it. An error body fails the attempt as retryable,
 * as a stream's `error` event does.
 */
export function readResponseJson(body: unknown, sink: TurnSink): Response {
  if (isResponse(body)) {
    sink.responseId?.(body.id);
    replayResponse(body, sink);
    return body;
  }
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  throw new ModelError(
    'ModelError.ServerError',
    typeof error?.message === 'string'
      ? `The model server reported an error (${typeof error.code === 'string' ? error.code : 'no code'}): ${error.message}`
      : 'The model server answered with JSON that is not a response',
    true,
  );
}

function isResponse(body: unknown): body is Response {
  const candidate = body as Partial<Response> | null;
  return typeof candidate?.id === 'string' && Array.isArray(candidate.output);
}

/** Tells `sink` a finished response as if it had been streamed: its whole text and its calls. */
export function replayResponse(response: Response, sink: TurnSink): void {
  for (const item of response.output) {
    if (item.type === 'message') {
      for (const part of item.content) if (part.type === 'output_text') sink.text(part.text);
    } else if (item.type === 'function_call') {
      sink.toolCall(item.call_id, item.name);
    }
  }
}
