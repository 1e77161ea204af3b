// Keel's failure types as plain constants, apart from the zod enum in failure-type.ts, so that
// workflow code can name and sort failures without zod.

/** The failure types of the model adapter: what the model server answered, or that it did not answer. */
export const MODEL_FAILURE_TYPES = [
  'ModelError.Authentication',
  'ModelError.BackgroundUnsupported',
  'ModelError.BadRequest',
  'ModelError.ClientError',
  'ModelError.Conflict',
  'ModelError.Connection',
  'ModelError.ConversationNotContinued',
  'ModelError.CreateTimeout',
  'ModelError.EmptyResponse',
  'ModelError.NotFound',
  'ModelError.PermissionDenied',
  'ModelError.PreviousResponseNotFound',
  'ModelError.QuotaExceeded',
  'ModelError.RateLimit',
  'ModelError.ResponseFailed',
  'ModelError.ServerError',
  'ModelError.Timeout',
  'ModelError.Unexpected',
  'ModelError.UnexpectedStatus',
  'ModelError.Unprocessable',
] as const;

/** A failure of the model adapter (see {@link MODEL_FAILURE_TYPES}). */
export type ModelFailureType = (typeof MODEL_FAILURE_TYPES)[number];

/** The failure type of an activity failure whose type Keel does not know (a tool's or plugin's own). */
export const UNKNOWN_FAILURE_TYPE = 'KeelError.UnknownFailure';

/**
 * The failure types of a run that stopped before it finished: a limit or budget ran out, or the
 * model's output was cut off. The run's Temporal execution fails with them (see `runEndingFailure`);
 * a `failed` result's `errorType` is never one of them.
 */
export const STOPPED_FAILURE_TYPES = [
  'KeelError.MaxTurnsExceeded',
  'KeelError.MaxTokensExceeded',
  'KeelError.MaxTimeExceeded',
  'KeelError.MaxCostExceeded',
  'KeelError.IncompleteOutput',
] as const;

/** Keel's own failure types: the run, its input, its updates, and its steps. */
export const KEEL_FAILURE_TYPES = [
  ...STOPPED_FAILURE_TYPES,
  'KeelError.Diverged',
  'KeelError.InvalidInput',
  'KeelError.InvalidOutput',
  'KeelError.GuardrailTripped',
  'KeelError.InvalidUpdate',
  'KeelError.PayloadTooLarge',
  'KeelError.StreamClosing',
  'KeelError.Timeout',
  'KeelError.ToolUnavailable',
  'KeelError.Unexpected',
  UNKNOWN_FAILURE_TYPE,
] as const;

/** Every failure type Keel produces (see `FailureType`). */
export const FAILURE_TYPES = [...MODEL_FAILURE_TYPES, ...KEEL_FAILURE_TYPES] as const;

const KNOWN: ReadonlySet<string> = new Set(FAILURE_TYPES);

/** `type` if it is one of Keel's failure types, else the catch-all {@link UNKNOWN_FAILURE_TYPE}. */
export function toFailureType(type: string | null | undefined): (typeof FAILURE_TYPES)[number] {
  return typeof type === 'string' && KNOWN.has(type)
    ? (type as (typeof FAILURE_TYPES)[number])
    : UNKNOWN_FAILURE_TYPE;
}
