/**
 * Checks a value against a plan compiled from a zod schema (`src/contract/value-check-plan.ts`) or
 * from a tool's JSON Schema, the way zod parses it: the same result, the same issues in the same
 * order, the same messages. It imports nothing, so a workflow can check its input without zod: every
 * run evaluates its workflow's modules again, and zod with Keel's schemas was most of that (about
 * 45 of 62 ms of CPU and 1 MiB of memory per run; BENCHMARKS.md). test/contract/value-check.test.ts
 * compares it with zod on thousands of values.
 */

/** A value checked against a zod schema or JSON Schema, as a node of plain data. */
export type CheckNode =
  | { type: 'string'; checks?: ValueRule[] }
  | { type: 'number'; checks?: ValueRule[] }
  | { type: 'boolean' }
  | { type: 'null' }
  | { type: 'unknown' }
  | { type: 'literal'; values: readonly (string | number | boolean | null)[] }
  | { type: 'array'; element: CheckNode; checks?: ValueRule[] }
  | {
      type: 'object';
      shape: Readonly<Record<string, CheckNode>>;
      /**
       * `strip` drops unknown keys (`z.object`), `strict` refuses them (`z.strictObject`), `keep`
       * keeps them (`z.looseObject`).
       */
      unknownKeys: 'strip' | 'strict' | 'keep';
      checks?: ValueRule[];
    }
  | { type: 'record'; key: CheckNode; value: CheckNode }
  | { type: 'optional'; inner: CheckNode }
  | { type: 'nullable'; inner: CheckNode }
  | { type: 'default'; inner: CheckNode; value: unknown }
  | { type: 'union'; options: readonly CheckNode[] }
  | { type: 'discriminated'; key: string; options: readonly CheckNode[] };

/** A check after the type matched, in the order the schema declares them. */
export type ValueRule =
  | { kind: 'min_length' | 'max_length'; value: number; message?: string }
  | { kind: 'gte' | 'gt' | 'lte' | 'lt'; value: number; message?: string }
  | { kind: 'int' }
  | { kind: 'regex'; source: string; flags: string; message?: string }
  | { kind: 'trim' }
  /** A rule of {@link RULES}, by name. */
  | { kind: 'rule'; name: string };

/** One problem with a value, as zod reports it. */
export interface CheckIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  /** Whether later checks still run (zod's `continue`). */
  continue?: boolean;
  /** A union's issues per option (`invalid_union`). */
  errors?: CheckIssue[][];
}

/** What a rule finds: paths are relative to the value it checks. */
export interface RuleIssue {
  path: (string | number)[];
  message: string;
}

export type CheckResult<T> = { success: true; data: T } | { success: false; issues: CheckIssue[] };

/** Named checks no JSON Schema keyword says; the zod schemas run the same functions. */
export type Rules = Readonly<Record<string, (value: never) => RuleIssue[]>>;

interface Payload {
  value: unknown;
  issues: CheckIssue[];
}

/** Checks `value` against `node`: its parsed form (defaults in, unknown keys out) or its issues. */
export function checkValue<T>(node: CheckNode, value: unknown, rules: Rules = {}): CheckResult<T> {
  const payload = run(node, { value, issues: [] }, rules);
  return payload.issues.length === 0
    ? { success: true, data: payload.value as T }
    : { success: false, issues: payload.issues };
}

function run(node: CheckNode, payload: Payload, rules: Rules): Payload {
  const parsed = parse(node, payload, rules);
  const checks = 'checks' in node ? node.checks : undefined;
  if (checks === undefined || checks.length === 0) return parsed;
  let stopped = aborted(parsed.issues, 0);
  for (const check of checks) {
    const before = parsed.issues.length;
    if (check.kind === 'min_length' || check.kind === 'max_length') {
      // zod measures anything with a length, even after the type failed, unless told to stop.
      if (parsed.issues.some((issue) => issue.continue === false)) continue;
      const value = parsed.value as { length?: unknown } | null | undefined;
      if (value === null || value === undefined || value.length === undefined) continue;
    } else if (stopped) continue;
    applyCheck(check, parsed, rules);
    if (!stopped && parsed.issues.length > before) stopped = aborted(parsed.issues, before);
  }
  return parsed;
}

