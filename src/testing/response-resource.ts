import type { ResponsesRequestBody } from './script.js';

/**
 * A scripted answer as a whole response object: every field OpenAI's Responses API returns and the
 * Open Responses specification requires (`ResponseResource`), taken from the request where the step
 * set none, so a client that reads any of them meets what a real server sends. The step's own values
 * win.
 */
export function asResource(
  answer: Record<string, unknown>,
  body: ResponsesRequestBody,
): Record<string, unknown> {
  const createdAt = typeof answer.created_at === 'number' ? answer.created_at : 1_700_000_000;
  const status = answer.status ?? 'completed';
  return {
    object: 'response',
    created_at: createdAt,
    completed_at: status === 'completed' ? createdAt + 1 : null,
    incomplete_details: null,
    error: null,
    previous_response_id: null,
    instructions: body.instructions ?? null,
    tools: body.tools ?? [],
    tool_choice: body.tool_choice ?? 'auto',
    truncation: body.truncation ?? 'disabled',
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    text: body.text ?? { format: { type: 'text' } },
    top_p: body.top_p ?? 1,
    presence_penalty: 0,
    frequency_penalty: 0,
    top_logprobs: 0,
    temperature: body.temperature ?? 1,
    reasoning: body.reasoning ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: null,
    store: body.store ?? true,
    background: body.background === true,
    service_tier: 'default',
    metadata: body.metadata ?? {},
    safety_identifier: null,
    prompt_cache_key: null,
    ...answer,
  };
}

/** The same response while it is not finished: no output, usage or completion time yet. */
export function unfinished(answer: Record<string, unknown>, status: string): Record<string, unknown> {
  return { ...answer, status, output: [], usage: null, completed_at: null };
}
