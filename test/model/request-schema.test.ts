import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createOpenAIClient } from '../../src/model/client.js';
import {
  createResponseErrors,
  createResponseSchemaFile,
  openResponsesSchemaFile,
} from '../support/responses-schema.js';
import { reply, ScriptedModel, takeSchemaViolations } from '../support/scripted-model.js';

const assistantMessage = {
  type: 'message',
  id: 'msg_0',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text: 'Done.', annotations: [], logprobs: [] }],
};
const withoutStatus: Record<string, unknown> = { ...assistantMessage };
delete withoutStatus.status;

describe('Open Responses’ CreateResponseBody schema, which every request is checked against too', () => {
  it('says where the vendored schema came from', () => {
    const schema = JSON.parse(readFileSync(openResponsesSchemaFile, 'utf8')) as Record<string, unknown>;
    expect(schema['x-source']).toMatchObject({
      repository: 'https://github.com/openresponses/openresponses',
      file: 'public/openapi/openapi.json',
      commit: expect.stringMatching(/^[0-9a-f]{40}$/) as unknown,
    });
    expect(schema.$ref).toBe('#/$defs/CreateResponseBody');
  });

  it('refuses what it forbids, saying it was Open Responses', () => {
    expect(createResponseErrors({ model: 'gpt-test', input: 'hi', store: 'yes' })).toContainEqual(
      expect.stringMatching(
        /^not a valid CreateResponseBody under openresponses [0-9a-f]{12}: \/store must be boolean/u,
      ),
    );
    expect(createResponseErrors({ model: 'gpt-test', input: [assistantMessage], store: false })).toEqual([]);
  });
});

describe('OpenAI’s CreateResponse schema, as the tests check requests against it', () => {
  it('says where the vendored schema came from', () => {
    const schema = JSON.parse(readFileSync(createResponseSchemaFile, 'utf8')) as Record<string, unknown>;
    expect(schema['x-source']).toMatchObject({
      repository: 'https://github.com/openai/openai-openapi',
      commit: expect.stringMatching(/^[0-9a-f]{40}$/) as unknown,
      openapi: expect.stringMatching(/^3\.1\./) as unknown,
    });
    expect(schema.$ref).toBe('#/$defs/CreateResponse');
  });

  it('accepts a request with the model’s own message sent back whole', () => {
    expect(createResponseErrors({ model: 'gpt-test', input: [assistantMessage], store: false })).toEqual([]);
  });

  it('refuses an assistant message sent back without its status, and says which item and why', () => {
    const problems = createResponseErrors({ model: 'gpt-test', input: [withoutStatus] });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/input\[0\] \(type "message", role "assistant"\) matches no InputItem/);
    expect(problems[0]).toContain("as OutputMessage: (root) must have required property 'status'");
  });

  it('refuses what the published schema forbids elsewhere in the body', () => {
    expect(createResponseErrors({ model: 'gpt-test', input: 42 })).not.toEqual([]);
    expect(createResponseErrors({ model: 'gpt-test', input: 'hi', max_output_tokens: 8 })).not.toEqual([]);
    expect(createResponseErrors({ model: 'gpt-test', input: 'hi', store: 'yes' })).not.toEqual([]);
    expect(
      createResponseErrors({
        model: 'gpt-test',
        input: [{ type: 'function_call_output', call_id: 'c', output: 42 }],
      }),
    ).not.toEqual([]);
  });

  it('makes the scripted model answer an invalid request 400 and fail the test that sent it', async () => {
    const model = await ScriptedModel.start([reply.text('never sent')]);
    try {
      const client = createOpenAIClient({ apiKey: 'sk-test', baseURL: model.url });
      await expect(
        client.responses.create({ model: 'gpt-test', input: [withoutStatus] as never }),
      ).rejects.toMatchObject({ status: 400 });
      expect(() => model.assertDone()).toThrow(/request 0 not a valid CreateResponse.*'status'/);
      // The same violation would fail this test in test/setup.ts; taken here, since it is expected.
      expect(takeSchemaViolations()).toEqual([expect.stringContaining("'status'")]);
    } finally {
      await model.close();
    }
  });
});
