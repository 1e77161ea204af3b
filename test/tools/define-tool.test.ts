import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_TOOL_TIMEOUT_SECONDS } from '../../src/contract/defaults.js';
import { defineTool, ToolDefinitionError } from '../../src/tools/define-tool.js';
import type { ToolContext, ToolSpec } from '../../src/tools/define-tool.js';
import { toStrictParameters } from '../../src/tools/strict-schema.js';

const emptySchema = z.object({});

function spec<Schema extends z.ZodObject = typeof emptySchema>(
  overrides: Partial<ToolSpec<Schema>> = {},
): ToolSpec<Schema> {
  return {
    name: 'sample',
    description: 'A sample tool.',
    schema: emptySchema as unknown as Schema,
    execute: () => 'done',
    ...overrides,
  };
}

function definitionErrorOf(run: () => unknown): ToolDefinitionError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ToolDefinitionError);
    return error as ToolDefinitionError;
  }
  throw new Error('expected a ToolDefinitionError');
}

describe('defineTool', () => {
  it.each(['read_file', 'x', 'list-directory', 'A1', 'a'.repeat(64)])('accepts the name %j', (name) => {
    expect(defineTool(spec({ name })).name).toBe(name);
  });

  it.each(['', 'has space', 'dotted.name', 'a'.repeat(65), 'ünïcode', 'slash/name'])(
    'refuses the name %j',
    (name) => {
      const error = definitionErrorOf(() => defineTool(spec({ name })));
      expect(error.message).toBe(
        `Tool name ${JSON.stringify(name)} is invalid: use 1-64 letters, digits, '_' or '-'`,
      );
      expect(error.name).toBe('ToolDefinitionError');
    },
  );

  it('refuses an empty or blank description', () => {
    expect(definitionErrorOf(() => defineTool(spec({ description: '' }))).message).toBe(
      'Tool sample needs a description',
    );
    expect(definitionErrorOf(() => defineTool(spec({ description: ' \n\t ' }))).message).toBe(
      'Tool sample needs a description',
    );
  });

  // 2,200,000 s (about 25 days) is also past what a Node timer can hold: it would fire after 1 ms.
  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, 86_401, 2_200_000])(
    'refuses the timeout %s',
    (timeoutSeconds) => {
      expect(definitionErrorOf(() => defineTool(spec({ timeoutSeconds }))).message).toBe(
        'Tool sample: timeoutSeconds must be a positive number of at most 86400 (a day)',
      );
    },
  );

  it('accepts a timeout of exactly a day', () => {
    expect(defineTool(spec({ timeoutSeconds: 86_400 })).timeoutSeconds).toBe(86_400);
  });

  it('uses the default timeout and readOnly false when the spec does not say', () => {
    const tool = defineTool(spec());
    expect(tool.timeoutSeconds).toBe(DEFAULT_TOOL_TIMEOUT_SECONDS);
    expect(tool.readOnly).toBe(false);
  });

  it('keeps the timeout, readOnly flag and description it was given', () => {
    const tool = defineTool(spec({ timeoutSeconds: 0.2, readOnly: true, description: 'Reads things.' }));
    expect(tool).toMatchObject({ timeoutSeconds: 0.2, readOnly: true, description: 'Reads things.' });
  });

  it('offers the strict parameters of its schema', () => {
    const schema = z.object({ a: z.string(), b: z.number().optional() });
    expect(defineTool(spec({ schema })).parameters).toEqual(toStrictParameters(schema));
  });

  it('refuses a schema strict mode cannot express, saying why', () => {
    const schema = z.object({ tags: z.record(z.string(), z.string()) });
    expect(definitionErrorOf(() => defineTool(spec({ schema }))).message).toBe(
      "Tool sample: schema is not usable for strict function calling: (root).tags: 'propertyNames' cannot be expressed in strict mode",
    );
  });

  it('refuses a schema JSON Schema cannot represent at all', () => {
    const schema = z.object({ when: z.date() });
    expect(definitionErrorOf(() => defineTool(spec({ schema }))).message).toMatch(
      /^Tool sample: schema is not usable for strict function calling: .*Date/,
    );
  });

  it('runs locally only a read-only tool that needs no approval and is quick', () => {
    expect(defineTool(spec({ readOnly: true, local: true, timeoutSeconds: 30 })).local).toBe(true);
    expect(defineTool(spec({ readOnly: true })).local).toBe(false);
    expect(definitionErrorOf(() => defineTool(spec({ local: true }))).message).toBe(
      'Tool sample cannot be local: it is not readOnly',
    );
    expect(
      definitionErrorOf(() => defineTool(spec({ local: true, readOnly: true, needsApproval: true }))).message,
    ).toBe('Tool sample cannot be local: it may need approval');
    expect(
      definitionErrorOf(() => defineTool(spec({ local: true, readOnly: true, timeoutSeconds: 31 }))).message,
    ).toBe('Tool sample cannot be local: its timeout is over 30 seconds');
  });

  it('says which calls need approval: always, by a rule over the validated input, or never', async () => {
    expect(defineTool(spec()).approval).toBe('never');
    expect(defineTool(spec({ needsApproval: true })).approval).toBe('always');
    const rule = defineTool(
      spec({
        schema: z.object({ path: z.string() }),
        needsApproval: ({ path }: { path: string }) => path.startsWith('deploy/'),
      }),
    );
    expect(rule.approval).toBe('conditional');
    expect(await rule.needsApproval({ path: 'deploy/app' })).toBe(true);
    expect(await rule.needsApproval({ path: 'notes.md' })).toBe(false);
  });

  it('is frozen, so a registered tool cannot be changed', () => {
    const tool = defineTool(spec());
    expect(Object.isFrozen(tool)).toBe(true);
  });

  it('passes the input and the context through to execute', async () => {
    const seen: Array<{ input: unknown; context: ToolContext }> = [];
    const tool = defineTool(
      spec({
        schema: z.object({ text: z.string() }),
        execute: (input, context) => {
          seen.push({ input, context });
          return `got ${input.text}`;
        },
      }),
    );
    const context: ToolContext = {
      signal: new AbortController().signal,
      callId: 'call_1',
      idempotencyKey: 'run:call_1',
      heartbeat: () => undefined,
      once: (_step, effect) => Promise.resolve(effect()),
    };
    await expect(Promise.resolve(tool.execute({ text: 'hi' }, context))).resolves.toBe('got hi');
    expect(seen).toEqual([{ input: { text: 'hi' }, context }]);
  });
});

