import { z } from 'zod';
import { ToolCall } from './tool-call.js';

/** Input of the `executeTool` activity. */
export const ToolRequest = z.object({
  call: ToolCall,
  /** Tools offered in this run; calls to other names get an `unknown_tool` observation. */
  allowedTools: z.array(z.string()),
  /** Characters of output the model may see. */
  outputCharLimit: z.number().int().positive(),
  /** Seconds the call may take, when the run overrides the tool's own timeout. */
  timeoutSeconds: z.number().positive().optional(),
  /**
   * Approval step, after the arguments are validated: `check` asks the tool's own approval rule and
   * returns `approvalRequired` instead of running when it says so; `require` always returns
   * `approvalRequired`; `granted` runs the call a person approved. Absent: no approval is involved.
   */
  approval: z.enum(['check', 'require', 'granted']).optional(),
});
export type ToolRequest = z.infer<typeof ToolRequest>;

/** The `executeTool` answer when a `conditional` tool wants approval for these arguments. Nothing ran. */
export const ApprovalRequired = z.object({ callId: z.string(), approvalRequired: z.literal(true) });
export type ApprovalRequired = z.infer<typeof ApprovalRequired>;
