import { z } from 'zod';

/**
 * Why a tool call produced no normal output. A closed set: the workflow, the model-facing text and
 * tests switch over it exhaustively.
 */
export const ObservationError = z.enum([
  'unknown_tool',
  'invalid_json',
  'invalid_arguments',
  'timeout',
  'tool_error',
  'output_too_large',
  'not_executed',
  'rejected',
  'approval_timeout',
  'workspace_lost',
  'not_recorded',
]);
export type ObservationError = z.infer<typeof ObservationError>;

/** The outcome of one tool call, matched to the call by `callId`. Data, never an exception. */
export const Observation = z.discriminatedUnion('ok', [
  z.object({
    callId: z.string(),
    ok: z.literal(true),
    output: z.string(),
  }),
  z.object({
    callId: z.string(),
    ok: z.literal(false),
    error: ObservationError,
    message: z.string(),
    /** The start of an output that was too large to send whole. */
    preview: z.string().optional(),
  }),
]);
export type Observation = z.infer<typeof Observation>;

export { observationText } from './observation-text.js';
