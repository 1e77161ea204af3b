import { RunResult } from './run-result.js';
import { runEndingFailure } from './run-ending.js';

// Apart from run-ending.ts so that the workflow, which only ends runs, never builds the result schema.
/**
 * The run result a run's failure carries, when the failure is a run's ending: `details[0]` parses as
 * a result that ends with exactly this failure type. `undefined` for any other failure (an invalid
 * input, a bug, a failure some other workflow sent): the caller then has no result.
 */
export function runResultOfFailure(
  type: string | undefined,
  details: readonly unknown[] | undefined,
): RunResult | undefined {
  const parsed = RunResult.safeParse(details?.[0]);
  if (!parsed.success) return undefined;
  return runEndingFailure(parsed.data)?.type === type ? parsed.data : undefined;
}
