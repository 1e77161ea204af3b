import { z } from 'zod';
import { TOOL_NAME_PATTERN } from './defaults.js';
import { ObservationError } from './observation.js';

/** What a recorded call's tool answered, without the call id (a replayed call has its own). */
export const RecordedAnswer = z.discriminatedUnion('ok', [
  z.strictObject({ ok: z.literal(true), output: z.string() }),
  z.strictObject({
    ok: z.literal(false),
    error: ObservationError,
    message: z.string(),
    preview: z.string().optional(),
  }),
]);
export type RecordedAnswer = z.infer<typeof RecordedAnswer>;

/** One tool call of a recorded run, and what its tool answered then. */
export const RecordedCall = z.strictObject({
  name: z.string().regex(TOOL_NAME_PATTERN, 'is not a valid tool name'),
  argumentsJson: z.string().max(1_000_000),
  answer: RecordedAnswer,
});
export type RecordedCall = z.infer<typeof RecordedCall>;

/**
 * What a replayed run does with a call the recording has no answer for: `refuse` answers the model
 * `not_recorded`; `run` runs it if the tool is read-only or named in `allowTools`, else refuses it;
 * `diverge` ends the run as failed with `KeelError.Diverged`.
 */
export const UnmatchedCallPolicy = z.enum(['refuse', 'run', 'diverge']);
export type UnmatchedCallPolicy = z.infer<typeof UnmatchedCallPolicy>;

/**
 * A run that replays a recorded run's tools (an eval case): a call whose tool and arguments (as
 * canonical JSON) equal a recorded call's gets that call's answer without running the tool; the n-th
 * such call gets the n-th recorded answer, then the last one again.
 */
export const RunReplay = z.strictObject({
  calls: z.array(RecordedCall).max(10_000),
  unmatched: UnmatchedCallPolicy.default('refuse'),
  /** Side-effecting tools that `run` may run all the same; read-only tools need no mention. */
  allowTools: z.array(z.string().regex(TOOL_NAME_PATTERN, 'is not a valid tool name')).max(128).default([]),
});
/** A replay as a caller writes it (defaults optional). */
export type RunReplayArgs = z.input<typeof RunReplay>;
export type RunReplay = z.output<typeof RunReplay>;
