import { z } from 'zod';
import type { ModelRequest } from '../../src/contract/model-request.js';
import { toResponsesTools } from '../../src/model/responses-tools.js';
import { defineTool } from '../../src/tools/define-tool.js';

/** One read-only `echo` tool, as the Responses API sees it. */
export const echoTools = toResponsesTools([
  defineTool({
    name: 'echo',
    description: 'Echo the text back.',
    schema: z.object({ text: z.string() }),
    readOnly: true,
    execute: ({ text }) => text,
  }),
]);

/** A first turn that offers {@link echoTools}. */
export const echoRequest: ModelRequest = {
  model: 'gpt-test',
  instructions: 'Be careful.',
  turn: 1,
  input: { kind: 'task', task: 'Echo hello.' },
  tools: ['echo'],
  parallelToolCalls: false,
  maxOutputTokens: 512,
};
