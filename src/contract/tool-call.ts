import { z } from 'zod';

/** One function call the model asked for, exactly as it arrived (arguments still a JSON string). */
export const ToolCall = z.object({
  callId: z.string().min(1),
  name: z.string(),
  argumentsJson: z.string(),
});
export type ToolCall = z.infer<typeof ToolCall>;
