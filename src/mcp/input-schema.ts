import { StrictSchemaError, toStrictJsonSchema } from '../tools/strict-schema.js';
import type { JsonSchema } from '../tools/strict-schema.js';

/** How an MCP tool's input schema is offered to the model and checked at call time. */
export interface McpToolParameters {
  /** Sent as the function's `parameters`. */
  parameters: JsonSchema;
  /** Whether {@link parameters} is a strict schema (every object closed, every property required). */
  strict: boolean;
  /** Why strict mode could not express the schema, for the worker log; absent when strict. */
  notStrictBecause?: string;
  /** The server's own schema, without `$schema`: what arguments are validated against before a call. */
  schema: JsonSchema;
}

/** Keywords strict function calling accepts (`default` is moved into the description). */
const STRICT_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  '$ref',
  '$defs',
  'definitions',
  'description',
  'title',
  'default',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);

/** String formats strict mode knows; any other (`uri`, say) makes the request fail. */
const STRICT_FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
]);

/**
 * The model-facing parameters of an MCP tool: its input schema made strict where strict mode can say
 * the same thing (see `toStrictJsonSchema`), and the schema as the server wrote it otherwise, sent
 * with `strict: false`. Either way arguments are validated against the server's schema before a call.
 */
export function mcpToolParameters(inputSchema: JsonSchema): McpToolParameters {
  const schema = { ...inputSchema };
  delete schema.$schema;
  const unsupported = firstUnsupported(schema, '(root)');
  if (unsupported !== undefined)
    return { parameters: schema, strict: false, notStrictBecause: unsupported, schema };
  try {
    return { parameters: toStrictJsonSchema(schema), strict: true, schema };
  } catch (error) {
    if (!(error instanceof StrictSchemaError)) throw error;
    return { parameters: schema, strict: false, notStrictBecause: error.message, schema };
  }
}

/** The first place strict mode cannot express, as `path: why`; undefined when there is none. */
function firstUnsupported(node: unknown, path: string): string | undefined {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return `${path}: not a schema object`;
  const schema = node as JsonSchema;
  for (const [keyword, value] of Object.entries(schema)) {
    if (!STRICT_KEYWORDS.has(keyword)) return `${path}: '${keyword}' is not supported in strict mode`;
    if (keyword === 'format' && !STRICT_FORMATS.has(String(value)))
      return `${path}: format '${String(value)}' is not supported in strict mode`;
    if (keyword === '$ref' && !(typeof value === 'string' && value.startsWith('#/')))
      return `${path}: only local references are supported in strict mode`;
  }
  const children: Array<[unknown, string]> = [];
  const properties = schema.properties;
  if (properties !== undefined) {
    if (typeof properties !== 'object' || properties === null) return `${path}: properties is not an object`;
    for (const [key, child] of Object.entries(properties)) children.push([child, `${path}.${key}`]);
  }
  if (typeof schema.additionalProperties === 'object')
    children.push([schema.additionalProperties, `${path}{}`]);
  if (schema.items !== undefined && !Array.isArray(schema.items)) children.push([schema.items, `${path}[]`]);
  for (const union of ['anyOf', 'oneOf'] as const) {
    const branches = schema[union];
    if (Array.isArray(branches))
      branches.forEach((branch, index) => children.push([branch, `${path}|${index}`]));
  }
  for (const definitions of ['$defs', 'definitions'] as const) {
    const defs = schema[definitions];
    if (typeof defs === 'object' && defs !== null)
      for (const [name, def] of Object.entries(defs)) children.push([def, `#/${definitions}/${name}`]);
  }
  for (const [child, childPath] of children) {
    const found = firstUnsupported(child, childPath);
    if (found !== undefined) return found;
  }
  return undefined;
}
