import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toResponsesTools } from '../../src/model/responses-tools.js';
import type { ToolDescription } from '../../src/model/responses-tools.js';
import { defineTool } from '../../src/tools/define-tool.js';

const alpha = defineTool({
  name: 'alpha',
  description: 'First tool.',
  schema: z.object({ a: z.string(), b: z.number().optional() }),
  readOnly: true,
  execute: () => 'alpha',
});
const gamma = defineTool({
  name: 'gamma',
  description: 'Third tool.',
  schema: z.object({ flag: z.boolean() }),
  execute: () => 'gamma',
});

describe('toResponsesTools', () => {
  it('offers each defined tool as a strict function tool, in the order given', () => {
    expect(toResponsesTools([gamma, alpha])).toEqual([
      {
        type: 'function',
        name: 'gamma',
        description: 'Third tool.',
        parameters: {
          type: 'object',
          properties: { flag: { type: 'boolean' } },
          required: ['flag'],
          additionalProperties: false,
        },
        strict: true,
      },
      {
        type: 'function',
        name: 'alpha',
        description: 'First tool.',
        parameters: alpha.parameters,
        strict: true,
      },
    ]);
  });

  it('sends a foreign schema that strict mode cannot express as non-strict', () => {
    const foreign: ToolDescription = {
      name: 'lookup',
      description: 'A tool from an MCP server.',
      parameters: { type: 'object', properties: { q: { type: 'string' } } },
      strict: false,
    };
    expect(toResponsesTools([foreign])).toEqual([{ type: 'function', ...foreign }]);
  });

  it('sends only what the Responses API takes, not the rest of a tool', () => {
    const [sent] = toResponsesTools([alpha]);
    expect(Object.keys(sent!).sort()).toEqual(['description', 'name', 'parameters', 'strict', 'type']);
  });

  it('offers nothing for no tools', () => {
    expect(toResponsesTools([])).toEqual([]);
  });
});
