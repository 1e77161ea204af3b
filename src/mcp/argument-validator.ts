import { Ajv } from 'ajv';
import type { ErrorObject, Options } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { JsonSchema } from '../tools/strict-schema.js';

/** Checks decoded arguments against a server's schema: one `path: message` line per problem, none when valid. */
export type ArgumentValidator = (value: unknown) => string[];

/** Lines of problems reported at most; a hostile model's garbage should not make a huge observation. */
const MAX_ISSUES = 20;

const OPTIONS: Options = {
  allErrors: true,
  // Server schemas use keywords and formats of their own; formats are the server's to check.
  strict: false,
  validateFormats: false,
  logger: false,
};

/**
 * Compiles a server's input schema into a validator, with the JSON Schema draft the schema declares
 * (draft-07 when it says so, 2020-12 otherwise, as MCP specifies). A fresh compiler per schema keeps
 * one tool's `$id`s from clashing with another's. Throws when the schema is not valid JSON Schema.
 */
export function compileArgumentValidator(schema: JsonSchema, declaredDraft: unknown): ArgumentValidator {
  const draft07 = typeof declaredDraft === 'string' && /draft-0[4-7]/.test(declaredDraft);
  const compiler = draft07 ? new Ajv(OPTIONS) : new Ajv2020(OPTIONS);
  const validate = compiler.compile(schema);
  return (value) => {
    if (validate(value)) return [];
    const errors = validate.errors ?? [];
    const lines = errors.slice(0, MAX_ISSUES).map(describeError);
    if (errors.length > MAX_ISSUES) lines.push(`… and ${errors.length - MAX_ISSUES} more problems`);
    return lines;
  };
}

function describeError(error: ErrorObject): string {
  const path =
    error.instancePath === ''
      ? '(root)'
      : error.instancePath
          .slice(1)
          .split('/')
          .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
          .map((part, index) => (/^\d+$/.test(part) ? `[${part}]` : `${index === 0 ? '' : '.'}${part}`))
          .join('');
  const extra =
    error.keyword === 'additionalProperties'
      ? ` (${JSON.stringify(String((error.params as { additionalProperty?: unknown }).additionalProperty).slice(0, 64))})`
      : '';
  return `${path}: ${error.message ?? 'is invalid'}${extra}`;
}