function parse(node: CheckNode, payload: Payload, rules: Rules): Payload {
  const input = payload.value;
  switch (node.type) {
    case 'string':
      if (typeof input !== 'string') payload.issues.push(invalidType('string', input));
      return payload;
    case 'number':
      if (typeof input !== 'number' || !Number.isFinite(input))
        payload.issues.push(invalidType('number', input));
      return payload;
    case 'boolean':
      if (typeof input !== 'boolean') payload.issues.push(invalidType('boolean', input));
      return payload;
    case 'null':
      if (input !== null) payload.issues.push(invalidType('null', input));
      return payload;
    case 'unknown':
      return payload;
    case 'literal':
      if (!node.values.includes(input as never)) payload.issues.push(invalidValue(node.values));
      return payload;
    case 'array':
      return parseArray(node.element, payload, rules);
    case 'object':
      return parseObject(node, payload, rules);
    case 'record':
      return parseRecord(node, payload, rules);
    case 'optional':
      if (input === undefined) return payload;
      return run(node.inner, payload, rules);
    case 'nullable':
      if (input === null) return payload;
      return run(node.inner, payload, rules);
    case 'default': {
      if (input === undefined) {
        payload.value = shallowClone(node.value);
        return payload;
      }
      const result = run(node.inner, payload, rules);
      if (result.value === undefined) result.value = shallowClone(node.value);
      return result;
    }
    case 'union':
      return parseUnion(node.options, payload, rules);
    case 'discriminated': {
      if (!isObject(input)) {
        payload.issues.push(invalidType('object', input));
        return payload;
      }
      const tag = input[node.key];
      const option = node.options.find((candidate) => tagValues(candidate, node.key).includes(tag));
      if (option !== undefined) return run(option, payload, rules);
      const options = node.options.flatMap((candidate) => tagValues(candidate, node.key));
      payload.issues.push({
        code: 'invalid_union',
        path: [node.key],
        message: `Invalid discriminator value. Expected ${options.map((value) => `'${String(value)}'`).join(' | ')}`,
        errors: [],
      });
      return payload;
    }
  }
}

function parseArray(element: CheckNode, payload: Payload, rules: Rules): Payload {
  const input = payload.value;
  if (!Array.isArray(input)) {
    payload.issues.push(invalidType('array', input));
    return payload;
  }
  const output: unknown[] = Array(input.length);
  payload.value = output;
  input.forEach((item: unknown, index) => {
    const result = run(element, { value: item, issues: [] }, rules);
    payload.issues.push(...prefix(index, result.issues));
    output[index] = result.value;
  });
  return payload;
}

function parseObject(node: Extract<CheckNode, { type: 'object' }>, payload: Payload, rules: Rules): Payload {
  const input = payload.value;
  if (!isObject(input)) {
    payload.issues.push(invalidType('object', input));
    return payload;
  }
  const output: Record<string, unknown> = {};
  payload.value = output;
  for (const [key, field] of Object.entries(node.shape)) {
    if (key === '__proto__') continue;
    const result = run(field, { value: input[key], issues: [] }, rules);
    const present = key in input;
    const optin = optIn(field);
    const optional = optOut(field);
    if (!present && optional && optin === 'optional') continue;
    if (result.issues.length > 0) {
      if (optin !== undefined && optional && !present) continue;
      payload.issues.push(...prefix(key, result.issues));
    }
    if (!present && optin === undefined) {
      if (result.issues.length === 0)
        payload.issues.push({ ...invalidType('nonoptional', undefined), path: [key] });
      continue;
    }
    // A field given as undefined stays (zod keeps it); a default is never undefined (planOf refuses one).
    if (result.value !== undefined || present) output[key] = result.value;
  }
  if (node.unknownKeys === 'keep') {
    for (const key in input)
      if (!Object.hasOwn(node.shape, key) && key !== '__proto__') output[key] = input[key];
  } else if (node.unknownKeys === 'strict') {
    const unknown: string[] = [];
    for (const key in input) if (!Object.hasOwn(node.shape, key)) unknown.push(key);
    if (unknown.length > 0) {
      payload.issues.push({
        code: 'unrecognized_keys',
        path: [],
        message: `Unrecognized key${unknown.length > 1 ? 's' : ''}: ${unknown.map(primitive).join(', ')}`,
        continue: true,
      });
    }
  }
  return payload;
}

