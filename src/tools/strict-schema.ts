import { z } from 'zod';

/** A JSON Schema node, as produced by `z.toJSONSchema`. */
export type JsonSchema = { [keyword: string]: unknown };

/** The schema of a tool cannot be expressed for OpenAI strict function calling. */
export class StrictSchemaError extends Error {
  override name = 'StrictSchemaError';
}

/** Keywords strict mode rejects; a tool using them is refused at definition time, not at call time. */
export const STRICT_UNSUPPORTED = [
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'patternProperties',
  'propertyNames',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'minProperties',
  'maxProperties',
  'prefixItems',
  'contains',
  'uniqueItems',
  'unevaluatedProperties',
  'unevaluatedItems',
  '$dynamicRef',
  '$recursiveRef',
  'contentEncoding',
  'contentMediaType',
];

/** The plain JSON Schema of a tool's input, as zod describes what a caller may send. */
export function inputJsonSchema(schema: z.ZodObject): JsonSchema {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw', cycles: 'ref' }) as JsonSchema;
  delete json.$schema;
  return json;
}

/**
 * The model-facing parameters of a tool: the zod input schema made valid for strict function calling.
 * Every object is closed (`additionalProperties: false`) and lists all its properties in `required`;
 * properties that were optional become nullable instead, and {@link prepareArguments} removes those
 * nulls again before the arguments are parsed.
 */
export function toStrictParameters(schema: z.ZodObject): JsonSchema {
  const json = structuredClone(inputJsonSchema(schema));
  if (json.type !== 'object' || json.anyOf !== undefined) {
    throw new StrictSchemaError('the root of a tool schema must be an object');
  }
  return strictify(json, '(root)');
}

/**
 * Strict parameters from a plain JSON Schema that did not come from zod (an MCP server's): the same
 * rewriting as {@link toStrictParameters}. Throws a {@link StrictSchemaError} when strict mode cannot
 * express it; the input is not changed.
 */
export function toStrictJsonSchema(schema: JsonSchema): JsonSchema {
  const json = structuredClone(schema);
  if (json.type !== 'object' || json.anyOf !== undefined) {
    throw new StrictSchemaError('the root of a tool schema must be an object');
  }
  return strictify(json, '(root)');
}

