import type { RuleIssue } from './value-check.js';

/**
 * The checks of Keel's contract that no JSON Schema keyword says, as plain functions: the zod
 * schemas run them (`withRule`), and so does a workflow through its plans (`checkValue`), which
 * imports no zod. Each returns its issues, paths relative to the value it checks.
 */

/** A list of names that repeats none. */
export function distinctToolNames(names: readonly string[]): RuleIssue[] {
  return new Set(names).size === names.length ? [] : [{ path: [], message: 'must not repeat a tool' }];
}

/**
 * An issue for each of `approvalTools` that is not among `tools` (when those are given): approval
 * can only be asked for a tool that is offered. `whose` says whose tools, as in "this run's tools".
 */
export function approvalsOutsideTools(
  value: { tools?: readonly string[] | undefined; approvalTools?: readonly string[] | undefined },
  whose: string,
): RuleIssue[] {
  const issues: RuleIssue[] = [];
  for (const [index, name] of (value.approvalTools ?? []).entries()) {
    if (value.tools !== undefined && !value.tools.includes(name))
      issues.push({
        path: ['approvalTools', index],
        message: `names ${name}, which is not among ${whose} tools`,
      });
  }
  return issues;
}

/** What a run input must also be: an idle timeout only in a session, approvals only for its tools. */
export function runInputRules(input: {
  session: boolean;
  idleTimeoutSeconds?: number | undefined;
  tools?: readonly string[] | undefined;
  approvalTools?: readonly string[] | undefined;
}): RuleIssue[] {
  const issues: RuleIssue[] = [];
  if (input.idleTimeoutSeconds !== undefined && !input.session)
    issues.push({
      path: ['idleTimeoutSeconds'],
      message: 'applies only to a session: set session to true as well',
    });
  return [...issues, ...approvalsOutsideTools(input, "this run's")];
}

/** An eval's cases have distinct ids. */
export function distinctCaseIds(input: { cases: readonly { caseId: string }[] }): RuleIssue[] {
  const seen = new Set<string>();
  const issues: RuleIssue[] = [];
  input.cases.forEach((entry, index) => {
    if (seen.has(entry.caseId))
      issues.push({ path: ['cases', index, 'caseId'], message: 'repeats a case id' });
    seen.add(entry.caseId);
  });
  return issues;
}

/** Every rule a plan may name, by name. */
export const RULES = {
  distinctToolNames,
  runInputRules,
  distinctCaseIds,
} as const;
