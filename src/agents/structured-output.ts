import { z } from 'zod';
import { formatIssues } from '../contract/format-issues.js';
import { RunOutput } from '../contract/run-output.js';
import type { RunOutputArgs } from '../contract/run-output.js';

/**
 * A run's or agent's output declaration (`RunOutput`) from a zod schema of an object: its JSON
 * Schema as the answer's values look (`io: 'output'`), so a zod object is closed and, when every
 * field is required (`.nullable()` rather than `.optional()`), strict. Refinements and transforms do
 * not travel: `KeelClient.waitForOutput` parses the value with the schema itself.
 */
export function structuredOutput(
  schema: z.ZodType,
  options: Omit<RunOutputArgs, 'schema'> = {},
): z.output<typeof RunOutput> {
  const json = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
  // The draft is the one Keel checks with (2020-12); the Responses API takes the schema without it.
  delete json.$schema;
  const parsed = RunOutput.safeParse({ ...options, schema: json });
  if (!parsed.success) throw new TypeError(`Not an output schema: ${formatIssues(parsed.error).join('; ')}`);
  return parsed.data;
}
