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
});
export type ToolRequest = z.infer<typeof ToolRequest>;
