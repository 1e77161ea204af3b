import type { AcquireOptions } from './rate-limit.js';

/** A granted model call, given back once the call is over; a shared pacer's release may take a round trip. */
export interface ModelPacerPermit {
  /** Gives the slot back and corrects the token budget by the call's actual usage, when known. */
  release(actualTokens?: number): void | Promise<void>;
}

/**
 * What paces a worker's model calls: the per-worker `ModelCallLimiter`, or the `PgModelLimiter` whose
 * limits hold across every worker sharing its database and pool name.
 */
export interface ModelPacer {
  /** Waits for a slot and for the token budget to cover `estimatedTokens`. */
  acquire(estimatedTokens: number, options?: AcquireOptions): Promise<ModelPacerPermit>;
}
