import type { Response } from 'openai/resources/responses/responses';
import type { ModelTurn } from '../contract/model-turn.js';
import type { ToolCall } from '../contract/tool-call.js';
import type { Usage } from '../contract/usage.js';
import { ModelError, shownId } from './model-error.js';

/**
 * Reduces a Responses API response to a {@link ModelTurn}. The output array is read by item type: a
 * response may hold reasoning, text and several calls in any order, so nothing assumes `output[0]`.
 */
export function parseResponse(response: Response, options: { keepItems?: boolean } = {}): ModelTurn {
  if (response.status === 'failed') {
    const code = response.error?.code ?? 'unknown';
    const serverSide = code === 'server_error' || code === 'rate_limit_exceeded';
    throw new ModelError(
      serverSide ? 'ModelError.ServerError' : 'ModelError.ResponseFailed',
      `The model response ${response.id} failed (${code}): ${response.error?.message ?? 'no message'}`,
      serverSide,
    );
  }
  if (response.status !== 'completed' && response.status !== 'incomplete' && response.status !== undefined) {
    throw new ModelError(
      'ModelError.UnexpectedStatus',
      `The model response ${response.id} came back with status ${String(response.status)}`,
      true,
    );
  }
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  // Reasoning and hosted-tool items need no action from the loop: the response chain keeps them server-side.
  for (const item of response.output) {
    if (item.type === 'message') {
      for (const part of item.content) texts.push(part.type === 'output_text' ? part.text : part.refusal);
    } else if (item.type === 'function_call') {
      toolCalls.push({ callId: item.call_id, name: item.name, argumentsJson: item.arguments });
    }
  }
  // A turn that says nothing is no answer, whatever tokens it spent: a gateway whose upstream failed
  // has answered so (LiteLLM: `completed`, no output, no usage), and llama.cpp's server (`completed`,
  // no output, one output token: the end of its text). So has a model that only reasoned. Retried like
  // a server error, never taken as success; a turn its cap cut (`incomplete`) is the run's to end.
  if (
    response.status !== 'incomplete' &&
    texts.every((text) => text.trim() === '') &&
    toolCalls.length === 0
  ) {
    const outputTokens = response.usage?.output_tokens;
    throw new ModelError(
      'ModelError.EmptyResponse',
      `The model response ${shownId(response.id)} came back ${String(response.status ?? 'without a status')} with no ` +
        `text and no tool call (${response.output.length} output item(s), ` +
        `${outputTokens === undefined ? 'no usage' : `${outputTokens} output token(s)`}): ` +
        'the model server answered nothing, which is no answer',
      true,
    );
  }
  return {
    responseId: response.id,
    model: response.model,
    status: response.status === 'incomplete' ? 'incomplete' : 'completed',
    incompleteReason:
      response.status === 'incomplete' ? (response.incomplete_details?.reason ?? 'unknown') : null,
    text: texts.join('\n'),
    toolCalls,
    usage: toUsage(response.usage),
    ...(options.keepItems === true ? { outputItems: response.output.map(asInputItem) } : {}),
  };
}

/**
 * An output item as the input item a stateless run sends back next turn: as the API sent it. Its
 * `status` stays: an assistant message is not valid input without it (`OutputMessage` requires it).
 */
function asInputItem(item: Response['output'][number]): Record<string, unknown> {
  return { ...(item as unknown as Record<string, unknown>) };
}

function toUsage(usage: Response['usage']): Usage {
  return {
    inputTokens: usage?.input_tokens ?? 0,
    cachedInputTokens: usage?.input_tokens_details?.cached_tokens ?? 0,
    outputTokens: usage?.output_tokens ?? 0,
    reasoningTokens: usage?.output_tokens_details?.reasoning_tokens ?? 0,
    totalTokens: usage?.total_tokens ?? 0,
  };
}
