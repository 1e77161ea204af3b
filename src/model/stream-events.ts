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
 * Reads a Responses API event stream to its end: tells `sink` the text deltas and call starts, and
 * returns the final response (`response.completed`, `.incomplete` or `.failed`). A stream that ends
 * without one, or says `error`, fails the attempt as retryable: Temporal runs the turn again.
 */
export async function readResponseEvents(
  events: AsyncIterable<ResponseStreamEvent>,
  sink: TurnSink,
): Promise<Response> {
  for await (const event of events) {
    // Only these events matter to the loop; the final response carries everything else.
    if (event.type === 'response.created') sink.responseId?.(event.response.id);
    else if (event.type === 'response.output_text.delta') sink.text(event.delta);
    else if (event.type === 'response.output_item.added' && event.item.type === 'function_call')
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
  throw new ModelError('ModelError.ServerError', 'The model stream ended before the response did', true);
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
      : 'The model server answered a streaming request with JSON that is not a response',
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
