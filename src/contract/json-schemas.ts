import { z } from 'zod';
import { RunInput } from './run-input.js';
import { RunResult } from './run-result.js';
import { RunState } from './run-state.js';

/** One JSON Schema published in docs/schemas/, generated from the zod schema that enforces it. */
export interface PublishedSchema {
  file: string;
  schema: z.ZodType;
  /** `input`: what a caller may send (fields with defaults optional); `output`: what Keel returns. */
  io: 'input' | 'output';
  title: string;
  description: string;
}

/** The run contract's schemas; `src/eval/json-schemas.ts` adds the eval file's and report's. */
export const contractSchemas: readonly PublishedSchema[] = [
  {
    file: 'run-input.schema.json',
    schema: RunInput,
    io: 'input',
    title: 'Keel run input',
    description:
      'The single argument of the agentRun workflow. Only task is required; every other field falls back to ' +
      "the worker's configuration or Keel's default. The worker also refuses a task that is only whitespace, " +
      'a tools list that repeats a name, idleTimeoutSeconds without session, and approvalTools that name a ' +
      'tool the tools list leaves out.',
  },
  {
    file: 'run-result.schema.json',
    schema: RunResult,
    io: 'output',
    title: 'Keel run result',
    description:
      'The result of a finished agentRun workflow, tagged on status. A cancelled run has no result: it ends ' +
      'as Canceled in Temporal.',
  },
  {
    file: 'run-state.schema.json',
    schema: RunState,
    io: 'output',
    title: 'Keel run state',
    description:
      'The answer to the state query of an agentRun workflow: its live phase, turn, calls and usage.',
  },
];

/**
 * The published JSON Schemas, file name → file content (pretty-printed, trailing newline). Read from
 * the zod schemas at call time, so `npm run schemas` and the test that checks the checked-in files
 * agree by construction.
 */
export function renderSchemas(
  published: readonly PublishedSchema[] = contractSchemas,
): Record<string, string> {
  return Object.fromEntries(
    published.map(({ file, schema, io, title, description }) => {
      const { $schema, ...rest } = z.toJSONSchema(schema, { io });
      // A URN names the schema without claiming a URL that nobody serves.
      const $id = `urn:keel:${file.replace(/\.schema\.json$/, '')}`;
      const document = { $schema, $id, title, description, ...rest };
      return [file, `${JSON.stringify(document, null, 2)}\n`];
    }),
  );
}
