import type { ModelFailureType } from '../contract/failure-type.js';

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
