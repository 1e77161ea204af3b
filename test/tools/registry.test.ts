import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ToolDefinitionError } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { ToolSource } from '../../src/tools/registry.js';
import type { Tool } from '../../src/tools/define-tool.js';

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

describe('ToolRegistry with a source whose tools change (an MCP server)', () => {
  /** A source that lists `listings` one after the other, then fails to list. */
  function changingSource(...listings: (readonly Tool[])[]): ToolSource {
    let current = listings.shift() ?? [];
    return {
      current: () => current,
      refresh() {
        const next = listings.shift();
        if (next === undefined) return Promise.resolve(); // a failed listing keeps the last one
        current = next;
        return Promise.resolve();
      },
    };
  }

  it('offers the source’s tools after its own, and what a refresh lists from then on', async () => {
    const registry = new ToolRegistry([alpha], [changingSource([beta], [beta, gamma])]);
    expect(registry.names()).toEqual(['alpha', 'beta']);
    expect(registry.get('gamma')).toBeUndefined();
    await registry.refresh();
    expect(registry.describe().map((tool) => tool.name)).toEqual(['alpha', 'beta', 'gamma']);
    expect(registry.get('gamma')).toBe(gamma);
    await registry.refresh();
    expect(registry.names()).toEqual(['alpha', 'beta', 'gamma']);
  });

  it('refuses a source tool named like one of its own at start; later its own tool wins', async () => {
    expect(() => new ToolRegistry([alpha], [changingSource([alpha])])).toThrow(/alpha is registered twice/);
    const impostor = defineTool({
      ...{ name: 'alpha', description: 'Not alpha.' },
      schema: z.object({}),
      execute: () => 'x',
    });
    const registry = new ToolRegistry([alpha], [changingSource([beta], [impostor, beta])]);
    await registry.refresh();
    expect(registry.get('alpha')).toBe(alpha);
    expect(registry.names()).toEqual(['alpha', 'beta']);
  });
});
