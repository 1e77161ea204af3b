import { z } from 'zod';
import { RunLimits } from './run-input.js';

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
  /** Limits the worker's operator configured for runs that set none. Absent in older histories. */
  limits: RunLimits.partial().optional(),
  /** Whether Keel's search attributes are registered, so the run may set them. Absent in older histories. */
  searchAttributes: z.boolean().optional(),
});
export type WorkerProfile = z.infer<typeof WorkerProfile>;
