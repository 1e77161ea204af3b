import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';

/** OpenAI's request schema for `POST /responses`, vendored by scripts/vendor-openai-schema.ts. */
export const createResponseSchemaFile = path.resolve(
  import.meta.dirname,
  '../fixtures/openai/create-response.schema.json',
);

/**
 * Open Responses' request schema for `POST /responses` (`CreateResponseBody`), vendored by the same
 * script: the specification many servers besides OpenAI's follow. Every request is checked against
 * both.
 */
export const openResponsesSchemaFile = path.resolve(
  import.meta.dirname,
  '../fixtures/openresponses/create-response.schema.json',
);

interface VendoredSchema {
  'x-source': { commit: string; apiVersion: string };
  $defs: Record<string, unknown>;
}

// Not strict: OpenAPI's `discriminator` is documentation here (every `oneOf` branch pins its `type`),
// and Ajv's own discriminator support refuses the document's mappings.
// Formats (`uri`, `float`) are not checked: Ajv knows none of them without a plugin.
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
const ID = 'https://keel.test/openai/create-response.schema.json';
const OPEN_RESPONSES_ID = 'https://keel.test/openresponses/create-response.schema.json';

interface Validators {
  body: ValidateFunction;
  openResponses: { validate: ValidateFunction; source: string };
  item: ValidateFunction;
  /** Item schemas by the `type` they accept, to say why an item of that type failed. */
  byType: Map<string, Array<{ name: string; validate: ValidateFunction }>>;
  source: string;
}
let compiled: Validators | undefined;

/**
 * Compiles the schema now (about a second of blocking work, more on a loaded machine) rather than on
 * the first request, when a worker in the same process may be heartbeating against a short timeout.
 */
export function loadCreateResponseSchema(): void {
  validators();
}

function validators(): Validators {
  if (compiled !== undefined) return compiled;
  const schema = JSON.parse(readFileSync(createResponseSchemaFile, 'utf8')) as VendoredSchema;
  ajv.addSchema({ ...schema, $id: ID });
  const byType: Validators['byType'] = new Map();
  for (const name of itemSchemaNames(schema.$defs)) {
    const type = (schema.$defs[name] as { properties?: { type?: { enum?: unknown[] } } }).properties?.type;
    for (const value of type?.enum ?? []) {
      const list = byType.get(String(value)) ?? [];
      list.push({ name, validate: ajv.compile({ $ref: `${ID}#/$defs/${name}` }) });
      byType.set(String(value), list);
    }
  }
  const open = JSON.parse(readFileSync(openResponsesSchemaFile, 'utf8')) as VendoredSchema;
  ajv.addSchema({ ...open, $id: OPEN_RESPONSES_ID });
  compiled = {
    body: ajv.getSchema(ID)!,
    openResponses: {
      validate: ajv.getSchema(OPEN_RESPONSES_ID)!,
      source: `openresponses ${open['x-source'].commit.slice(0, 12)}`,
    },
    item: ajv.compile({ $ref: `${ID}#/$defs/InputItem` }),
    byType,
    source: `openai-openapi ${schema['x-source'].commit.slice(0, 12)} (API ${schema['x-source'].apiVersion})`,
  };
  return compiled;
}

/** The schemas an input item may match: the branches of `InputItem` and of its `Item` branch. */
function itemSchemaNames(definitions: Record<string, unknown>): string[] {
  const branches = (name: string): string[] =>
    ((definitions[name] as { oneOf?: Array<{ $ref?: string }> }).oneOf ?? []).flatMap((branch) =>
      branch.$ref === undefined ? [] : [branch.$ref.replace('#/$defs/', '')],
    );
  return branches('InputItem').flatMap((name) => (name === 'Item' ? branches('Item') : [name]));
}

const describeErrors = (errors: ErrorObject[] | null | undefined): string =>
  (errors ?? []).map((error) => `${error.instancePath || '(root)'} ${error.message ?? ''}`).join('; ');

/**
 * Why `body` is not a valid request under OpenAI's published schema (`CreateResponse`) and under Open
 * Responses' (`CreateResponseBody`); [] when it is valid under both.
 * Each input item that matches no input item schema is named on its own (its type and role), since
 * the `oneOf` errors for the whole body only say that nothing matched.
 */
export function createResponseErrors(body: unknown): string[] {
  const { openResponses } = validators();
  const open = openResponses.validate(body)
    ? []
    : [
        `not a valid CreateResponseBody under ${openResponses.source}: ${describeErrors(openResponses.validate.errors)}`,
      ];
  return [...openAIErrors(body), ...open];
}

function openAIErrors(body: unknown): string[] {
  const { body: validateBody, item: validateItem, byType, source } = validators();
  if (validateBody(body)) return [];
  const problems: string[] = [];
  const input = (body as { input?: unknown }).input;
  if (Array.isArray(input)) {
    input.forEach((item: unknown, index) => {
      if (validateItem(item)) return;
      const { type = 'message', role } = (item ?? {}) as { type?: unknown; role?: unknown };
      const candidates = byType.get(String(type)) ?? [];
      const reasons = candidates.map(({ name, validate }) =>
        validate(item) ? `${name}: valid alone` : `as ${name}: ${describeErrors(validate.errors)}`,
      );
      problems.push(
        `input[${index}] (type ${JSON.stringify(type)}${role === undefined ? '' : `, role ${JSON.stringify(role)}`}) ` +
          `matches no InputItem${reasons.length > 0 ? `; ${reasons.join('; ')}` : ': no schema has this type'}`,
      );
    });
  }
  if (problems.length === 0) problems.push(describeErrors(validateBody.errors));
  return problems.map((problem) => `not a valid CreateResponse under ${source}: ${problem}`);
}

/**
 * Why `value` is not what Open Responses says `POST /responses` answers: a `ResponseResource` (the
 * JSON answer, and the response a stream's last event carries) or one `StreamingEvent`; [] when it is.
 */
export function openResponsesAnswerErrors(
  kind: 'ResponseResource' | 'StreamingEvent',
  value: unknown,
): string[] {
  validators();
  const validate = ajv.getSchema(`${OPEN_RESPONSES_ID}#/$defs/${kind}`)!;
  if (validate(value)) return [];
  return [`not a valid ${kind} under Open Responses: ${describeErrors(validate.errors)}`];
}
