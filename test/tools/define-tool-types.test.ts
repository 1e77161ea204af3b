import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { fileTools } from '../../src/tools/builtin/file-tools.js';
import { createReadFileTool } from '../../src/tools/builtin/read-file.js';
import { defineTool } from '../../src/tools/define-tool.js';
import type { ArgumentsResult, Tool, ToolContext, ToolOutput } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';

// These tests are checked by `npm run typecheck` (tsconfig.check.json includes test/): a wrong type
// fails the typecheck, and each `@ts-expect-error` fails it too if the line it covers compiles.

const lookup = defineTool({
  name: 'lookup_order',
  description: 'Look an order up by id.',
  schema: z.object({
    orderId: z.string(),
    include: z.array(z.enum(['items', 'payments'])).default([]),
    limit: z.number().int().optional(),
  }),
  execute: ({ orderId, include }) => ({ orderId, status: 'shipped' as const, included: include.length }),
});

const count = defineTool({
  name: 'count_words',
  description: 'Count the words of a text.',
  schema: z.object({ text: z.string().transform((text) => text.split(/\s+/)) }),
  execute: ({ text }) => Promise.resolve(text.length),
});

describe('defineTool types', () => {
  it('infers the input from the zod schema: its parsed output, defaults applied', () => {
    type Input = { orderId: string; include: Array<'items' | 'payments'>; limit?: number | undefined };
    expectTypeOf(lookup).toEqualTypeOf<
      Tool<Input, { orderId: string; status: 'shipped'; included: number }>
    >();
    expectTypeOf(lookup.execute).parameter(0).toEqualTypeOf<Input>();
    expectTypeOf(lookup.parseArguments).returns.toEqualTypeOf<ArgumentsResult<Input>>();
    expectTypeOf(lookup.needsApproval).parameter(0).toEqualTypeOf<Input>();
    // A transform's result is what execute gets.
    expectTypeOf(count.execute).parameter(0).toEqualTypeOf<{ text: string[] }>();
  });

  it('infers the output from what execute returns, awaited', () => {
    expectTypeOf(lookup.execute).returns.toEqualTypeOf<
      | { orderId: string; status: 'shipped'; included: number }
      | Promise<{ orderId: string; status: 'shipped'; included: number }>
    >();
    expectTypeOf(count).toEqualTypeOf<Tool<{ text: string[] }, number>>();
    expectTypeOf(createReadFileTool({ root: '.' })).toMatchTypeOf<Tool<{ path: string }, string>>();
  });

  it('refuses input of the wrong shape and code that misuses it', () => {
    const context = {} as ToolContext;
    expectTypeOf(lookup.execute).toBeCallableWith({ orderId: 'a', include: ['items'] }, context);
    // @ts-expect-error orderId is a string
    expectTypeOf(lookup.execute).toBeCallableWith({ orderId: 1, include: [] }, context);
    // @ts-expect-error include has a default, so execute always gets it
    expectTypeOf(lookup.execute).toBeCallableWith({ orderId: 'a' }, context);
    // @ts-expect-error 'refunds' is not one of the enum's values
    expectTypeOf(lookup.execute).toBeCallableWith({ orderId: 'a', include: ['refunds'] }, context);
    defineTool({
      name: 'misuse',
      description: 'Uses a field the schema does not have.',
      schema: z.object({ path: z.string() }),
      // @ts-expect-error the schema has no `depth`
      execute: ({ depth }) => String(depth),
    });
    defineTool({
      name: 'returns_a_function',
      description: 'Returns something that is not JSON.',
      schema: z.object({}),
      // @ts-expect-error a tool returns text or a JSON value, not a function
      execute: () => () => 'x',
    });
  });

  it('keeps plain Tool usable for lists and registries of mixed tools', () => {
    const tools: readonly Tool[] = [lookup, count, ...fileTools({ root: '.' })];
    expectTypeOf(new ToolRegistry(tools).get('lookup_order')).toEqualTypeOf<Tool | undefined>();
    expectTypeOf<Tool>().toEqualTypeOf<Tool<unknown, ToolOutput>>();
    // The context holds no file access: a custom tool cannot reach the workspace around its checks.
    expectTypeOf<ToolContext>().not.toHaveProperty('workspace');
  });
});