function parseRecord(node: Extract<CheckNode, { type: 'record' }>, payload: Payload, rules: Rules): Payload {
  const input = payload.value;
  if (!isPlainObject(input)) {
    payload.issues.push(invalidType('record', input));
    return payload;
  }
  const output: Record<string, unknown> = {};
  payload.value = output;
  for (const key of Object.keys(input)) {
    if (key === '__proto__') continue;
    const keyResult = run(node.key, { value: key, issues: [] }, rules);
    if (keyResult.issues.length > 0) {
      payload.issues.push({ code: 'invalid_key', path: [key], message: 'Invalid key in record' });
      continue;
    }
    const result = run(node.value, { value: input[key], issues: [] }, rules);
    payload.issues.push(...prefix(key, result.issues));
    output[keyResult.value as string] = result.value;
  }
  return payload;
}

function parseUnion(options: readonly CheckNode[], payload: Payload, rules: Rules): Payload {
  if (options.length === 1) return run(options[0]!, payload, rules);
  const results: Payload[] = [];
  for (const option of options) {
    const result = run(option, { value: payload.value, issues: [] }, rules);
    if (result.issues.length === 0) {
      payload.value = result.value;
      return payload;
    }
    results.push(result);
  }
  const going = results.filter((result) => !aborted(result.issues, 0));
  if (going.length === 1) return going[0]!;
  payload.issues.push({
    code: 'invalid_union',
    path: [],
    message: 'Invalid input',
    errors: results.map((result) => result.issues),
  });
  return payload;
}

function applyCheck(check: ValueRule, payload: Payload, rules: Rules): void {
  const value = payload.value;
  switch (check.kind) {
    case 'trim':
      payload.value = (value as string).trim();
      return;
    case 'min_length':
    case 'max_length': {
      const sized = value as string | unknown[];
      const length = typeof sized === 'string' ? [...sized].length : sized.length;
      const min = check.kind === 'min_length';
      if (min ? length >= check.value : length <= check.value) return;
      const origin = Array.isArray(value) ? 'array' : typeof value === 'string' ? 'string' : 'unknown';
      const unit = origin === 'array' ? ' items' : origin === 'string' ? ' characters' : '';
      const what = unit === '' ? 'to be' : 'to have';
      payload.issues.push({
        code: min ? 'too_small' : 'too_big',
        path: [],
        message:
          check.message ??
          `Too ${min ? 'small' : 'big'}: expected ${origin} ${what} ${min ? '>=' : '<='}${check.value}${unit}`,
        continue: true,
      });
      return;
    }
    case 'gte':
    case 'gt':
    case 'lte':
    case 'lt': {
      const number = value as number;
      const passes =
        check.kind === 'gte'
          ? number >= check.value
          : check.kind === 'gt'
            ? number > check.value
            : check.kind === 'lte'
              ? number <= check.value
              : number < check.value;
      if (passes) return;
      const small = check.kind === 'gte' || check.kind === 'gt';
      const sign = `${small ? '>' : '<'}${check.kind.endsWith('e') ? '=' : ''}`;
      payload.issues.push({
        code: small ? 'too_small' : 'too_big',
        path: [],
        message:
          check.message ?? `Too ${small ? 'small' : 'big'}: expected number to be ${sign}${check.value}`,
        continue: true,
      });
      return;
    }
    case 'int': {
      const number = value as number;
      if (!Number.isInteger(number)) {
        payload.issues.push({ ...invalidType('int', number), continue: false });
      } else if (!Number.isSafeInteger(number)) {
        const big = number > 0;
        payload.issues.push({
          code: big ? 'too_big' : 'too_small',
          path: [],
          message: big
            ? `Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}`
            : `Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}`,
          continue: true,
        });
      }
      return;
    }
    case 'regex': {
      if (new RegExp(check.source, check.flags).test(value as string)) return;
      payload.issues.push({
        code: 'invalid_format',
        path: [],
        message: check.message ?? `Invalid string: must match pattern /${check.source}/${check.flags}`,
        continue: true,
      });
      return;
    }
    case 'rule': {
      const rule = rules[check.name];
      if (rule === undefined) throw new Error(`No rule named ${check.name}`);
      for (const issue of rule(value as never)) {
        payload.issues.push({ code: 'custom', path: issue.path, message: issue.message, continue: true });
      }
    }
  }
}

