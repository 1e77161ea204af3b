import type { ModelFailureType } from '../contract/failure-type.js';

/**
 * A response id as a message shows it: the server wrote it (a gateway's run to hundreds of
 * characters), so a long one is cut, and it is kept on one line.
 */
export function shownId(id: unknown): string {
  const text = String(id).replace(/\s+/gu, ' ');
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}

/**
 * A model call failed. `type` is a dotted failure type (`ModelError.RateLimit`) that Temporal records,
 * `retryable` decides whether Temporal tries again, and `retryAfterMs` is the server's requested delay.
 * The message is already safe to store in history: no key, no stack.
 */
export class ModelError extends Error {
  override name = 'ModelError';

  constructor(
    readonly type: ModelFailureType,
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}
