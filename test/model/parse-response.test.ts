import type { Response } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import { emptyUsage } from '../../src/contract/usage.js';
import { ModelError } from '../../src/model/model-error.js';
import { parseResponse } from '../../src/model/parse-response.js';

/** A Responses API response with only the fields Keel reads; `overrides` replace them. */
function response(overrides: Record<string, unknown> = {}): Response {
  return {
    id: 'resp_123',
    object: 'response',
    created_at: 1_700_000_000,
    model: 'gpt-test-2030-01-01',
    status: 'completed',
    error: null,
    incomplete_details: null,
    output: [],
    usage: {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 15,
    },
    ...overrides,
  } as unknown as Response;
}

const reasoning = (id: string) => ({ type: 'reasoning', id, summary: [] });

const message = (id: string, ...texts: string[]) => ({
  type: 'message',
  id,
  role: 'assistant',
  status: 'completed',
  content: texts.map((text) => ({ type: 'output_text', text, annotations: [] })),
});

const functionCall = (callId: string, name: string, argumentsJson: string) => ({
  type: 'function_call',
  id: `fc_${callId}`,
  call_id: callId,
  name,
  arguments: argumentsJson,
  status: 'completed',
});

/** The ModelError `run` throws; fails the test when it throws nothing or something else. */
function thrownModelError(run: () => unknown): ModelError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ModelError);
    return error as ModelError;
  }
  throw new Error('expected a ModelError, but nothing was thrown');
}

