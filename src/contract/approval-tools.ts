import type { z } from 'zod';
import { approvalsOutsideTools } from './rules.js';

/**
 * Adds an issue for each of `approvalTools` that is not among `tools` (when those are given): approval
 * can only be asked for a tool that is offered. `whose` says whose tools, as in "this run's tools".
 */
export function refuseApprovalsOutsideTools(
  value: { tools?: readonly string[] | undefined; approvalTools?: readonly string[] | undefined },
  context: z.RefinementCtx,
  whose: string,
): void {
  for (const issue of approvalsOutsideTools(value, whose))
    context.addIssue({ code: 'custom', path: issue.path, message: issue.message });
}
