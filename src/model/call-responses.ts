import type OpenAI from 'openai';
import type { ModelRequest } from '../contract/model-request.js';
import type { ModelTurn } from '../contract/model-turn.js';
import type { FunctionToolParam } from './responses-tools.js';
import { runBackgroundResponse } from './background.js';
import type { BackgroundOptions } from './background.js';
import { buildResponsesRequest } from './build-request.js';
import { parseResponse } from './parse-response.js';

/** Options for {@link callResponses}. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Run the turn in background mode (create, then poll) instead of one foreground request. */
  background?: Omit<BackgroundOptions, 'signal'>;
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
    return parseResponse(await runBackgroundResponse(client, params, { ...options.background, signal }));
  }
  // Temporal retries a model turn: the SDK's own retries, whatever the client says, would multiply
  // attempts and hide failures from history.
  const response = await client.responses.create(params, {
    maxRetries: 0,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
  });
  return parseResponse(response, { keepItems: stateless });
}
