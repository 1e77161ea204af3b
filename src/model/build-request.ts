import type {
  ResponseCreateParamsNonStreaming,
  ResponseInputItem,
} from 'openai/resources/responses/responses';
import { observationText } from '../contract/observation.js';
import type { ModelRequest } from '../contract/model-request.js';
import type { FunctionToolParam } from '../tools/registry.js';

/**
 * The Responses API request for one turn. Turn one sends the task; later turns chain with
 * `previous_response_id` and send exactly one `function_call_output` per `call_id`, in call order.
 */
export function buildResponsesRequest(
  request: ModelRequest,
  tools: readonly FunctionToolParam[],
): ResponseCreateParamsNonStreaming {
  const input: ResponseInputItem[] =
    request.input.kind === 'task'
      ? [{ type: 'message', role: 'user', content: request.input.task }]
      : request.input.observations.map((observation) => ({
          type: 'function_call_output',
          call_id: observation.callId,
          output: observationText(observation),
        }));
  return {
    model: request.model,
    instructions: request.instructions,
    input,
    ...(request.input.kind === 'observations'
      ? { previous_response_id: request.input.previousResponseId }
      : {}),
    ...(tools.length > 0
      ? { tools: [...tools], tool_choice: 'auto' as const, parallel_tool_calls: request.parallelToolCalls }
      : {}),
    ...(request.maxOutputTokens !== undefined ? { max_output_tokens: request.maxOutputTokens } : {}),
    ...(request.reasoningEffort !== undefined ? { reasoning: { effort: request.reasoningEffort } } : {}),
    store: true,
  };
}
