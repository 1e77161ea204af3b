import { z } from 'zod';
import type { CheckNode, ValueRule } from './value-check.js';

/** The rule names of the checks made by {@link withRule}. */
const ruleNames = new WeakMap<object, string>();

/**
 * `schema.superRefine` with a rule of `RULES` (`src/contract/rules.ts`), named so that
 * {@link planOf} can write the same check into a plan: one function for zod and for the workflow.
 */
export function withRule<Schema extends z.ZodType>(
  schema: Schema,
  name: string,
  rule: (value: z.output<Schema>) => readonly { path: (string | number)[]; message: string }[],
): Schema {
  const refined = schema.superRefine((value, context) => {
    for (const issue of rule(value))
      context.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });
  const check = refined._zod.def.checks?.at(-1);
  if (check === undefined) throw new Error('superRefine added no check');
  ruleNames.set(check, name);
  return refined;
}

interface Def {
  type: string;
  checks?: { _zod: { def: CheckDef } }[];
  [key: string]: unknown;
}
interface CheckDef {
  check: string;
  error?: (issue: object) => unknown;
  [key: string]: unknown;
}

/** The source of zod's own `trim()`, the one overwrite a plan can say. */
const TRIM = String((z.string().trim()._zod.def.checks![0]!._zod.def as unknown as { tx: unknown }).tx);

/**
 * The plan of a zod schema for `checkValue`: plain data a workflow can hold without zod. Throws on
 * anything the plan cannot say the way zod does (a transform, a lazy schema, a string format), so a
 * schema that outgrows it fails `npm run schemas`, not a run.
 */
export function planOf(schema: z.ZodType, where = '(root)'): CheckNode {
  const def = schema._zod.def as unknown as Def;
  const checks = (def.checks ?? []).map((check) => ruleOf(check, def.type, where));
  const withChecks = <Node extends CheckNode>(node: Node): Node =>
    checks.length > 0 ? { ...node, checks } : node;
  const inner = (key: string): z.ZodType => def[key] as z.ZodType;
  const noChecks = (): void => {
    if (checks.length > 0) throw new Error(`${where}: checks on a ${def.type} are not planned`);
  };
  switch (def.type) {
    case 'string':
    case 'number':
      return withChecks({ type: def.type });
    case 'boolean':
    case 'null':
    case 'unknown':
      noChecks();
      return { type: def.type };
    case 'literal':
      noChecks();
      return { type: 'literal', values: def.values as (string | number | boolean | null)[] };
    case 'enum':
      noChecks();
      return { type: 'literal', values: Object.values(def.entries as object) as string[] };
    case 'array':
      return withChecks({ type: 'array', element: planOf(inner('element'), `${where}[]`) });
    case 'object': {
      const catchall = def.catchall as z.ZodType | undefined;
      const catchallType = catchall === undefined ? undefined : (catchall._zod.def as unknown as Def).type;
      if (catchallType !== undefined && catchallType !== 'never' && catchallType !== 'unknown')
        throw new Error(`${where}: only strict, stripping and loose objects are planned`);
      const shape = def.shape as Record<string, z.ZodType>;
      return withChecks({
        type: 'object',
        shape: Object.fromEntries(
          Object.entries(shape).map(([key, field]) => [key, planOf(field, `${where}.${key}`)]),
        ),
        unknownKeys: catchallType === 'never' ? 'strict' : catchallType === 'unknown' ? 'keep' : 'strip',
      });
    }
    case 'record': {
      noChecks();
      const key = inner('keyType');
      if ((key._zod as { values?: unknown }).values !== undefined)
        throw new Error(`${where}: records with enumerated keys are not planned`);
      return {
        type: 'record',
        key: planOf(key, `${where}{key}`),
        value: planOf(inner('valueType'), `${where}{}`),
      };
    }
    case 'optional':
    case 'nullable':
      noChecks();
      return { type: def.type, inner: planOf(inner('innerType'), where) };
    case 'default': {
      noChecks();
      const value: unknown = def.defaultValue;
      if (value === undefined) throw new Error(`${where}: a default of undefined is not planned`);
      return { type: 'default', inner: planOf(inner('innerType'), where), value: structuredClone(value) };
    }
    case 'union': {
      noChecks();
      const options = (def.options as z.ZodType[]).map((option, index) =>
        planOf(option, `${where}|${index}`),
      );
      if (typeof def.discriminator === 'string') {
        if (def.unionFallback === true) throw new Error(`${where}: unionFallback is not planned`);
        return { type: 'discriminated', key: def.discriminator, options };
      }
      if (def.inclusive === false) throw new Error(`${where}: exclusive unions are not planned`);
      return { type: 'union', options };
    }
    default:
      throw new Error(`${where}: a zod ${def.type} is not planned`);
  }
}

