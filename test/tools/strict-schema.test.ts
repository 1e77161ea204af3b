import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  acceptsNull,
  inputJsonSchema,
  prepareArguments,
  StrictSchemaError,
  toStrictParameters,
} from '../../src/tools/strict-schema.js';
import type { JsonSchema } from '../../src/tools/strict-schema.js';

/** A recursive schema: zod emits it as a `$ref` into `$defs`. */
type TreeNode = { name: string; children?: TreeNode[] | undefined };
const TreeNode: z.ZodType<TreeNode> = z.lazy(() =>
  z.object({ name: z.string(), children: z.array(TreeNode).optional() }),
);

function strictErrorOf(schema: z.ZodObject): StrictSchemaError {
  try {
    toStrictParameters(schema);
  } catch (error) {
    expect(error).toBeInstanceOf(StrictSchemaError);
    return error as StrictSchemaError;
  }
  throw new Error('expected toStrictParameters to throw');
}

describe('inputJsonSchema', () => {
  it('describes what a caller may send, without the $schema keyword', () => {
    const json = inputJsonSchema(z.object({ a: z.string(), b: z.number().default(1) }));
    expect(json).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number', default: 1 } },
      required: ['a'],
    });
  });
});

describe('toStrictParameters', () => {
  it('closes the root object and keeps required plain properties as they are', () => {
    expect(toStrictParameters(z.object({ a: z.string(), b: z.boolean() }))).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'boolean' } },
      required: ['a', 'b'],
      additionalProperties: false,
    });
  });

  it('lists every property in required and makes optional plain types nullable', () => {
    const parameters = toStrictParameters(
      z.object({ a: z.string(), b: z.number().optional(), c: z.boolean().optional() }),
    );
    expect(parameters.required).toEqual(['a', 'b', 'c']);
    expect(parameters.properties).toEqual({
      a: { type: 'string' },
      b: { type: ['number', 'null'] },
      c: { type: ['boolean', 'null'] },
    });
  });

  it('adds null to the type list of an optional union of plain types', () => {
    const parameters = toStrictParameters(z.object({ u: z.union([z.string(), z.number()]).optional() }));
    expect(parameters.properties).toEqual({ u: { type: ['string', 'number', 'null'] } });
  });

  it('leaves a required nullable property as zod describes it', () => {
    const parameters = toStrictParameters(z.object({ c: z.string().nullable() }));
    expect(parameters.properties).toEqual({ c: { type: ['string', 'null'] } });
    expect(parameters.required).toEqual(['c']);
  });

  it('does not add a second null to an optional property that is already nullable', () => {
    const parameters = toStrictParameters(
      z.object({ d: z.string().nullable().optional(), e: z.enum(['x', 'y']).nullable().optional() }),
    );
    expect(parameters.properties).toEqual({
      d: { type: ['string', 'null'] },
      e: { anyOf: [{ type: 'string', enum: ['x', 'y'] }, { type: 'null' }] },
    });
  });

  it('wraps an optional enum in anyOf with null, keeping its description outside', () => {
    const parameters = toStrictParameters(
      z.object({ mode: z.enum(['fast', 'slow']).optional().describe('How to run') }),
    );
    expect(parameters.properties).toEqual({
      mode: {
        description: 'How to run',
        anyOf: [{ type: 'string', enum: ['fast', 'slow'] }, { type: 'null' }],
      },
    });
  });

  it('wraps an optional const in anyOf with null', () => {
    const parameters = toStrictParameters(
      z.object({ kind: z.literal('k').optional(), three: z.literal(3).optional() }),
    );
    expect(parameters.properties).toEqual({
      kind: { anyOf: [{ type: 'string', const: 'k' }, { type: 'null' }] },
      three: { anyOf: [{ type: 'number', const: 3 }, { type: 'null' }] },
    });
  });

  it('wraps an optional $ref in anyOf with null and makes the definition strict too', () => {
    const parameters = toStrictParameters(z.object({ tree: TreeNode.optional() }));
    const properties = parameters.properties as Record<string, JsonSchema>;
    const anyOf = properties.tree!.anyOf as JsonSchema[];
    expect(anyOf).toHaveLength(2);
    expect(anyOf[1]).toEqual({ type: 'null' });
    const ref = anyOf[0]!.$ref as string;
    expect(ref).toMatch(/^#\/\$defs\//);
    const definition = (parameters.$defs as Record<string, JsonSchema>)[ref.slice('#/$defs/'.length)];
    expect(definition).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string' },
        children: { type: ['array', 'null'], items: { $ref: ref } },
      },
      required: ['name', 'children'],
      additionalProperties: false,
    });
  });

  it('closes nested objects, requires all their properties and makes an optional nested object nullable', () => {
    const parameters = toStrictParameters(
      z.object({
        options: z.object({ x: z.number(), y: z.string().optional() }).optional(),
        fixed: z.object({ z: z.boolean().optional() }),
      }),
    );
    expect(parameters.properties).toEqual({
      options: {
        type: ['object', 'null'],
        properties: { x: { type: 'number' }, y: { type: ['string', 'null'] } },
        required: ['x', 'y'],
        additionalProperties: false,
      },
      fixed: {
        type: 'object',
        properties: { z: { type: ['boolean', 'null'] } },
        required: ['z'],
        additionalProperties: false,
      },
    });
  });

  it('closes the item objects of arrays and makes an optional array nullable', () => {
    const parameters = toStrictParameters(
      z.object({ edits: z.array(z.object({ line: z.number(), note: z.string().optional() })).optional() }),
    );
    expect(parameters.properties).toEqual({
      edits: {
        type: ['array', 'null'],
        items: {
          type: 'object',
          properties: { line: { type: 'number' }, note: { type: ['string', 'null'] } },
          required: ['line', 'note'],
          additionalProperties: false,
        },
      },
    });
  });

  it('turns oneOf into anyOf and makes every branch strict', () => {
    const parameters = toStrictParameters(
      z.object({
        action: z.discriminatedUnion('kind', [
          z.object({ kind: z.literal('a') }),
          z.object({ kind: z.literal('b'), count: z.number().optional() }),
        ]),
      }),
    );
    expect(parameters.properties).toEqual({
      action: {
        anyOf: [
          {
            type: 'object',
            properties: { kind: { type: 'string', const: 'a' } },
            required: ['kind'],
            additionalProperties: false,
          },
          {
            type: 'object',
            properties: { kind: { type: 'string', const: 'b' }, count: { type: ['number', 'null'] } },
            required: ['kind', 'count'],
            additionalProperties: false,
          },
        ],
      },
    });
  });

  it('moves a default into the description and removes the default keyword', () => {
    const parameters = toStrictParameters(
      z.object({
        count: z.number().default(3).describe('How many'),
        label: z.string().default('none'),
      }),
    );
    expect(parameters.properties).toEqual({
      count: { type: ['number', 'null'], description: 'How many Default: 3.' },
      label: { type: ['string', 'null'], description: 'Default: "none".' },
    });
    expect(parameters.required).toEqual(['count', 'label']);
  });

  it('does not change the JSON Schema it started from, so it can be called again', () => {
    const schema = z.object({ a: z.string().optional(), b: z.number().default(2) });
    const first = toStrictParameters(schema);
    expect(toStrictParameters(schema)).toEqual(first);
    expect(inputJsonSchema(schema)).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number', default: 2 } },
    });
  });

  it('refuses a record, naming the property and the keyword', () => {
    const error = strictErrorOf(z.object({ tags: z.record(z.string(), z.string()) }));
    expect(error.message).toBe("(root).tags: 'propertyNames' cannot be expressed in strict mode");
  });

  it('refuses loose and catch-all objects', () => {
    expect(strictErrorOf(z.object({ l: z.looseObject({ a: z.string() }) })).message).toBe(
      '(root).l: objects with free-form keys (records, loose or catch-all objects) cannot be expressed in strict mode; list the properties instead',
    );
    expect(strictErrorOf(z.object({ c: z.object({ a: z.string() }).catchall(z.number()) })).message).toMatch(
      /^\(root\)\.c: objects with free-form keys/,
    );
  });

  it('refuses a loose root object', () => {
    expect(strictErrorOf(z.looseObject({ a: z.string() })).message).toMatch(
      /^\(root\): objects with free-form keys/,
    );
  });

  it('refuses tuples', () => {
    expect(strictErrorOf(z.object({ pair: z.tuple([z.string(), z.number()]) })).message).toBe(
      "(root).pair: 'prefixItems' cannot be expressed in strict mode",
    );
  });

  it('refuses allOf, not and other keywords strict mode does not support', () => {
    expect(strictErrorOf(z.object({ i: z.intersection(z.string().min(1), z.string().max(5)) })).message).toBe(
      "(root).i: 'allOf' cannot be expressed in strict mode",
    );
    expect(strictErrorOf(z.object({ n: z.never().optional() })).message).toBe(
      "(root).n: 'not' cannot be expressed in strict mode",
    );
    expect(strictErrorOf(z.object({ m: z.object({}).meta({ minProperties: 1 }) })).message).toBe(
      "(root).m: 'minProperties' cannot be expressed in strict mode",
    );
    expect(strictErrorOf(z.object({ b: z.base64() })).message).toBe(
      "(root).b: 'contentEncoding' cannot be expressed in strict mode",
    );
  });

  it('names the path of an unsupported schema deep in objects and arrays', () => {
    expect(
      strictErrorOf(z.object({ outer: z.object({ inner: z.record(z.string(), z.number()) }) })).message,
    ).toMatch(/^\(root\)\.outer\.inner: /);
    expect(strictErrorOf(z.object({ list: z.array(z.looseObject({})) })).message).toMatch(
      /^\(root\)\.list\[\]: /,
    );
  });

  it('is a StrictSchemaError, an Error with its own name', () => {
    const error = strictErrorOf(z.object({ t: z.tuple([z.string()]) }));
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('StrictSchemaError');
  });
});

