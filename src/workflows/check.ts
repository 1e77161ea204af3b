import { formatIssues } from '../contract/format-issues.js';
import { RULES } from '../contract/rules.js';
import { checkValue } from '../contract/value-check.js';
import type { CheckNode, CheckResult } from '../contract/value-check.js';

/**
 * Checks a value a workflow was given against one of its plans (`input-plans.ts`), with the
 * contract's rules: what the value's zod schema would say, without zod in the workflow.
 */
export function check<T>(plan: CheckNode, value: unknown): CheckResult<T> {
  return checkValue<T>(plan, value, RULES);
}

/** The checked value, or an error naming its issues (where zod's `parse` would throw). */
export function checked<T>(plan: CheckNode, value: unknown): T {
  const result = check<T>(plan, value);
  if (result.success) return result.data;
  throw new Error(`Invalid value:\n${formatIssues(result).join('\n')}`);
}
