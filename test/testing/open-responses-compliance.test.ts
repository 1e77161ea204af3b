import { afterEach, describe, expect, it } from 'vitest';
import { openResponsesAnswerErrors } from '../support/responses-schema.js';
// The package's own server, without the tests' check of each request against OpenAI's schema: that
// schema's `oneOf` reads an image message as two kinds of input at once and refuses it, and what
// is checked here is the answer.
import { reply, ScriptedModel } from '../../src/testing/index.js';
import type { ScriptStep } from '../../src/testing/index.js';

/**
 * The scripted Responses server of `keel/testing` against the Open Responses specification: the
 * requests of its compliance suite (basic, streaming, system prompt, tool calling, image input,
 * multi-turn), each answer checked against the specification's own OpenAPI document
 * (`ResponseResource`, and every streamed event as a `StreamingEvent`). A server Keel is tested
 * against answers as the servers its users run must.
 */
let model: ScriptedModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function post(step: ScriptStep, body: Record<string, unknown>): Promise<Response> {
  model = await ScriptedModel.start([step]);
  return fetch(`${model.url}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify({ model: 'gpt-test', ...body }),
  });
}

/** The events of a server-sent event stream, parsed. */
function events(text: string): unknown[] {
  return text
    .split('\n\n')
    .flatMap((message) => message.split('\n').filter((line) => line.startsWith('data: ')))
    .map((line) => line.slice('data: '.length))
    .filter((data) => data !== '[DONE]')
    .map((data) => JSON.parse(data) as unknown);
}

const cases: Array<[string, ScriptStep, Record<string, unknown>]> = [
  ['basic-response', reply.text('Hello.'), { input: 'Say hello.' }],
  [
    'system-prompt',
    reply.text('Arr.'),
    {
      input: [
        { type: 'message', role: 'system', content: 'You are a pirate.' },
        { type: 'message', role: 'user', content: 'Say hello.' },
      ],
    },
  ],
  [
    'tool-calling',
    reply.calls({ name: 'get_weather', arguments: { location: 'Paris' } }),
    {
      input: 'What is the weather in Paris?',
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'The weather at a place',
          parameters: {
            type: 'object',
            properties: { location: { type: 'string' } },
            required: ['location'],
            additionalProperties: false,
          },
          strict: true,
        },
      ],
    },
  ],
  [
    'image-input',
    reply.text('A cat.'),
    {
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is in this image?' },
            { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'auto' },
          ],
        },
      ],
    },
  ],
  [
    'multi-turn',
    reply.text('You are Ada.'),
    {
      input: [
        { type: 'message', role: 'user', content: 'My name is Ada.' },
        { type: 'message', role: 'assistant', content: 'Hello, Ada.' },
        { type: 'message', role: 'user', content: 'What is my name?' },
      ],
    },
  ],
];

describe('the scripted Responses server, by the Open Responses specification', () => {
  it.each(cases)('answers %s with a valid ResponseResource', async (_name, step, body) => {
    const answer = await post(step, body);
    expect(answer.status).toBe(200);
    expect(openResponsesAnswerErrors('ResponseResource', await answer.json())).toEqual([]);
  });

  it.each(cases)(
    'streams %s as valid events, the last carrying a valid ResponseResource',
    async (_name, step, body) => {
      const answer = await post(reply.streamed(step, { deltaMs: 0 }), { ...body, stream: true });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/u);
      const streamed = events(await answer.text());
      expect(streamed.length).toBeGreaterThan(2);
      expect(streamed.flatMap((event) => openResponsesAnswerErrors('StreamingEvent', event))).toEqual([]);
      const last = streamed.at(-1) as { type: string; response: unknown };
      expect(last.type).toBe('response.completed');
      expect(openResponsesAnswerErrors('ResponseResource', last.response)).toEqual([]);
    },
  );
});
