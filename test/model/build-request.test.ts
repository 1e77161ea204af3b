import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/contract/model-request.js';
import type { Observation } from '../../src/contract/observation.js';
import { buildResponsesRequest } from '../../src/model/build-request.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';

const registry = new ToolRegistry([
  defineTool({
    name: 'echo',
    description: 'Echo the text back.',
    schema: z.object({ text: z.string() }),
    readOnly: true,
    execute: ({ text }) => text,
  }),
  defineTool({
    name: 'add',
    description: 'Add two numbers.',
    schema: z.object({ a: z.number(), b: z.number(), note: z.string().optional() }),
    execute: ({ a, b }) => a + b,
  }),
]);
const tools = registry.toResponsesTools();

function firstTurn(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'gpt-test',
    instructions: 'Be careful.',
    turn: 1,
    input: { kind: 'task', task: 'List the files in the workspace.' },
    tools: ['echo', 'add'],
    parallelToolCalls: false,
    ...overrides,
  };
}

function continuation(observations: Observation[], overrides: Partial<ModelRequest> = {}): ModelRequest {
  return firstTurn({
    turn: 2,
    input: { kind: 'observations', previousResponseId: 'resp_previous', observations },
    ...overrides,
  });
}

describe('buildResponsesRequest', () => {
  it('sends the task as one user message on the first turn, with the instructions and no previous response', () => {
    const body = buildResponsesRequest(firstTurn(), tools);

    expect(body.model).toBe('gpt-test');
    expect(body.instructions).toBe('Be careful.');
    expect(body.input).toEqual([
      { type: 'message', role: 'user', content: 'List the files in the workspace.' },
    ]);
    expect(body).not.toHaveProperty('previous_response_id');
    expect(body.store).toBe(true);
  });

  it('sends only Responses API fields, not the loop bookkeeping of the request', () => {
    const body = buildResponsesRequest(firstTurn(), tools);

    expect(Object.keys(body).sort()).toEqual(
      ['input', 'instructions', 'model', 'parallel_tool_calls', 'store', 'tool_choice', 'tools'].sort(),
    );
  });

  it('offers the tools as strict function tools with automatic tool choice', () => {
    const body = buildResponsesRequest(firstTurn(), tools);

    expect(body.tools).toEqual(tools);
    expect(body.tools?.map((tool) => tool.type)).toEqual(['function', 'function']);
    expect(body.tools?.map((tool) => (tool as { strict?: boolean }).strict)).toEqual([true, true]);
    expect(body.tools?.map((tool) => (tool as { name?: string }).name)).toEqual(['echo', 'add']);
    expect(body.tool_choice).toBe('auto');
  });

  it.each([true, false])('passes parallelToolCalls %s through as parallel_tool_calls', (parallel) => {
    const body = buildResponsesRequest(firstTurn({ parallelToolCalls: parallel }), tools);

    expect(body.parallel_tool_calls).toBe(parallel);
  });

  it('chains a later turn with previous_response_id and re-sends the instructions', () => {
    const body = buildResponsesRequest(
      continuation([{ callId: 'call_1', ok: true, output: 'a.txt' }]),
      tools,
    );

    expect(body.previous_response_id).toBe('resp_previous');
    expect(body.instructions).toBe('Be careful.');
  });

  it('sends one function_call_output per observation, in the order given', () => {
    const body = buildResponsesRequest(
      continuation([
        { callId: 'call_c', ok: true, output: 'third file' },
        { callId: 'call_a', ok: true, output: 'first file' },
        { callId: 'call_b', ok: true, output: '{"looks":"like json"}' },
      ]),
      tools,
    );

    expect(body.input).toEqual([
      { type: 'function_call_output', call_id: 'call_c', output: 'third file' },
      { type: 'function_call_output', call_id: 'call_a', output: 'first file' },
      { type: 'function_call_output', call_id: 'call_b', output: '{"looks":"like json"}' },
    ]);
  });

  it('serialises an error observation as JSON with its error, message and preview', () => {
    const body = buildResponsesRequest(
      continuation([
        { callId: 'call_1', ok: false, error: 'unknown_tool', message: 'No tool named delete_all.' },
        {
          callId: 'call_2',
          ok: false,
          error: 'output_too_large',
          message: 'The output had 50000 characters; the limit is 12000.',
          preview: 'line 1\nline 2',
        },
      ]),
      tools,
    );

    const outputs = (body.input as Array<{ call_id: string; output: string }>).map((item) => ({
      callId: item.call_id,
      output: JSON.parse(item.output) as unknown,
    }));
    expect(outputs).toEqual([
      { callId: 'call_1', output: { error: 'unknown_tool', message: 'No tool named delete_all.' } },
      {
        callId: 'call_2',
        output: {
          error: 'output_too_large',
          message: 'The output had 50000 characters; the limit is 12000.',
          preview: 'line 1\nline 2',
        },
      },
    ]);
  });

  it('leaves out tools, tool_choice and parallel_tool_calls when no tools are offered', () => {
    const body = buildResponsesRequest(firstTurn({ tools: [], parallelToolCalls: true }), []);

    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
    expect(body).not.toHaveProperty('parallel_tool_calls');
  });

  it('leaves out max_output_tokens and reasoning when the request does not set them', () => {
    const body = buildResponsesRequest(firstTurn(), tools);

    expect(body).not.toHaveProperty('max_output_tokens');
    expect(body).not.toHaveProperty('reasoning');
  });

  it('passes max_output_tokens and reasoning effort through when set', () => {
    const body = buildResponsesRequest(firstTurn({ maxOutputTokens: 2048, reasoningEffort: 'low' }), tools);

    expect(body.max_output_tokens).toBe(2048);
    expect(body.reasoning).toEqual({ effort: 'low' });
  });
});
