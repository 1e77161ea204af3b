/*
 * What every command writes and how it fails, with nothing heavy imported: `keel --help` and usage
 * errors load this and not the Temporal client (see main.ts).
 */

/**
 * Exit codes: 0 done (a run completed), 1 error, 2 usage error, 3 the run ended without completing,
 * 4 an eval's case failed.
 */
export const EXIT = { ok: 0, error: 1, usage: 2, notCompleted: 3, casesFailed: 4 } as const;

/** A mistake in how the CLI was called; the message says what to type instead. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * A command failed in a way it has a name for: `code` is stable kebab-case (the `--json` error's
 * `code`), `exitCode` one of {@link EXIT}, `extra` goes beside the message in the JSON error.
 */
export class CliFailure extends Error {
  override name = 'CliFailure';
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: number = EXIT.error,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/**
 * The one shape of every error a command prints with `--json`, on stdout:
 * `{"error": {"code": "<kebab-case>", "message": "<one line>", ...extra}}`.
 */
export interface JsonError {
  error: { code: string; message: string; [field: string]: unknown };
}

/** Where the CLI writes: progress and results to stdout, notes to stderr (so `--json` stays parseable). */
export interface Output {
  json: boolean;
  line: (text: string) => void;
  note: (text: string) => void;
  data: (value: unknown) => void;
  /** One value as one line of JSON on stdout (a stream of records, with or without `--json`). */
  record: (value: unknown) => void;
  /**
   * A failure: the message on stderr always, and with `--json` the {@link JsonError} on stdout (its
   * message on one line).
   */
  error: (code: string, message: string, extra?: Record<string, unknown>) => void;
}

/** The output of a command; `json` when `--json` was given. */
export function output(json: boolean): Output {
  return {
    json,
    line: (text) => {
      if (!json) process.stdout.write(text + '\n');
    },
    note: (text) => process.stderr.write(text + '\n'),
    data: (value) => process.stdout.write(JSON.stringify(value, null, json ? 2 : undefined) + '\n'),
    record: (value) => process.stdout.write(JSON.stringify(value) + '\n'),
    error: (code, message, extra = {}) => {
      if (json) {
        const error: JsonError = { error: { ...extra, code, message: oneLine(message) } };
        process.stdout.write(JSON.stringify(error, null, 2) + '\n');
      }
      process.stderr.write(message + '\n');
    },
  };
}

/** A message of several lines (a list of input issues, say) as one: the lines joined by "; ". */
function oneLine(message: string): string {
  return message
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join('; ')
    .replace(/:;/gu, ':');
}

/**
 * An error's message with the reason underneath: the Temporal client's `ServiceError` says only what
 * failed ("Failed to list workflows"); the server's own words are in its cause's `details`.
 */
export function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { details?: unknown; message?: unknown } | undefined;
  const detail =
    typeof cause?.details === 'string' && cause.details !== ''
      ? cause.details
      : typeof cause?.message === 'string'
        ? cause.message
        : undefined;
  return detail === undefined || error.message.includes(detail)
    ? error.message
    : `${error.message}: ${detail}`;
}
