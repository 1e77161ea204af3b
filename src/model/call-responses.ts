import type OpenAI from 'openai';
import type { ModelRequest } from '../contract/model-request.js';
import type { ModelTurn } from '../contract/model-turn.js';
import type { FunctionToolParam } from '../tools/registry.js';
import { buildResponsesRequest } from './build-request.js';
import { parseResponse } from './parse-response.js';

/** One model turn through the `openai` SDK. Errors are the SDK's; classify them with `classifyModelError`. */
export async function callResponses(
  client: OpenAI,
  request: ModelRequest,
  tools: readonly FunctionToolParam[],
  options: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<ModelTurn> {
  const response = await client.responses.create(buildResponsesRequest(request, tools), {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
  });
  return parseResponse(response);
}
