/**
 * Builders for the steps of a scripted model: Responses API answers made of text, reasoning and
 * function calls, errors, held and hanging answers.
 */
import type { ScriptStep, StreamPlan } from './script.js';

/** A function call the scripted model emits. */
export interface ScriptedCall {
  name: string;
  /** Arguments as an object (encoded as JSON) or as the exact raw string to send. */
  arguments: Record<string, unknown> | string;
  /** The call's `call_id`; the server's predictable `call_<turn>_<position>` when absent. */
  callId?: string;
}

/** An output item of a scripted response. */
export type ScriptedItem = { text: string } | { call: ScriptedCall } | { reasoning: string };

// Predictable token counts, so tests can check sums: 100 + the request's index in, 10 + output items out.
const usage = (input: number, output: number) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: input + output,
});

/** Builders for scripted steps; every response charges 100 + request index input and 10 + items output tokens. */
export const reply = {
  /** A completed response with these output items, in this order. */
  items(
    items: ScriptedItem[],
    options: { status?: 'completed' | 'incomplete'; incompleteReason?: string } = {},
  ): ScriptStep {
    return {
      kind: 'response',
      build: (request, ids) => {
        let callPosition = 0;
        const output = items.map((item, position) => {
          if ('text' in item) {
            return {
              type: 'message',
              id: `msg_${position}`,
              role: 'assistant',
              status: 'completed',
              // As the API sends it: `logprobs` is always present, empty unless the request asked for them.
              content: [{ type: 'output_text', text: item.text, annotations: [], logprobs: [] }],
            };
          }
          if ('reasoning' in item) {
            // As the API does: reasoning comes back as encrypted content when the request asks for it.
            const encrypted = request.body.include?.includes('reasoning.encrypted_content') === true;
            return {
              type: 'reasoning',
              id: `rs_${position}`,
              summary: [{ type: 'summary_text', text: item.reasoning }],
              ...(encrypted ? { encrypted_content: `encrypted:${ids.responseId}:${item.reasoning}` } : {}),
            };
          }
          const call = item.call;
          return {
            type: 'function_call',
            id: `fc_${position}`,
            call_id: call.callId ?? ids.callId(callPosition++),
            name: call.name,
            arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
            status: 'completed',
          };
        });
        const status = options.status ?? 'completed';
        return {
          id: ids.responseId,
          object: 'response',
          created_at: 1_700_000_000,
          status,
          incomplete_details:
            status === 'incomplete' ? { reason: options.incompleteReason ?? 'max_output_tokens' } : null,
          error: null,
          model: request.body.model,
          output,
          usage: usage(100 + request.index, 10 + output.length),
        };
      },
    };
  },
  /** The same step, answered only once `hold` settles. */
  held(step: ScriptStep, hold: Promise<unknown>): ScriptStep {
    if (step.kind !== 'response') throw new Error('only responses can be held');
    return { ...step, hold };
  },
  /** The same step, but the create request itself is answered only once `accept` settles. */
  slowToAccept(step: ScriptStep, accept: Promise<unknown>): ScriptStep {
    if (step.kind !== 'response') throw new Error('only responses can be slow to accept');
    return { ...step, accept };
  },
  /** The same step, streamed as `plan` says when the request asks for a stream. */
  streamed(step: ScriptStep, plan: StreamPlan): ScriptStep {
    if (step.kind !== 'response') throw new Error('only responses can be streamed');
    return { ...step, stream: plan };
  },
  /** A final answer. */
  text(text: string): ScriptStep {
    return reply.items([{ text }]);
  },
  /** A response holding only these calls. */
  calls(...calls: ScriptedCall[]): ScriptStep {
    return reply.items(calls.map((call) => ({ call })));
  },
  /** An HTTP error with an OpenAI-style error body. */
  error(
    status: number,
    message: string,
    options: { headers?: Record<string, string>; code?: string } = {},
  ): ScriptStep {
    return {
      kind: 'error',
      status,
      ...(options.headers ? { headers: options.headers } : {}),
      body: { error: { message, type: 'error', code: options.code ?? null, param: null } },
    };
  },
  /** Never answers; the request ends only when the client aborts it. */
  hang(): ScriptStep {
    return { kind: 'hang' };
  },
};
