import { z } from 'zod';
import { DEFAULT_OUTPUT_RETRIES, MAX_OUTPUT_RETRIES } from './defaults.js';

export { outputJsonText } from './text.js';

/**
 * The shape a run's final answer must have: a JSON Schema, sent to the model as the Responses API's
 * `text.format` (`json_schema`). The answer is parsed and checked against it; an answer that does
 * not match goes back to the model with its problems up to `retries` times, then the run fails with
 * `KeelError.InvalidOutput`. A `completed` result carries the value as `output`.
 */
export const RunOutput = z.strictObject({
  name: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, _ or -')
    .default('output')
    .describe("The schema's name, as the model sees it (default output)."),
  // Root `type: "object"`, the one root the Responses API takes for a `json_schema` format.
  schema: z
    .looseObject({ type: z.literal('object') })
    .describe('JSON Schema (draft 2020-12) of the final answer; its root is an object.'),
  strict: z
    .boolean()
    .optional()
    .describe(
      "Ask the model server to keep to the schema exactly (OpenAI's strict structured outputs). Default: true when the schema allows it (every object closed with additionalProperties false and all its properties required), else false.",
    ),
  retries: z
    .number()
    .int()
    .min(0)
    .max(MAX_OUTPUT_RETRIES)
    .optional()
    .describe(
      `Times an answer that does not match is sent back to the model with its problems before the run fails with KeelError.InvalidOutput (default ${DEFAULT_OUTPUT_RETRIES}).`,
    ),
});
/** An output declaration as a caller writes it. */
export type RunOutputArgs = z.input<typeof RunOutput>;
export type RunOutput = z.output<typeof RunOutput>;