describe('parseResponse', () => {
  it('keeps every function call in emitted order among reasoning and message items', () => {
    const turn = parseResponse(
      response({
        output: [
          reasoning('rs_1'),
          functionCall('call_b', 'read_file', '{"path":"b.txt"}'),
          message('msg_1', 'Reading both files.'),
          reasoning('rs_2'),
          functionCall('call_a', 'list_directory', '{"path":"."}'),
        ],
      }),
    );

    expect(turn.toolCalls).toEqual([
      { callId: 'call_b', name: 'read_file', argumentsJson: '{"path":"b.txt"}' },
      { callId: 'call_a', name: 'list_directory', argumentsJson: '{"path":"."}' },
    ]);
    expect(turn.text).toBe('Reading both files.');
  });

  it('keeps the output items of a stateless turn as the API sent them, status included', () => {
    const output = [reasoning('rs_1'), message('msg_1', 'Reading.'), functionCall('call_a', 'echo', '{}')];
    const turn = parseResponse(response({ output }), { keepItems: true });

    // An assistant message is not valid input without its status (OpenAI's OutputMessage schema).
    expect(turn.outputItems).toEqual(output);
    expect(turn.outputItems?.[1]).toHaveProperty('status', 'completed');
    expect(parseResponse(response({ output })).outputItems).toBeUndefined();
  });

  it('joins the text of every message and part in order, with newlines', () => {
    const turn = parseResponse(
      response({
        output: [
          message('msg_1', 'First part.', 'Second part.'),
          functionCall('call_1', 'echo', '{}'),
          message('msg_2', 'Third part.'),
        ],
      }),
    );

    expect(turn.text).toBe('First part.\nSecond part.\nThird part.');
  });

  it('keeps the arguments string exactly as the model sent it, even when it is not JSON', () => {
    const turn = parseResponse(
      response({ output: [functionCall('call_1', 'echo', '{"text": "unterminated')] }),
    );

    expect(turn.toolCalls).toEqual([
      { callId: 'call_1', name: 'echo', argumentsJson: '{"text": "unterminated' },
    ]);
  });

  it('turns a refusal part into text', () => {
    const turn = parseResponse(
      response({
        output: [
          {
            type: 'message',
            id: 'msg_1',
            role: 'assistant',
            status: 'completed',
            content: [
              { type: 'output_text', text: 'Partly:', annotations: [] },
              { type: 'refusal', refusal: 'I cannot help with that.' },
            ],
          },
        ],
      }),
    );

    expect(turn.text).toBe('Partly:\nI cannot help with that.');
    expect(turn.toolCalls).toEqual([]);
  });

  it('does not depend on the first output item being a message or a call', () => {
    const turn = parseResponse(
      response({
        output: [
          reasoning('rs_1'),
          { type: 'web_search_call', id: 'ws_1', status: 'completed' },
          message('msg_1', 'Found it.'),
        ],
      }),
    );

    expect(turn.text).toBe('Found it.');
    expect(turn.toolCalls).toEqual([]);
  });

  it('reads an empty output of a cut-off turn as no text and no calls', () => {
    const turn = parseResponse(
      response({ output: [], status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }),
    );

    expect(turn.text).toBe('');
    expect(turn.toolCalls).toEqual([]);
  });

  it('copies the response id and model of a completed response and gives no incomplete reason', () => {
    const turn = parseResponse(response({ output: [message('msg_1', 'Done.')] }));

    expect(turn.responseId).toBe('resp_123');
    expect(turn.model).toBe('gpt-test-2030-01-01');
    expect(turn.status).toBe('completed');
    expect(turn.incompleteReason).toBeNull();
  });

  it('reads a response without a status as completed', () => {
    const turn = parseResponse(response({ status: undefined, output: [message('msg_1', 'Done.')] }));

    expect(turn.status).toBe('completed');
    expect(turn.text).toBe('Done.');
  });

  it('reports an incomplete response with its reason and partial text', () => {
    const turn = parseResponse(
      response({
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        output: [message('msg_1', 'The answer is')],
      }),
    );

    expect(turn.status).toBe('incomplete');
    expect(turn.incompleteReason).toBe('max_output_tokens');
    expect(turn.text).toBe('The answer is');
  });

  it('gives an incomplete response without details the reason unknown', () => {
    const turn = parseResponse(response({ status: 'incomplete', incomplete_details: null }));

    expect(turn.status).toBe('incomplete');
    expect(turn.incompleteReason).toBe('unknown');
  });

  it.each(['server_error', 'rate_limit_exceeded'])(
    'throws a retryable ModelError.ServerError for a failed response with code %s',
    (code) => {
      const failure = thrownModelError(() =>
        parseResponse(response({ status: 'failed', error: { code, message: 'Something broke.' } })),
      );

      expect(failure.type).toBe('ModelError.ServerError');
      expect(failure.retryable).toBe(true);
      expect(failure.message).toBe(`The model response resp_123 failed (${code}): Something broke.`);
    },
  );

  it('throws a non-retryable ModelError.ResponseFailed for a failed response with any other code', () => {
    const failure = thrownModelError(() =>
      parseResponse(
        response({ status: 'failed', error: { code: 'invalid_prompt', message: 'The prompt was refused.' } }),
      ),
    );

    expect(failure.type).toBe('ModelError.ResponseFailed');
    expect(failure.retryable).toBe(false);
    expect(failure.message).toBe(
      'The model response resp_123 failed (invalid_prompt): The prompt was refused.',
    );
  });

  it('throws a non-retryable ModelError for a failed response without error details', () => {
    const failure = thrownModelError(() => parseResponse(response({ status: 'failed', error: null })));

    expect(failure.type).toBe('ModelError.ResponseFailed');
    expect(failure.retryable).toBe(false);
    expect(failure.message).toBe('The model response resp_123 failed (unknown): no message');
  });

  it.each(['in_progress', 'queued', 'cancelled'])(
    'throws a retryable ModelError for the unexpected status %s',
    (status) => {
      const failure = thrownModelError(() =>
        parseResponse(response({ status, output: [functionCall('call_1', 'echo', '{}')] })),
      );

      expect(failure.type).toBe('ModelError.UnexpectedStatus');
      expect(failure.retryable).toBe(true);
      expect(failure.message).toContain(`status ${status}`);
    },
  );

  it('maps usage, cached input and reasoning tokens included', () => {
    const turn = parseResponse(
      response({
        output: [message('msg_1', 'Done.')],
        usage: {
          input_tokens: 1200,
          input_tokens_details: { cached_tokens: 1024 },
          output_tokens: 300,
          output_tokens_details: { reasoning_tokens: 256 },
          total_tokens: 1500,
        },
      }),
    );

    expect(turn.usage).toEqual({
      inputTokens: 1200,
      cachedInputTokens: 1024,
      outputTokens: 300,
      reasoningTokens: 256,
      totalTokens: 1500,
    });
  });

  it('counts zero tokens when the response has no usage', () => {
    const turn = parseResponse(response({ usage: undefined, output: [message('msg_1', 'Hello.')] }));

    expect(turn.usage).toEqual(emptyUsage);
  });

  it('refuses a completed turn that says nothing (no text, no call), as retryable, whatever its tokens', () => {
    // As LiteLLM answered when its upstream stream failed: completed, nothing in it, zero usage.
    const empty = thrownModelError(() =>
      parseResponse(
        response({
          output: [message('msg_1', '')],
          usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
        }),
      ),
    );
    expect(empty).toMatchObject({ type: 'ModelError.EmptyResponse', retryable: true });
    expect(empty.message).toBe(
      'The model response resp_123 came back completed with no text and no tool call (1 output item(s), 0 output token(s)): the model server answered nothing, which is no answer',
    );
    expect(
      thrownModelError(() => parseResponse(response({ output: [], usage: undefined }))).message,
    ).toContain('(0 output item(s), no usage)');
    // As llama.cpp's server answers when the model ends at once: no output, one output token.
    const ended = response({ output: [], usage: { input_tokens: 37, output_tokens: 1, total_tokens: 38 } });
    expect(thrownModelError(() => parseResponse(ended)).message).toContain(
      '(0 output item(s), 1 output token(s))',
    );
    // A model that only reasoned answered nothing either.
    expect(thrownModelError(() => parseResponse(response({ output: [reasoning('rs_1')] }))).type).toBe(
      'ModelError.EmptyResponse',
    );
  });

  it('takes a cut-off turn with nothing in it: its cap ended it, and the run says so', () => {
    const cut = parseResponse(
      response({
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        usage: undefined,
      }),
    );
    expect(cut.status).toBe('incomplete');
  });

  it('counts zero cached and reasoning tokens when usage has no details', () => {
    const turn = parseResponse(
      response({
        output: [message('msg_1', 'Done.')],
        usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 },
      }),
    );

    expect(turn.usage).toEqual({
      inputTokens: 7,
      cachedInputTokens: 0,
      outputTokens: 3,
      reasoningTokens: 0,
      totalTokens: 10,
    });
  });
});
