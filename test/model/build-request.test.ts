import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/contract/model-request.js';
import type { Observation } from '../../src/contract/observation.js';
import { buildResponsesRequest } from '../../src/model/build-request.js';
import { outputJsonText } from '../../src/contract/text.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { toResponsesTools } from '../../src/model/responses-tools.js';
import { createResponseErrors } from '../support/responses-schema.js';

const tools = toResponsesTools([
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

  it('sends every kind of input as a request valid under OpenAI’s published CreateResponse schema', () => {
    const observation: Observation = { callId: 'call_1', ok: true, output: 'x' };
    const requests: ModelRequest[] = [
      firstTurn({ input: { kind: 'task', task: 'go', messages: ['also this'] } }),
      continuation([observation], { maxOutputTokens: 16, reasoningEffort: 'high' }),
      firstTurn({ input: { kind: 'messages', previousResponseId: 'resp_1', messages: ['next'] } }),
      firstTurn({ input: { kind: 'items', items: statelessItems }, tools: [] }),
    ];
    for (const request of requests)
      expect(createResponseErrors(buildResponsesRequest(request, tools))).toEqual([]);
  });

  it('completes the model’s own messages that a stateless run recorded without status', () => {
    // As runs recorded them before: the status (and here the text parts' logprobs) left out.
    const recorded = {
      type: 'message',
      id: 'msg_0',
      role: 'assistant',
      content: [
        { type: 'output_text', text: 'Checking first.', annotations: [] },
        { type: 'refusal', refusal: 'Not that.' },
      ],
    };
    const input = { kind: 'items' as const, items: [statelessItems[0]!, recorded] };
    expect(createResponseErrors({ model: 'gpt-test', input: input.items })).not.toEqual([]);

    const body = buildResponsesRequest(firstTurn({ input }), tools);

    expect(createResponseErrors(body)).toEqual([]);
    expect(body.input).toEqual([
      statelessItems[0],
      {
        ...recorded,
        status: 'completed',
        content: [
          { type: 'output_text', text: 'Checking first.', annotations: [], logprobs: [] },
          { type: 'refusal', refusal: 'Not that.' },
        ],
      },
    ]);
  });

  it('keeps the status the model gave its message', () => {
    const truncated = {
      type: 'message',
      id: 'msg_0',
      role: 'assistant',
      status: 'incomplete',
      content: [{ type: 'output_text', text: 'Cut', annotations: [], logprobs: [] }],
    };
    const body = buildResponsesRequest(firstTurn({ input: { kind: 'items', items: [truncated] } }), tools);
    expect(body.input).toEqual([truncated]);
  });
});

/** A stateless conversation as a run keeps it: the task, then a turn's output items and results. */
const statelessItems = [
  { type: 'message', role: 'user', content: 'go' },
  { type: 'reasoning', id: 'rs_0', summary: [], encrypted_content: 'opaque' },
  {
    type: 'message',
    id: 'msg_1',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'Looking.', annotations: [], logprobs: [] }],
  },
  {
    type: 'function_call',
    id: 'fc_2',
    call_id: 'call_1',
    name: 'echo',
    arguments: '{}',
    status: 'completed',
  },
  { type: 'function_call_output', call_id: 'call_1', output: 'echo' },
  { type: 'message', role: 'developer', content: '[1 earlier turn(s) were dropped]' },
];

describe('an output schema as text.format', () => {
  const request = (output: ModelRequest['output']): ModelRequest => ({
    model: 'gpt-5-mini',
    instructions: 'Triage.',
    turn: 1,
    input: { kind: 'task', task: 'Triage it.' },
    tools: [],
    parallelToolCalls: false,
    output,
  });

  it('is strict when every object is closed with all its properties required, as OpenAI requires', () => {
    const strict = z.toJSONSchema(
      z.object({ a: z.string(), b: z.array(z.object({ c: z.number().nullable() })) }),
      {
        io: 'output',
      },
    );
    const body = buildResponsesRequest(request({ name: 'out', schema: strict }), []);
    expect(body.text).toEqual({ format: { type: 'json_schema', name: 'out', schema: strict, strict: true } });
    expect(createResponseErrors(body)).toEqual([]);
  });

  it.each([
    ['an optional property', z.toJSONSchema(z.object({ a: z.string().optional() }), { io: 'output' })],
    ['an open object', z.toJSONSchema(z.looseObject({ a: z.string() }), { io: 'output' })],
    [
      'a nested optional property',
      z.toJSONSchema(z.object({ a: z.object({ b: z.string().optional() }) }), { io: 'output' }),
    ],
    ['an unknown value', z.toJSONSchema(z.object({ a: z.unknown() }), { io: 'output' })],
    ['a default', z.toJSONSchema(z.object({ a: z.number().default(1) }), { io: 'output' })],
    [
      'an open object under a property named default',
      z.toJSONSchema(z.object({ default: z.looseObject({ a: z.string() }) }), { io: 'output' }),
    ],
    [
      'a keyword strict mode refuses',
      { type: 'object', properties: {}, additionalProperties: false, allOf: [{ required: [] }] },
    ],
  ])('is not strict with %s', (_, schema) => {
    expect(buildResponsesRequest(request({ name: 'out', schema }), []).text?.format).toMatchObject({
      strict: false,
    });
  });

  it("keeps the caller's choice of strictness", () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(
      buildResponsesRequest(request({ name: 'out', schema, strict: true }), []).text?.format,
    ).toMatchObject({
      strict: true,
    });
  });
});

describe('outputJsonText', () => {
  it.each([
    ['{"a":1}', '{"a":1}'],
    ['```json\n{"a":1}\n```', '{"a":1}'],
    ['  ```\n{"a":1}\n```  ', '{"a":1}'],
    ['Here: ```json\n{"a":1}\n```', 'Here: ```json\n{"a":1}\n```'],
  ])('reads %j as %j', (text, json) => {
    expect(outputJsonText(text)).toBe(json);
  });
});
