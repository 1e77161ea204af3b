import type OpenAI from 'openai';
import type { ModelRequest } from '../contract/model-request.js';
import type { ModelTurn } from '../contract/model-turn.js';
import type { FunctionToolParam } from './responses-tools.js';
import { runBackgroundResponse } from './background.js';
import type { BackgroundOptions } from './background.js';
import { buildResponsesRequest } from './build-request.js';
import { parseResponse } from './parse-response.js';
import { readResponseEvents } from './stream-events.js';
import type { TurnSink } from './stream-events.js';

/** Options for {@link callResponses}. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Run the turn in background mode (create, then poll) instead of one foreground request. */
  background?: Omit<BackgroundOptions, 'signal' | 'sink'>;
  /** Stream the turn (`stream: true`) and tell its text and call starts here as they come. */
  sink?: TurnSink;
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
    return parseResponse(
      await runBackgroundResponse(client, params, {
        ...options.background,
        signal,
        ...(options.sink !== undefined ? { sink: options.sink } : {}),
      }),
    );
  }
  // Temporal retries a model turn: the SDK's own retries, whatever the client says, would multiply
  // attempts and hide failures from history.
  const requestOptions = {
    maxRetries: 0,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
  };
  if (options.sink !== undefined) {
    const events = await client.responses.create({ ...params, stream: true }, requestOptions);
    return parseResponse(await readResponseEvents(events, options.sink), { keepItems: stateless });
  }
  const response = await client.responses.create(params, requestOptions);
  return parseResponse(response, { keepItems: stateless });
}
