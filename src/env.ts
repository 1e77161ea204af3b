import { z } from 'zod';
import { ConfigError } from './config-error.js';

/**
 * Settings from environment variables, validated with zod. Every value is trimmed, an empty value
 * counts as unset, and a malformed one is a {@link ConfigError} that names the variable, says what
 * it must be and quotes what it was.
 */

/** One environment variable: how to read it. */
export interface Variable<T> {
  parse(name: string, raw: string | undefined): T;
}

function variable<T>(schema: z.ZodType<T>, expected: string): Variable<T> {
  return {
    parse(name, raw) {
      const value = raw?.trim() || undefined;
      const parsed = schema.safeParse(value);
      if (parsed.success) return parsed.data;
      throw new ConfigError(`${name} must be ${expected}, not ${JSON.stringify(value ?? '')}`);
    },
  };
}

/** Optional free text. */
export const optionalText = variable(z.string().optional(), 'text');

/** Text with a default. */
export const textOr = (fallback: string): Variable<string> => variable(z.string().default(fallback), 'text');

/** A number of seconds of at least `minimum`, with a default. */
export const secondsOr = (fallback: number, minimum = 0): Variable<number> =>
  variable(z.coerce.number().finite().min(minimum).default(fallback), 'a number of seconds');

/** An optional whole number within bounds. */
export const optionalInteger = (minimum: number, maximum: number): Variable<number | undefined> =>
  variable(
    z.coerce.number().int().min(minimum).max(maximum).optional(),
    `a whole number from ${minimum} to ${maximum}`,
  );

/** One of a few words, optional. */
export const optionalChoice = <const Choice extends string>(
  choices: readonly [Choice, ...Choice[]],
): Variable<Choice | undefined> =>
  variable(z.enum(choices).optional(), choices.map((choice) => JSON.stringify(choice)).join(' or '));

/** An http(s) URL, optional. */
export const optionalUrl = variable(z.url({ protocol: /^https?$/ }).optional(), 'an http:// or https:// URL');

/** A comma-separated value split into its non-empty, trimmed entries. */
const commaSeparated = z.string().transform((value) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== ''),
);

/** A comma-separated list of names matching `pattern`, optional. */
export const optionalNames = (pattern: RegExp): Variable<string[] | undefined> =>
  variable(
    commaSeparated.pipe(z.array(z.string().regex(pattern)).min(1)).optional(),
    'a comma-separated list of names',
  );

/** A comma-separated list of free-form entries (hosts, programs), optional. */
export const optionalList = variable(
  commaSeparated.pipe(z.array(z.string()).min(1)).optional(),
  'a comma-separated list',
);

/** `true`/`false` (also `1`/`0`, `yes`/`no`), with a default. */
export const flagOr = (fallback: boolean): Variable<boolean> =>
  variable(
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'])
      .transform((value) => ['true', '1', 'yes'].includes(value))
      .default(fallback),
    '"true" or "false"',
  );

/** An optional number of at least `minimum` (seconds, bytes, counts). */
export const optionalNumber = (minimum: number, integer = false): Variable<number | undefined> =>
  variable(
    (integer ? z.coerce.number().int() : z.coerce.number()).finite().min(minimum).optional(),
    `${integer ? 'a whole number' : 'a number'} of at least ${minimum}`,
  );

/** JSON text parsed, then checked by `schema`. */
const json = <T>(schema: z.ZodType<T>) =>
  z
    .string()
    .transform((value, context) => {
      try {
        return JSON.parse(value) as unknown;
      } catch {
        context.addIssue({ code: 'custom', message: 'not JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);

/** A JSON object of string values (extra environment variables), optional. */
export const optionalStringMap = variable(
  json(z.record(z.string(), z.string())).optional(),
  'a JSON object of strings, e.g. {"GIT_AUTHOR_NAME":"Keel"}',
);

/** A JSON value checked by `schema`, optional; `example` shows the expected shape in the error. */
export const optionalJson = <T>(schema: z.ZodType<T>, example: string): Variable<T | undefined> =>
  variable(json(schema).optional(), `JSON like ${example}`);

/** The values of every variable in `spec`; the first malformed one throws. */
export function readEnvironment<Spec extends Record<string, Variable<unknown>>>(
  spec: Spec,
  environment: NodeJS.ProcessEnv,
): { [Name in keyof Spec]: Spec[Name] extends Variable<infer T> ? T : never } {
  return Object.fromEntries(
    Object.entries(spec).map(([name, reader]) => [name, reader.parse(name, environment[name])]),
  ) as { [Name in keyof Spec]: Spec[Name] extends Variable<infer T> ? T : never };
}
