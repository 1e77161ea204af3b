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
