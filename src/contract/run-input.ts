import { z } from 'zod';
import {
  DEFAULT_HEARTBEAT_SECONDS,
  DEFAULT_MAX_TURNS,
  DEFAULT_MODEL_TIMEOUT_SECONDS,
  DEFAULT_OUTPUT_CAP,
  MAX_TURNS_LIMIT,
  TOOL_NAME_PATTERN,
} from './defaults.js';

/** Everything a caller may set when starting a run. Unknown fields are refused, so a typo is an error. */
export const RunInput = z.strictObject({
  /** What the agent should do, in plain language. */
  task: z.string().trim().min(1, 'must describe the task').max(200_000),
  /** System-level instructions, re-sent on every turn. A sensible default is used when absent. */
  instructions: z.string().max(200_000).optional(),
  /** Model name; the worker's default when absent. */
  model: z.string().trim().min(1).max(200).optional(),
  /** Model turns before the run stops with `max_turns`. */
  maxTurns: z.number().int().min(1).max(MAX_TURNS_LIMIT).default(DEFAULT_MAX_TURNS),
  /** Names of the worker's tools offered to the model; all of them when absent. */
  tools: z
    .array(z.string().regex(TOOL_NAME_PATTERN, 'is not a valid tool name'))
    .max(128)
    .refine((names) => new Set(names).size === names.length, 'must not repeat a tool')
    .optional(),
  /** Let the model ask for several calls in one turn. Read-only calls then run concurrently. */
  parallelToolCalls: z.boolean().default(false),
  /** Upper bound on output tokens per turn (reasoning included). */
  maxOutputTokens: z.number().int().min(16).optional(),
  /** Reasoning effort for reasoning models. */
  reasoningEffort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).optional(),
  /** Characters of one tool output the model sees before it is cut to a preview. */
  observationCharLimit: z.number().int().min(100).max(500_000).default(DEFAULT_OUTPUT_CAP),
  /** Seconds one model turn may take. */
  modelTimeoutSeconds: z.number().min(1).max(3600).default(DEFAULT_MODEL_TIMEOUT_SECONDS),
  /** Seconds without a heartbeat before an activity is retried on another worker. */
  heartbeatTimeoutSeconds: z.number().min(1).max(600).default(DEFAULT_HEARTBEAT_SECONDS),
});
/** A run input as a caller writes it (defaults optional). */
export type RunInputArgs = z.input<typeof RunInput>;
/** A run input after validation, defaults filled in. */
export type RunInput = z.output<typeof RunInput>;
