import { formatPath } from './format-issues.js';
import { shorten } from './text.js';

/** A node of a tool's strict JSON Schema (see `toStrictParameters`). */
type SchemaNode = { [keyword: string]: unknown };

/** An issue of a `ZodError` or of `checkValue`: what explaining one needs. */
interface Issue {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  /** A union's issues per option. */
  readonly errors?: readonly (readonly Issue[])[];
}

/**
 * Edited arguments as the tool's strict schema wants them: a field a person left out that the
 * schema lets be `null` (an optional field of the tool) is filled in as `null`, in every object the
 * arguments hold, as the model would have sent it. Fields that are there are left as they are.
 */
export function fillOmittedOptionals(schema: SchemaNode, value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = objectBranch(schema)?.items;
    return isNode(items) ? value.map((item) => fillOmittedOptionals(items, item)) : value;
  }
  const node = objectBranch(schema);
  if (node === undefined || !isRecord(value)) return value;
  const properties = isRecord(node.properties) ? node.properties : {};
  const required = Array.isArray(node.required) ? (node.required as unknown[]) : [];
  const filled: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    const child = Object.hasOwn(properties, key) ? properties[key] : undefined;
    filled[key] = isNode(child) ? fillOmittedOptionals(child, field) : field;
  }
  for (const key of required) {
    if (typeof key !== 'string' || Object.hasOwn(value, key)) continue;
    const child = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (isNode(child) && acceptsNull(child)) filled[key] = null;
  }
  return filled;
}

/**
 * One line per problem with edited arguments, naming the field, the type it takes and what was
 * given: `startLine: expected a whole number or null, got "x"`. Problems the type does not explain
 * (a bound, an unknown field) keep zod's message, with what was given.
 */
export function explainArgumentIssues(
  schema: SchemaNode,
  value: unknown,
  error: { readonly issues: readonly Issue[] },
): string[] {
  return innermost(error.issues).map((issue) => {
    const path = formatPath(issue.path);
    const node = nodeAt(schema, issue.path);
    const given = valueAt(value, issue.path);
    if (given.found === false) {
      return `${path}: missing; expected ${node === undefined ? 'a value' : expectedType(node)}`;
    }
    if ((issue.code === 'invalid_type' || issue.code === 'invalid_union') && node !== undefined) {
      return `${path}: expected ${expectedType(node)}, got ${describeValue(given.value)}`;
    }
    if (issue.code === 'unrecognized_keys') return `${path}: ${issue.message}`;
    return `${path}: ${issue.message}, got ${describeValue(given.value)}`;
  });
}

/**
 * The issues to explain: a union's own issue (`expected a list or null`) gives way to the issues
 * inside the branch whose type matched (`edits[0].text: …`), which say what is wrong.
 */
function innermost(issues: readonly Issue[]): Issue[] {
  return issues.flatMap((issue) => {
    if (issue.code !== 'invalid_union') return [issue];
    const inside = issue.errors?.find(
      (branch) => branch.length > 0 && branch.every((inner) => inner.path.length > 0),
    );
    if (inside === undefined) return [issue];
    return innermost(inside.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] })));
  });
}

/** What a schema node takes, in words: `a whole number or null`, `one of "a", "b"`. */
export function expectedType(node: SchemaNode): string {
  const union = node.anyOf ?? node.oneOf;
  if (Array.isArray(union)) {
    return unique(union.filter(isNode).map(expectedType)).join(' or ') || 'a value';
  }
  if ('const' in node) return JSON.stringify(node.const);
  if (Array.isArray(node.enum)) {
    const choices = node.enum.map((choice) => JSON.stringify(choice));
    return choices.length === 1 ? choices[0]! : `one of ${choices.join(', ')}`;
  }
  const types = Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type];
  const words = types.map((type) => TYPE_WORDS[String(type)] ?? String(type));
  return words.length > 0 ? unique(words).join(' or ') : 'a value';
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'a whole number',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  null: 'null',
};

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const json = JSON.stringify(value) ?? typeof value;
  return shorten(json, 80);
}

/** The schema node at `path`, through object properties, array items and union branches. */
function nodeAt(schema: SchemaNode, path: readonly PropertyKey[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = schema;
  for (const part of path) {
    if (node === undefined) return undefined;
    if (typeof part === 'number') {
      const items: unknown = branches(node).find((branch) => isNode(branch.items))?.items;
      node = isNode(items) ? items : undefined;
    } else {
      const owner = branches(node).find(
        (branch) => isRecord(branch.properties) && Object.hasOwn(branch.properties, String(part)),
      );
      const child =
        owner === undefined ? undefined : (owner.properties as Record<string, unknown>)[String(part)];
      node = isNode(child) ? child : undefined;
    }
  }
  return node;
}

function valueAt(
  value: unknown,
  path: readonly PropertyKey[],
): { found: true; value: unknown } | { found: false } {
  let current = value;
  for (const part of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, part))
      return { found: false };
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return { found: true, value: current };
}

/** The node and its union branches, for looking into whichever branch has properties or items. */
function branches(node: SchemaNode): SchemaNode[] {
  const union = node.anyOf ?? node.oneOf;
  return [node, ...(Array.isArray(union) ? union.filter(isNode) : [])];
}

/** The branch of `node` that describes an object or a list, if it has one. */
function objectBranch(node: SchemaNode): SchemaNode | undefined {
  return branches(node).find((branch) => isRecord(branch.properties) || isNode(branch.items));
}

function acceptsNull(node: SchemaNode): boolean {
  const type = node.type;
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true;
  if (Array.isArray(node.enum) && node.enum.includes(null)) return true;
  if ('const' in node && node.const === null) return true;
  const union = node.anyOf ?? node.oneOf;
  return Array.isArray(union) && union.some((branch) => isNode(branch) && acceptsNull(branch));
}

function isNode(value: unknown): value is SchemaNode {
  return isRecord(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unique(words: string[]): string[] {
  return [...new Set(words)];
}