function ruleOf(check: { _zod: { def: CheckDef } }, type: string, where: string): ValueRule {
  const def = check._zod.def;
  if (
    (def as { when?: unknown }).when !== undefined &&
    def.check !== 'min_length' &&
    def.check !== 'max_length'
  )
    throw new Error(`${where}: a check with its own 'when' is not planned`);
  if ((def as { abort?: unknown }).abort === true)
    throw new Error(`${where}: aborting checks are not planned`);
  const message = messageOf(def);
  const withMessage = <Rule extends ValueRule>(rule: Rule): Rule =>
    message === undefined ? rule : { ...rule, message };
  switch (def.check) {
    case 'min_length':
      return withMessage({ kind: 'min_length', value: def.minimum as number });
    case 'max_length':
      return withMessage({ kind: 'max_length', value: def.maximum as number });
    case 'greater_than':
      return withMessage({ kind: def.inclusive === true ? 'gte' : 'gt', value: numberOf(def.value, where) });
    case 'less_than':
      return withMessage({ kind: def.inclusive === true ? 'lte' : 'lt', value: numberOf(def.value, where) });
    case 'number_format':
      if (def.format !== 'safeint' || message !== undefined)
        throw new Error(`${where}: number format ${String(def.format)} is not planned`);
      return { kind: 'int' };
    case 'string_format': {
      const pattern = def.pattern as RegExp | undefined;
      if (def.format !== 'regex' || pattern === undefined)
        throw new Error(`${where}: string format ${String(def.format)} is not planned`);
      if (pattern.global || pattern.sticky)
        throw new Error(`${where}: a global or sticky pattern is not planned`);
      return withMessage({ kind: 'regex', source: pattern.source, flags: pattern.flags });
    }
    case 'overwrite': {
      if (type !== 'string' || String(def.tx) !== TRIM)
        throw new Error(`${where}: only trim() is planned among overwrites`);
      return { kind: 'trim' };
    }
    case 'custom': {
      const name = ruleNames.get(check);
      if (name === undefined)
        throw new Error(`${where}: a refinement not made with withRule() cannot be planned`);
      return { kind: 'rule', name };
    }
    default:
      throw new Error(`${where}: a ${def.check} check is not planned`);
  }
}

/** The message a check was given (`.min(1, 'must describe the task')`), if any. */
function messageOf(def: CheckDef): string | undefined {
  if (def.error === undefined) return undefined;
  const made = def.error({});
  if (typeof made === 'string') return made;
  const message = (made as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : undefined;
}

function numberOf(value: unknown, where: string): number {
  if (typeof value !== 'number') throw new Error(`${where}: a bound of ${typeof value} is not planned`);
  return value;
}

/**
 * The source of a module exporting each schema's plan as a constant (`RUN_INPUT`, …), typed by the
 * schema's output, for `npm run schemas`.
 */
export function renderPlans(sources: Readonly<Record<string, z.ZodType>>, header: string): string {
  const constants = Object.entries(sources).map(
    ([name, schema]) => `export const ${name}: CheckNode = ${JSON.stringify(planOf(schema, name))};`,
  );
  return `${header}\nimport type { CheckNode } from '../contract/value-check.js';\n\n${constants.join('\n\n')}\n`;
}
