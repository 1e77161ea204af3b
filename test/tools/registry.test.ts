import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ToolDefinitionError } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';

const alpha = defineTool({
  name: 'alpha',
  description: 'First tool.',
  schema: z.object({ a: z.string(), b: z.number().optional() }),
  readOnly: true,
  timeoutSeconds: 5,
  execute: () => 'alpha',
});
const beta = defineTool({
  name: 'beta',
  description: 'Second tool.',
  schema: z.object({}),
  execute: () => 'beta',
});
const gamma = defineTool({
  name: 'gamma',
  description: 'Third tool.',
  schema: z.object({ flag: z.boolean() }),
  timeoutSeconds: 0.2,
  execute: () => 'gamma',
});

describe('ToolRegistry', () => {
  it('refuses two tools with the same name', () => {
    const twin = defineTool({
      name: 'alpha',
      description: 'Another alpha.',
      schema: z.object({}),
      execute: () => '',
    });
    expect(() => new ToolRegistry([alpha, beta, twin])).toThrow(ToolDefinitionError);
    expect(() => new ToolRegistry([alpha, twin])).toThrow('Tool alpha is registered twice');
  });

  it('finds tools by name and lists names in registration order', () => {
    const registry = new ToolRegistry([gamma, alpha, beta]);
    expect(registry.get('alpha')).toBe(alpha);
    expect(registry.get('delta')).toBeUndefined();
    expect(registry.names()).toEqual(['gamma', 'alpha', 'beta']);
  });

  it('describes each tool with its routing metadata, approval rule and argument schema', () => {
    const registry = new ToolRegistry([alpha, beta]);
    expect(registry.describe()).toEqual([
      {
        name: 'alpha',
        description: 'First tool.',
        readOnly: true,
        timeoutSeconds: 5,
        approval: 'never',
        parameters: alpha.parameters,
      },
      {
        name: 'beta',
        description: 'Second tool.',
        readOnly: false,
        timeoutSeconds: 60,
        approval: 'never',
        parameters: beta.parameters,
      },
    ]);
  });

  it('works with no tools at all', () => {
    const registry = new ToolRegistry([]);
    expect(registry.names()).toEqual([]);
    expect(registry.describe()).toEqual([]);
  });
});