/** zod's `optin`: whether a field may be absent (`optional`) or is filled in when absent (`defaulted`). */
function optIn(node: CheckNode): 'optional' | 'defaulted' | undefined {
  if (node.type === 'optional') return optIn(node.inner) === 'defaulted' ? 'defaulted' : 'optional';
  if (node.type === 'default') return 'defaulted';
  if (node.type === 'nullable') return optIn(node.inner);
  if (node.type !== 'union') return undefined;
  const ins = node.options.map(optIn);
  if (ins.includes('defaulted')) return 'defaulted';
  return ins.some((value) => value !== undefined) ? 'optional' : undefined;
}

/** zod's `optout`: whether the parsed field may be absent. */
function optOut(node: CheckNode): boolean {
  if (node.type === 'optional') return true;
  if (node.type === 'nullable') return optOut(node.inner);
  return node.type === 'union' && node.options.some(optOut);
}

/** The values an option of a discriminated union takes at `key`. */
function tagValues(option: CheckNode, key: string): readonly unknown[] {
  if (option.type !== 'object') return [];
  const field = option.shape[key];
  return field?.type === 'literal' ? field.values : [];
}

function aborted(issues: readonly CheckIssue[], from: number): boolean {
  for (let index = from; index < issues.length; index += 1) if (issues[index]!.continue !== true) return true;
  return false;
}

function prefix(part: PropertyKey, issues: CheckIssue[]): CheckIssue[] {
  for (const issue of issues) issue.path.unshift(part);
  return issues;
}

function invalidType(expected: string, input: unknown): CheckIssue {
  return {
    code: 'invalid_type',
    path: [],
    message: `Invalid input: expected ${expected}, received ${typeName(input)}`,
  };
}

function invalidValue(values: readonly unknown[]): CheckIssue {
  return {
    code: 'invalid_value',
    path: [],
    message:
      values.length === 1
        ? `Invalid input: expected ${primitive(values[0])}`
        : `Invalid option: expected one of ${values.map(primitive).join('|')}`,
  };
}

/** The type zod names in its messages: `array`, `null`, `NaN`, `Infinity`. */
function typeName(input: unknown): string {
  if (typeof input === 'number')
    return Number.isNaN(input) ? 'NaN' : Number.isFinite(input) ? 'number' : String(input);
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'array';
  return typeof input;
}

function primitive(value: unknown): string {
  return typeof value === 'string' ? `"${value}"` : String(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isObject(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === null || prototype === Object.prototype;
}

function shallowClone(value: unknown): unknown {
  if (Array.isArray(value)) return [...(value as unknown[])];
  if (isObject(value)) return { ...value };
  return value;
}
