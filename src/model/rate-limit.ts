import { ConfigError } from '../config-error.js';

/** Options for {@link ModelCallLimiter}. Each limit is off when absent. */
export interface ModelCallLimiterOptions {
  /** Most model calls in flight at once on this worker; unlimited when absent. */
  maxConcurrent?: number;
  /** Tokens (input + output) per minute this worker may spend; unpaced when absent. */
  tokensPerMinute?: number;
  /** Longest gap between `onWait` calls while a caller waits; 1000 ms when absent. */
  waitTickMs?: number;
  /** Monotonic clock in ms; `performance.now` when absent. Injectable for tests. */
  now?: () => number;
  /** Resolves after `milliseconds`, rejects once `signal` aborts; `setTimeout` when absent. */
  sleep?: (milliseconds: number, signal: AbortSignal) => Promise<void>;
}

/** Per-call options for {@link ModelCallLimiter.acquire}. */
export interface AcquireOptions {
  /** Aborting gives up the wait: the promise rejects with `signal.reason` and holds nothing. */
  signal?: AbortSignal;
  /** Called at least every `waitTickMs` while waiting, so an activity can heartbeat. A throw ends the wait. */
  onWait?: () => void;
}

/** A granted model call: one concurrency slot plus the estimated tokens taken from the bucket. */
export interface ModelCallPermit {
  /**
   * Gives the slot back and corrects the bucket by `actualTokens - estimatedTokens` when the actual usage is
   * known. Idempotent: only the first call counts. Throws a RangeError for a negative or non-finite count,
   * after giving the slot back.
   */
  release(actualTokens?: number): void;
}

/** A snapshot for logs and tests; `tokensAvailable` is null when unpaced and negative after overspending. */
export interface ModelCallLimiterStats {
  inFlight: number;
  waiting: number;
  tokensAvailable: number | null;
}

/** Default gap between `onWait` calls: well inside any sensible activity heartbeat timeout. */
export const DEFAULT_WAIT_TICK_MS = 1_000;

const MS_PER_MINUTE = 60_000;

interface Waiter {
  readonly tokens: number;
  grant(): void;
  fail(error: Error): void;
}

/**
 * Limits the model calls of one worker, so that a burst of runs waits its turn instead of failing with 429s.
 *
 * Callers queue in one FIFO line: the head is served as soon as a slot is free and the token bucket
 * covers its estimate, and nobody overtakes it, so neither a slot nor a large token budget can be
 * starved by later, smaller calls. The bucket holds `tokensPerMinute` and refills continuously. A call
 * estimated above the whole capacity could never be covered, so it goes through once the bucket is
 * full and drives it negative; later callers then wait for the debt to refill.
 */
export class ModelCallLimiter {
  readonly #maxConcurrent: number;
  readonly #capacity: number | undefined;
  readonly #waitTickMs: number;
  readonly #now: () => number;
  readonly #sleep: (milliseconds: number, signal: AbortSignal) => Promise<void>;
  readonly #queue: Waiter[] = [];
  #inFlight = 0;
  #tokens: number;
  #refilledAt: number;
  #refillTimer: AbortController | undefined;

  constructor(options: ModelCallLimiterOptions = {}) {
    this.#maxConcurrent = positiveInteger(options, 'maxConcurrent') ?? Infinity;
    this.#capacity = positiveInteger(options, 'tokensPerMinute');
    this.#waitTickMs = positiveInteger(options, 'waitTickMs') ?? DEFAULT_WAIT_TICK_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#sleep = options.sleep ?? abortableSleep;
    this.#tokens = this.#capacity ?? 0;
    this.#refilledAt = this.#now();
  }

