import type { CheckNode, ValueRule } from './value-check.js';

/** A JSON Schema node, such as a tool's strict parameters. */
type SchemaNode = { readonly [keyword: string]: unknown };

/** Keywords zod reads that a plan does not say (`$ref`, `oneOf`, `format`, …). */
const UNPLANNED = new Set([
  '$ref',
  '$vocabulary',
  '$dynamicRef',
  '$dynamicAnchor',
  'oneOf',
  'allOf',
  'not',
  'patternProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'prefixItems',
  'additionalItems',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'format',
  'multipleOf',
  'contentEncoding',
  'contentMediaType',
  'contentSchema',
  'unevaluatedItems',
  'unevaluatedProperties',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependentRequired',
  'nullable',
]);

/**
 * The plan of a JSON Schema (a tool's parameters) that checks a value as zod's `fromJSONSchema` of
 * it would: the same verdict and issues. `undefined` when the schema uses a keyword the plan does
 * not say (`$ref`, `oneOf`, `format`, …): the caller then leaves the check to where zod runs.
 */
export function planOfJsonSchema(schema: unknown): CheckNode | undefined {
  try {
    return convert(schema);
  } catch (error) {
    if (error instanceof Unplanned) return undefined;
    throw error;
  }
}

class Unplanned extends Error {}

function convert(schema: unknown): CheckNode {
  if (typeof schema === 'boolean') {
    if (schema) return { type: 'unknown' };
    throw new Unplanned();
  }
  if (!isNode(schema)) throw new Unplanned();
  for (const keyword of Object.keys(schema)) if (UNPLANNED.has(keyword)) throw new Unplanned();
  const typed = schema.type !== undefined || schema.enum !== undefined || schema.const !== undefined;
  let node = base(schema);
  if (Array.isArray(schema.anyOf)) {
    // With a type beside it, zod intersects the two; a plan has no intersection.
    if (typed) throw new Unplanned();
    node = union(schema.anyOf.map(convert));
  } else if (schema.anyOf !== undefined) throw new Unplanned();
  if (schema.default !== undefined) node = { type: 'default', inner: node, value: schema.default };
  return node;
}

function base(schema: SchemaNode): CheckNode {
  if (schema.enum !== undefined) {
    const values = schema.enum;
    if (!Array.isArray(values) || values.length === 0 || !values.every(isPrimitive)) throw new Unplanned();
    if (values.length === 1 || values.every((value) => typeof value === 'string'))
      return { type: 'literal', values };
    return union(values.map((value) => ({ type: 'literal', values: [value] })));
  }
  if (schema.const !== undefined) {
    if (!isPrimitive(schema.const)) throw new Unplanned();
    return { type: 'literal', values: [schema.const] };
  }
  const type = schema.type;
  if (Array.isArray(type)) {
    if (type.length === 0) throw new Unplanned();
    return union(type.map((each) => base({ ...schema, type: each })));
  }
  if (type === undefined) return { type: 'unknown' };
  if (typeof type !== 'string') throw new Unplanned();
  switch (type) {
    case 'string': {
      const checks: ValueRule[] = [];
      if (typeof schema.minLength === 'number') checks.push({ kind: 'min_length', value: schema.minLength });
      if (typeof schema.maxLength === 'number') checks.push({ kind: 'max_length', value: schema.maxLength });
      if (typeof schema.pattern === 'string' && schema.pattern !== '') {
        // zod checks `new RegExp(pattern)`, so a pattern JavaScript cannot read is zod's to refuse.
        new RegExp(schema.pattern);
        checks.push({ kind: 'regex', source: new RegExp(schema.pattern).source, flags: '' });
      }
      return withChecks({ type: 'string' }, checks);
    }
    case 'number':
    case 'integer': {
      const checks: ValueRule[] = type === 'integer' ? [{ kind: 'int' }] : [];
      const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema;
      if (typeof exclusiveMinimum === 'boolean' || typeof exclusiveMaximum === 'boolean')
        throw new Unplanned();
      if (typeof minimum === 'number') checks.push({ kind: 'gte', value: minimum });
      if (typeof maximum === 'number') checks.push({ kind: 'lte', value: maximum });
      if (typeof exclusiveMinimum === 'number') checks.push({ kind: 'gt', value: exclusiveMinimum });
      if (typeof exclusiveMaximum === 'number') checks.push({ kind: 'lt', value: exclusiveMaximum });
      return withChecks({ type: 'number' }, checks);
    }
    case 'boolean':
      return { type: 'boolean' };
    case 'null':
      return { type: 'null' };
    case 'object': {
      const properties = schema.properties ?? {};
      if (!isNode(properties)) throw new Unplanned();
      const required = new Set(Array.isArray(schema.required) ? (schema.required as unknown[]) : []);
      const additional = schema.additionalProperties;
      if (isNode(additional)) throw new Unplanned();
      const shape: Record<string, CheckNode> = {};
      for (const [key, property] of Object.entries(properties)) {
        const field = convert(property);
        shape[key] = required.has(key) ? field : { type: 'optional', inner: field };
      }
      return { type: 'object', shape, unknownKeys: additional === false ? 'strict' : 'keep' };
    }
    case 'array': {
      const items = schema.items;
      if (Array.isArray(items)) throw new Unplanned();
      const element = items === undefined ? { type: 'unknown' as const } : convert(items);
      const checks: ValueRule[] = [];
      if (items !== undefined && typeof schema.minItems === 'number')
        checks.push({ kind: 'min_length', value: schema.minItems });
      if (items !== undefined && typeof schema.maxItems === 'number')
        checks.push({ kind: 'max_length', value: schema.maxItems });
      return withChecks({ type: 'array', element }, checks);
    }
    default:
      throw new Unplanned();
  }
}

function union(options: CheckNode[]): CheckNode {
  if (options.length === 0) throw new Unplanned();
  return { type: 'union', options };
}

function withChecks<Node extends CheckNode>(node: Node, checks: ValueRule[]): Node {
  return checks.length > 0 ? { ...node, checks } : node;
}

function isPrimitive(value: unknown): value is string | number | boolean | null {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
