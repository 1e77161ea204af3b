import type { z } from 'zod';

/**
 * Adds an issue for each of `approvalTools` that is not among `tools` (when those are given): approval
 * can only be asked for a tool that is offered. `whose` says whose tools, as in "this run's tools".
 */
export function refuseApprovalsOutsideTools(
  value: { tools?: readonly string[] | undefined; approvalTools?: readonly string[] | undefined },
  context: z.RefinementCtx,
  whose: string,
): void {
  for (const [index, name] of (value.approvalTools ?? []).entries()) {
    if (value.tools !== undefined && !value.tools.includes(name)) {
      context.addIssue({
        code: 'custom',
        path: ['approvalTools', index],
        message: `names ${name}, which is not among ${whose} tools`,
      });
    }
  }
}