  /** Waits for a slot and for the bucket to cover `estimatedTokens`, then returns the permit to release. */
  acquire(estimatedTokens: number, options: AcquireOptions = {}): Promise<ModelCallPermit> {
    if (!Number.isFinite(estimatedTokens) || estimatedTokens < 0)
      return Promise.reject(
        new RangeError(`estimatedTokens must be a finite number of at least 0, got ${estimatedTokens}`),
      );
    const { signal, onWait } = options;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      const ticks = new AbortController();
      const onAbort = (): void => waiter.fail(abortReason(signal!));
      const settle = (): boolean => {
        if (ticks.signal.aborted) return false;
        ticks.abort();
        signal?.removeEventListener('abort', onAbort);
        return true;
      };
      const waiter: Waiter = {
        tokens: estimatedTokens,
        grant: () => {
          if (settle()) resolve(this.#permit(estimatedTokens));
        },
        fail: (error) => {
          if (!settle()) return;
          this.#queue.splice(this.#queue.indexOf(waiter), 1);
          reject(error);
          // The head may have been what held the others back.
          this.#pump();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(waiter);
      this.#pump();
      if (onWait !== undefined && !ticks.signal.aborted)
        this.#tick(onWait, waiter, ticks.signal).catch((error: Error) => waiter.fail(error));
    });
  }

  /** In flight, waiting, and tokens in the bucket right now (rounded down). */
  stats(): ModelCallLimiterStats {
    this.#refill();
    return {
      inFlight: this.#inFlight,
      waiting: this.#queue.length,
      tokensAvailable: this.#capacity === undefined ? null : Math.floor(this.#tokens),
    };
  }

  #permit(estimatedTokens: number): ModelCallPermit {
    let released = false;
    return {
      release: (actualTokens?: number) => {
        if (released) return;
        released = true;
        this.#inFlight -= 1;
        const known = actualTokens !== undefined && Number.isFinite(actualTokens) && actualTokens >= 0;
        if (known && this.#capacity !== undefined) {
          this.#refill();
          this.#tokens = Math.min(this.#capacity, this.#tokens - (actualTokens - estimatedTokens));
        }
        this.#pump();
        if (actualTokens !== undefined && !known)
          throw new RangeError(`actualTokens must be a finite number of at least 0, got ${actualTokens}`);
      },
    };
  }

  /** Serves the queue from the head for as long as it can, then arranges to be called when that changes. */
  #pump(): void {
    this.#refillTimer?.abort();
    this.#refillTimer = undefined;
    this.#refill();
    for (let head = this.#queue[0]; head !== undefined; head = this.#queue[0]) {
      if (this.#inFlight >= this.#maxConcurrent) return; // a release pumps again
      if (this.#capacity !== undefined) {
        const needed = Math.min(head.tokens, this.#capacity);
        if (this.#tokens < needed)
          return this.#pumpAfter(((needed - this.#tokens) * MS_PER_MINUTE) / this.#capacity);
        this.#tokens -= head.tokens;
      }
      this.#queue.shift();
      this.#inFlight += 1;
      head.grant();
    }
  }

  #pumpAfter(milliseconds: number): void {
    const timer = new AbortController();
    this.#refillTimer = timer;
    // At least 1 ms, so that a rounding shortfall costs a millisecond rather than a busy loop.
    this.#sleep(Math.max(1, Math.ceil(milliseconds)), timer.signal).then(
      () => {
        if (this.#refillTimer === timer) this.#pump();
      },
      () => undefined,
    );
  }

  #refill(): void {
    const now = this.#now();
    if (this.#capacity !== undefined) {
      const refilled = (Math.max(0, now - this.#refilledAt) * this.#capacity) / MS_PER_MINUTE;
      this.#tokens = Math.min(this.#capacity, this.#tokens + refilled);
    }
    this.#refilledAt = now;
  }

  async #tick(onWait: () => void, waiter: Waiter, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.#sleep(this.#waitTickMs, signal);
      } catch {
        return;
      }
      if (signal.aborted) return;
      try {
        onWait();
      } catch (error) {
        waiter.fail(error as Error);
      }
    }
  }
}

/** A rough token estimate of a request body: characters / 4, at least 1. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** What leaving each option unset does, so a validation error offers the alternative. */
const UNSET_MEANS = {
  maxConcurrent: 'Leave it unset for no concurrency limit.',
  tokensPerMinute: 'Leave it unset for no token pacing.',
  waitTickMs: `Leave it unset for ${DEFAULT_WAIT_TICK_MS} ms.`,
};

function positiveInteger(
  options: ModelCallLimiterOptions,
  name: 'maxConcurrent' | 'tokensPerMinute' | 'waitTickMs',
): number | undefined {
  const value = options[name];
  if (value === undefined || (Number.isSafeInteger(value) && value > 0)) return value;
  throw new ConfigError(
    `The model call limiter's ${name} must be a positive integer, got ${String(value)}. ${UNSET_MEANS[name]}`,
  );
}

/** Why the wait ended: the signal's reason, which `abort()` without one sets to an AbortError anyway. */
export function abortReason(signal: AbortSignal): Error {
  return (
    (signal.reason as Error | undefined) ??
    new DOMException('The wait for a model call was aborted.', 'AbortError')
  );
}

/** Resolves after `milliseconds` with `setTimeout`, rejects with the reason once `signal` aborts. */
export function abortableSleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
