import { z } from 'zod';

/** What the workflow needs to know about a tool: no code, no schema, just routing metadata. */
export const ToolInfo = z.object({
  name: z.string(),
  description: z.string(),
  /** Has no side effects; may run beside other read-only calls. */
  readOnly: z.boolean(),
  timeoutSeconds: z.number().positive(),
});
export type ToolInfo = z.infer<typeof ToolInfo>;

/** What a worker tells a run about itself once, through an activity, so it is recorded in history. */
export const WorkerProfile = z.object({
  tools: z.array(ToolInfo),
  defaultModel: z.string(),
});
export type WorkerProfile = z.infer<typeof WorkerProfile>;