describe('parseArguments', () => {
  it('accepts arguments that match the schema and returns zod’s output', () => {
    const tool = defineTool(
      spec({ schema: z.object({ a: z.number(), s: z.string().transform((s) => s.length) }) }),
    );
    expect(tool.parseArguments({ a: 1, s: 'four' })).toEqual({ ok: true, input: { a: 1, s: 4 } });
  });

  it('applies zod defaults after stripping the nulls strict mode makes the model send', () => {
    const tool = defineTool(
      spec({ schema: z.object({ path: z.string().default('.'), depth: z.number().default(1) }) }),
    );
    expect(tool.parseArguments({ path: null, depth: null })).toEqual({
      ok: true,
      input: { path: '.', depth: 1 },
    });
    expect(tool.parseArguments({ path: 'src', depth: null })).toEqual({
      ok: true,
      input: { path: 'src', depth: 1 },
    });
  });

  it('accepts nulls for optional properties and leaves them absent', () => {
    const tool = defineTool(spec({ schema: z.object({ a: z.number(), note: z.string().optional() }) }));
    expect(tool.parseArguments({ a: 1, note: null })).toEqual({ ok: true, input: { a: 1 } });
  });

  it('keeps null for a property that is really nullable, even one with a default', () => {
    const tool = defineTool(
      spec({ schema: z.object({ parent: z.string().nullable(), limit: z.number().nullable().default(5) }) }),
    );
    expect(tool.parseArguments({ parent: null, limit: null })).toEqual({
      ok: true,
      input: { parent: null, limit: null },
    });
  });

  it('reports one path: message line per zod issue', () => {
    const tool = defineTool(
      spec({
        schema: z.object({ a: z.number(), nested: z.object({ b: z.string() }), list: z.array(z.number()) }),
      }),
    );
    const result = tool.parseArguments({ a: 'one', nested: { b: 2 }, list: [1, 'two'] });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual([
      'a: Invalid input: expected number, received string',
      'nested.b: Invalid input: expected string, received number',
      'list[1]: Invalid input: expected number, received string',
    ]);
  });

  it('reports a value that is not an object at the root', () => {
    const tool = defineTool(spec({ schema: z.object({ a: z.number() }) }));
    expect(tool.parseArguments([1])).toEqual({
      ok: false,
      issues: ['(root): Invalid input: expected object, received array'],
    });
  });

  it('refuses undeclared keys, after any zod issues', () => {
    const tool = defineTool(spec({ schema: z.object({ a: z.number(), note: z.string().optional() }) }));
    expect(tool.parseArguments({ a: 1, notes: 'typo' })).toEqual({
      ok: false,
      issues: ['(root): unknown key "notes"'],
    });
    expect(tool.parseArguments({ a: 'x', extra: true })).toEqual({
      ok: false,
      issues: ['a: Invalid input: expected number, received string', '(root): unknown key "extra"'],
    });
  });

  it('accepts a null for an optional property inside a discriminated-union branch, as strict mode requires it', () => {
    const tool = defineTool(
      spec({
        schema: z.object({
          action: z.discriminatedUnion('kind', [
            z.object({ kind: z.literal('stop') }),
            z.object({ kind: z.literal('move'), steps: z.number().optional() }),
          ]),
        }),
      }),
    );
    expect(tool.parseArguments({ action: { kind: 'move', steps: null } })).toEqual({
      ok: true,
      input: { action: { kind: 'move' } },
    });
  });

  it('refuses an undeclared key inside a discriminated-union branch', () => {
    const tool = defineTool(
      spec({
        schema: z.object({
          action: z.discriminatedUnion('kind', [
            z.object({ kind: z.literal('stop') }),
            z.object({ kind: z.literal('move'), steps: z.number() }),
          ]),
        }),
      }),
    );
    const result = tool.parseArguments({ action: { kind: 'stop', force: true } });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.issues).toEqual([expect.stringMatching(/unknown key "force"/)]);
  });

  it('accepts a null for an optional property inside the objects of a nullable array', () => {
    const tool = defineTool(
      spec({
        schema: z.object({
          edits: z.array(z.object({ line: z.number(), note: z.string().optional() })).nullable(),
        }),
      }),
    );
    expect(tool.parseArguments({ edits: [{ line: 1, note: null }] })).toEqual({
      ok: true,
      input: { edits: [{ line: 1 }] },
    });
  });

  it('refuses an undeclared key inside the objects of a nullable array', () => {
    const tool = defineTool(
      spec({ schema: z.object({ edits: z.array(z.object({ line: z.number() })).nullable() }) }),
    );
    expect(tool.parseArguments({ edits: [{ line: 1, column: 2 }] })).toEqual({
      ok: false,
      issues: ['edits[0]: unknown key "column"'],
    });
  });
});
