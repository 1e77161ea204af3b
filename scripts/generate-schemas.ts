/**
 * Writes the published JSON Schemas (the run contract, the eval file and report) to docs/schemas/,
 * generated from their zod schemas, and the plans a workflow checks values against
 * (src/workflows/input-plans.ts). Run with `npm run schemas` (`tsx scripts/generate-schemas.ts`) after
 * changing RunInput, RunResult, RunState, EvalFileSchema or EvalReport, and commit the result; test/contract/schemas.test.ts
 * fails while the files are stale.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import { renderPublishedSchemas } from '../src/eval/json-schemas.js';
import { renderInputPlans } from '../src/workflows/plan-sources.js';

const directory = path.resolve(import.meta.dirname, '../docs/schemas');

await mkdir(directory, { recursive: true });
for (const [file, content] of Object.entries(renderPublishedSchemas())) {
  const target = path.join(directory, file);
  // Formatted as `npm run lint` expects, so the generator and `prettier --check` never disagree.
  const formatted = await format(content, { ...(await resolveConfig(target)), filepath: target });
  await writeFile(target, formatted);
  console.log(`wrote ${path.relative(process.cwd(), target)}`);
}

const plans = path.resolve(import.meta.dirname, '../src/workflows/input-plans.ts');
await writeFile(
  plans,
  await format(renderInputPlans(), { ...(await resolveConfig(plans)), filepath: plans }),
);
console.log(`wrote ${path.relative(process.cwd(), plans)}`);