describe('acceptsNull', () => {
  it('recognises null in a type list, an enum, a const and a union branch', () => {
    expect(acceptsNull({ type: 'null' })).toBe(true);
    expect(acceptsNull({ type: ['string', 'null'] })).toBe(true);
    expect(acceptsNull({ enum: ['a', null] })).toBe(true);
    expect(acceptsNull({ const: null })).toBe(true);
    expect(acceptsNull({ anyOf: [{ type: 'string' }, { type: 'null' }] })).toBe(true);
    expect(acceptsNull({ oneOf: [{ type: 'number' }, { type: 'null' }] })).toBe(true);
  });

  it('does not see null where the schema does not admit it', () => {
    expect(acceptsNull({ type: 'string' })).toBe(false);
    expect(acceptsNull({ type: ['string', 'number'] })).toBe(false);
    expect(acceptsNull({ enum: ['a', 'b'] })).toBe(false);
    expect(acceptsNull({ const: 'a' })).toBe(false);
    expect(acceptsNull({ anyOf: [{ type: 'string' }, { type: 'number' }] })).toBe(false);
  });
});

describe('prepareArguments', () => {
  const prepared = (schema: z.ZodObject, value: unknown) => prepareArguments(value, inputJsonSchema(schema));

  it('removes a null sent for an optional property', () => {
    expect(prepared(z.object({ a: z.string(), b: z.number().optional() }), { a: 'x', b: null })).toEqual({
      value: { a: 'x' },
      unknownKeys: [],
    });
  });

  it('removes a null sent for a property with a default, so zod can fill the default in', () => {
    expect(prepared(z.object({ n: z.number().default(3) }), { n: null }).value).toEqual({});
  });

  it('keeps a null sent for a nullable property, required or optional', () => {
    const schema = z.object({ r: z.string().nullable(), o: z.string().nullable().optional() });
    expect(prepared(schema, { r: null, o: null }).value).toEqual({ r: null, o: null });
  });

  it('keeps a null sent for a required property that is not nullable, for zod to refuse', () => {
    expect(prepared(z.object({ a: z.string() }), { a: null }).value).toEqual({ a: null });
  });

  it('keeps values that are not null as they are', () => {
    const schema = z.object({
      a: z.string().optional(),
      b: z.number().optional(),
      c: z.boolean().optional(),
    });
    expect(prepared(schema, { a: '', b: 0, c: false }).value).toEqual({ a: '', b: 0, c: false });
  });

  it('removes optional nulls inside nested objects', () => {
    const schema = z.object({ options: z.object({ x: z.number(), y: z.string().optional() }) });
    expect(prepared(schema, { options: { x: 1, y: null } }).value).toEqual({ options: { x: 1 } });
  });

  it('removes optional nulls inside a nullable nested object', () => {
    const schema = z.object({ options: z.object({ y: z.string().optional() }).nullable() });
    expect(prepared(schema, { options: { y: null } }).value).toEqual({ options: {} });
    expect(prepared(schema, { options: null }).value).toEqual({ options: null });
  });

  it('removes optional nulls inside the objects of an array', () => {
    const schema = z.object({ edits: z.array(z.object({ line: z.number(), note: z.string().optional() })) });
    expect(
      prepared(schema, {
        edits: [
          { line: 1, note: null },
          { line: 2, note: 'n' },
        ],
      }).value,
    ).toEqual({
      edits: [{ line: 1 }, { line: 2, note: 'n' }],
    });
  });

  it('follows $ref definitions, including recursive ones', () => {
    const schema = z.object({ tree: TreeNode.optional() });
    expect(
      prepared(schema, { tree: { name: 'a', children: [{ name: 'b', children: null }] } }).value,
    ).toEqual({ tree: { name: 'a', children: [{ name: 'b' }] } });
    expect(prepared(schema, { tree: null }).value).toEqual({});
  });

  it('names an undeclared key at the root', () => {
    expect(prepared(z.object({ a: z.string() }), { a: 'x', x: 1 })).toEqual({
      value: { a: 'x' },
      unknownKeys: ['(root): unknown key "x"'],
    });
  });

  it('names undeclared keys in nested objects and array items by their path', () => {
    const schema = z.object({
      nested: z.object({ inner: z.object({ a: z.number() }) }),
      list: z.array(z.object({ b: z.number() })),
    });
    const result = prepared(schema, {
      nested: { inner: { a: 1, y: 2 } },
      list: [{ b: 1 }, { b: 2, z: 3 }],
    });
    expect(result.unknownKeys).toEqual(['nested.inner: unknown key "y"', 'list[1]: unknown key "z"']);
    expect(result.value).toEqual({ nested: { inner: { a: 1 } }, list: [{ b: 1 }, { b: 2 }] });
  });

  it('names undeclared keys inside recursive definitions', () => {
    const result = prepared(z.object({ tree: TreeNode }), {
      tree: { name: 'a', children: [{ name: 'b', bad: true }] },
    });
    expect(result.unknownKeys).toEqual(['tree.children[0]: unknown key "bad"']);
  });

  it('names undeclared keys that share a name with Object.prototype members', () => {
    const schema = z.object({ a: z.number() });
    expect(prepared(schema, { a: 1, constructor: 5 }).unknownKeys).toEqual([
      '(root): unknown key "constructor"',
    ]);
    expect(prepared(schema, { a: 1, toString: 'x' }).unknownKeys).toEqual(['(root): unknown key "toString"']);
  });

  it('names a "__proto__" key as unknown instead of letting it supply declared properties', () => {
    const schema = z.object({ a: z.number().optional() });
    const result = prepared(schema, JSON.parse('{"__proto__":{"a":2}}'));
    expect(result.unknownKeys).toEqual(['(root): unknown key "__proto__"']);
    expect((result.value as { a?: number }).a).toBeUndefined();
  });

  it('does not change the value it was given', () => {
    const value = { a: 'x', b: null, nested: { c: null } };
    prepared(
      z.object({ a: z.string(), b: z.number().optional(), nested: z.object({ c: z.string().optional() }) }),
      value,
    );
    expect(value).toEqual({ a: 'x', b: null, nested: { c: null } });
  });

  it('passes values that are not objects through untouched', () => {
    const schema = z.object({ a: z.string() });
    expect(prepared(schema, null)).toEqual({ value: null, unknownKeys: [] });
    expect(prepared(schema, 'text')).toEqual({ value: 'text', unknownKeys: [] });
    expect(prepared(schema, [1, 2])).toEqual({ value: [1, 2], unknownKeys: [] });
  });
});
