import { z } from 'zod';
import { contractSchemas, renderSchemas } from '../contract/json-schemas.js';
import type { PublishedSchema } from '../contract/json-schemas.js';
import { EvalFileSchema } from './eval-file.js';
import { EvalReport } from './report.js';

/** What `keel eval --json` prints: the eval's id, `cancelled` when it was, and its report. */
export const PrintedEvalReport = EvalReport.extend({
  evalId: z.string(),
  /** The eval was cancelled: the cases it never started are in the report as never started. */
  cancelled: z.literal(true).optional(),
});

/** Every schema published in docs/schemas/: the run contract's, the eval file's and the eval report's. */
export const publishedSchemas: readonly PublishedSchema[] = [
  ...contractSchemas,
  {
    file: 'eval-file.schema.json',
    schema: EvalFileSchema,
    io: 'input',
    title: 'Keel eval file',
    description:
      'The file keel eval reads its cases from (docs/evals.md). Set "$schema" to this file for an editor to check it. ' +
      'keel eval also refuses a case with more or less than one of run, history, query and task, limit on ' +
      'a case that is no query, repeated case ids, and match judge without a judge.',
  },
  {
    file: 'eval-report.schema.json',
    schema: PrintedEvalReport,
    io: 'output',
    title: 'Keel eval report',
    description: 'The report keel eval --json prints: the eval id, a report for every case, and the totals.',
  },
];

/** The published JSON Schemas, file name → file content (see {@link renderSchemas}). */
export function renderPublishedSchemas(): Record<string, string> {
  return renderSchemas(publishedSchemas);
}
