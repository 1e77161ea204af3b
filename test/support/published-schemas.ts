import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';

/** Where the JSON Schemas other services validate against are checked in. */
export const schemasDirectory = path.resolve(import.meta.dirname, '../../docs/schemas');

/** The published schemas by file name. */
export type PublishedSchemaFile =
  | 'run-input.schema.json'
  | 'run-result.schema.json'
  | 'run-state.schema.json'
  | 'eval-file.schema.json'
  | 'eval-report.schema.json';

// Strict: a keyword Ajv does not know, or a type mix-up in the schema, is an error rather than ignored.
const ajv = new Ajv2020({ strict: true, allErrors: true });
const validators = new Map<PublishedSchemaFile, ValidateFunction>();

/** The compiled checked-in schema: the file other services use, not what zod would generate now. */
function validator(file: PublishedSchemaFile): ValidateFunction {
  let validate = validators.get(file);
  if (validate === undefined) {
    validate = ajv.compile(JSON.parse(readFileSync(path.join(schemasDirectory, file), 'utf8')) as object);
    validators.set(file, validate);
  }
  return validate;
}

/** Validates `value` against a published schema, as a client in another language would; [] when valid. */
export function schemaErrors(file: PublishedSchemaFile, value: unknown): string[] {
  const validate = validator(file);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath || '(root)'} ${error.message ?? ''}`);
}