function strictify(node: JsonSchema, path: string): JsonSchema {
  for (const keyword of STRICT_UNSUPPORTED) {
    if (keyword in node) {
      throw new StrictSchemaError(`${path}: '${keyword}' cannot be expressed in strict mode`);
    }
  }
  if ('default' in node) {
    // Strict mode has no defaults: the model sends null, the null is stripped, and zod fills the default in.
    const hint = `Default: ${JSON.stringify(node.default)}.`;
    node.description = typeof node.description === 'string' ? `${node.description} ${hint}` : hint;
    delete node.default;
  }
  if (Array.isArray(node.oneOf)) {
    node.anyOf = node.oneOf;
    delete node.oneOf;
  }
  const isObject = node.type === 'object' || 'properties' in node || 'additionalProperties' in node;
  if (isObject) {
    if (node.additionalProperties !== undefined && node.additionalProperties !== false) {
      throw new StrictSchemaError(
        `${path}: objects with free-form keys (records, loose or catch-all objects) cannot be expressed in strict mode; list the properties instead`,
      );
    }
    node.additionalProperties = false;
    const properties = (node.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((node.required ?? []) as string[]);
    for (const [key, child] of Object.entries(properties)) {
      const strictChild = strictify(child, `${path}.${key}`);
      properties[key] = required.has(key) ? strictChild : nullable(strictChild);
    }
    node.properties = properties;
    node.required = Object.keys(properties);
  }
  if (node.items !== undefined) {
    if (Array.isArray(node.items))
      throw new StrictSchemaError(`${path}: tuples cannot be expressed in strict mode`);
    node.items = strictify(node.items as JsonSchema, `${path}[]`);
  }
  if (Array.isArray(node.anyOf)) {
    node.anyOf = (node.anyOf as JsonSchema[]).map((branch, index) => strictify(branch, `${path}|${index}`));
  }
  for (const definitions of ['$defs', 'definitions']) {
    const defs = node[definitions] as Record<string, JsonSchema> | undefined;
    if (defs)
      for (const [name, def] of Object.entries(defs)) defs[name] = strictify(def, `#/${definitions}/${name}`);
  }
  return node;
}

/** Whether a schema node already admits `null`. */
export function acceptsNull(node: JsonSchema | undefined): boolean {
  if (node === undefined) return true;
  const type = node.type;
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true;
  if (Array.isArray(node.enum) && node.enum.includes(null)) return true;
  if ('const' in node && node.const === null) return true;
  const union = (node.anyOf ?? node.oneOf) as JsonSchema[] | undefined;
  return Array.isArray(union) && union.some(acceptsNull);
}

function nullable(node: JsonSchema): JsonSchema {
  if (acceptsNull(node)) return node;
  const simple =
    node.enum === undefined && !('const' in node) && node.anyOf === undefined && node.$ref === undefined;
  if (simple && typeof node.type === 'string') return { ...node, type: [node.type, 'null'] };
  if (simple && Array.isArray(node.type)) return { ...node, type: [...(node.type as unknown[]), 'null'] };
  const { description, ...rest } = node;
  return description === undefined
    ? { anyOf: [rest, { type: 'null' }] }
    : { description, anyOf: [rest, { type: 'null' }] };
}

/** Arguments after {@link prepareArguments}: optional nulls removed, unknown keys named. */
export interface PreparedArguments {
  value: unknown;
  /** One `path: message` line per key the schema does not declare (every tool object is closed). */
  unknownKeys: string[];
}

/**
 * Prepares decoded arguments for zod, guided by the original (non-strict) input schema: removes the
 * nulls strict mode forces the model to send for optional properties, so zod sees an absent field and
 * applies its default (a null sent for a really nullable property is kept), and names keys the schema
 * does not declare, which zod would otherwise drop silently (a misspelt optional argument).
 */
export function prepareArguments(value: unknown, schema: JsonSchema): PreparedArguments {
  const unknownKeys: string[] = [];
  return { value: prepare(value, schema, schema, '', unknownKeys), unknownKeys };
}

function prepare(
  value: unknown,
  node: JsonSchema | undefined,
  root: JsonSchema,
  path: string,
  unknownKeys: string[],
): unknown {
  const resolved = resolveRef(node, root);
  if (resolved === undefined || value === null || typeof value !== 'object') return value;
  const union = (resolved.anyOf ?? resolved.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(union)) {
    const branch = chooseBranch(value, union, root);
    return branch === undefined ? value : prepare(value, branch, root, path, unknownKeys);
  }
  if (Array.isArray(value)) {
    const items = resolved.items as JsonSchema | undefined;
    return items === undefined
      ? value
      : value.map((item, index) => prepare(item, items, root, `${path}[${index}]`, unknownKeys));
  }
  const properties = resolved.properties as Record<string, JsonSchema> | undefined;
  if (properties === undefined) return value;
  const required = new Set((resolved.required ?? []) as string[]);
  const result: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    // Own properties only: `constructor` or `__proto__` must not pass for declared keys.
    const propertySchema = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (propertySchema === undefined) {
      unknownKeys.push(`${path === '' ? '(root)' : path}: unknown key ${JSON.stringify(key)}`);
      continue;
    }
    if (child === null && !required.has(key) && !acceptsNull(resolveRef(propertySchema, root))) continue;
    const prepared = prepare(child, propertySchema, root, path === '' ? key : `${path}.${key}`, unknownKeys);
    Object.defineProperty(result, key, {
      value: prepared,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}

/**
 * The union branch a value belongs to: among branches of the value's JSON kind (object or array),
 * the one whose `const`/`enum` properties the value matches (a discriminator), preferring the branch
 * that declares the most of the value's keys. Undefined when none fits; zod then judges the value.
 */
function chooseBranch(value: object, union: readonly JsonSchema[], root: JsonSchema): JsonSchema | undefined {
  const branches = union.map((branch) => resolveRef(branch, root)).filter((branch) => branch !== undefined);
  if (Array.isArray(value))
    return branches.find((branch) => branch.type === 'array' || branch.items !== undefined);
  const record = value as Record<string, unknown>;
  let best: { branch: JsonSchema; declared: number } | undefined;
  for (const branch of branches) {
    const properties = branch.properties as Record<string, JsonSchema> | undefined;
    if (properties === undefined) continue;
    const matchesDiscriminators = Object.entries(properties).every(([key, schema]) => {
      const property = resolveRef(schema, root);
      if (property === undefined || record[key] === null) return true;
      if ('const' in property) return record[key] === property.const;
      if (Array.isArray(property.enum) && Object.hasOwn(record, key))
        return property.enum.includes(record[key]);
      return true;
    });
    if (!matchesDiscriminators) continue;
    const declared = Object.keys(record).filter((key) => Object.hasOwn(properties, key)).length;
    if (best === undefined || declared > best.declared) best = { branch, declared };
  }
  return best?.branch;
}

function resolveRef(node: JsonSchema | undefined, root: JsonSchema): JsonSchema | undefined {
  let current = node;
  for (let depth = 0; current !== undefined && typeof current.$ref === 'string' && depth < 32; depth++) {
    const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(current.$ref);
    if (match === null) return undefined;
    current = (root[match[1]!] as Record<string, JsonSchema> | undefined)?.[match[2]!];
  }
  return current;
}
