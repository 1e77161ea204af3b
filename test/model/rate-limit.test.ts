import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
import { estimateTokens, ModelCallLimiter } from '../../src/model/rate-limit.js';
import type { ModelCallLimiterOptions, ModelCallPermit } from '../../src/model/rate-limit.js';

/** A clock and timer that move only when the test says so. */
class FakeTime {
  current = 0;
  readonly #timers: { due: number; resolve(): void }[] = [];

  readonly now = (): number => this.current;

  readonly sleep = (milliseconds: number, signal: AbortSignal): Promise<void> =>
    new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason as Error);
      const timer = { due: this.current + milliseconds, resolve };
      this.#timers.push(timer);
      signal.addEventListener(
        'abort',
        () => {
          this.#timers.splice(this.#timers.indexOf(timer), 1);
          reject(signal.reason as Error);
        },
        { once: true },
      );
    });

  /** Timers still waiting to fire. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Moves the clock forward, firing each due timer at its own time and letting its reactions run. */
  async advance(milliseconds: number): Promise<void> {
    const target = this.current + milliseconds;
    for (;;) {
      await flush();
      const next = this.#timers.filter((timer) => timer.due <= target).sort((a, b) => a.due - b.due)[0];
      if (next === undefined) break;
      this.#timers.splice(this.#timers.indexOf(next), 1);
      this.current = next.due;
      next.resolve();
    }
    this.current = target;
    await flush();
  }
}

/** Lets every pending promise reaction run; the limiter itself never waits on real time. */
function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Records when a promise settles, so a test can ask "has it yet?" without waiting on it. */
function watch<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

function limiter(options: Omit<ModelCallLimiterOptions, 'now' | 'sleep'>) {
  const time = new FakeTime();
  return { time, limiter: new ModelCallLimiter({ ...options, now: time.now, sleep: time.sleep }) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('ModelCallLimiter', () => {
  it('grants every call at once when no limit is set', async () => {
    const { time, limiter: calls } = limiter({});
    const permits = [calls.acquire(1_000_000), calls.acquire(5), calls.acquire(0)].map(watch);
    await flush();

    expect(permits.every((permit) => permit.settled && permit.error === undefined)).toBe(true);
    expect(calls.stats()).toEqual({ inFlight: 3, waiting: 0, tokensAvailable: null });
    expect(time.pending).toBe(0);
  });

  it('keeps at most maxConcurrent calls in flight and serves waiters first come, first served', async () => {
    const { limiter: calls } = limiter({ maxConcurrent: 2 });
    const granted: string[] = [];
    const permits = new Map<string, ModelCallPermit>();
    for (const name of ['a', 'b', 'c', 'd', 'e'])
      // A failure shows up in `granted`, where the test looks, instead of as an unhandled rejection.
      calls.acquire(1).then(
        (permit) => {
          granted.push(name);
          permits.set(name, permit);
        },
        (error: unknown) => granted.push(`${name} failed: ${String(error)}`),
      );
    await flush();
    expect(granted).toEqual(['a', 'b']);
    expect(calls.stats()).toMatchObject({ inFlight: 2, waiting: 3 });

    permits.get('b')!.release();
    await flush();
    expect(granted).toEqual(['a', 'b', 'c']);

    permits.get('a')!.release();
    permits.get('c')!.release();
    await flush();
    expect(granted).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(calls.stats()).toMatchObject({ inFlight: 2, waiting: 0 });
  });

  it('counts only the first release of a permit', async () => {
    const { limiter: calls } = limiter({ maxConcurrent: 1, tokensPerMinute: 1_000 });
    const first = await calls.acquire(100);
    const second = watch(calls.acquire(1));
    const third = watch(calls.acquire(1));

    first.release(300);
    first.release(300);
    first.release();
    await flush();

    expect(second.settled).toBe(true);
    expect(third.settled).toBe(false);
    expect(calls.stats()).toEqual({ inFlight: 1, waiting: 1, tokensAvailable: 1_000 - 300 - 1 });
  });

  it('rejects an aborted waiter with the abort reason, drops it from the queue and leaks no slot', async () => {
    const { time, limiter: calls } = limiter({ maxConcurrent: 1 });
    const holder = await calls.acquire(1);
    const controller = new AbortController();
    const ticks: number[] = [];
    const aborted = watch(
      calls.acquire(1, { signal: controller.signal, onWait: () => ticks.push(time.current) }),
    );
    const next = watch(calls.acquire(1));
    await flush();
    expect(calls.stats()).toMatchObject({ inFlight: 1, waiting: 2 });

    const reason = new Error('run cancelled');
    controller.abort(reason);
    await flush();
    expect(aborted).toMatchObject({ settled: true, error: reason });
    expect(calls.stats()).toMatchObject({ inFlight: 1, waiting: 1 });

    holder.release();
    await flush();
    expect(next.settled).toBe(true);
    expect(calls.stats()).toMatchObject({ inFlight: 1, waiting: 0 });
    await time.advance(10_000);
    expect(ticks).toEqual([]);
  });

  it('rejects with an AbortError when the signal aborts without a reason, or was aborted before the call', async () => {
    const { limiter: calls } = limiter({ maxConcurrent: 1 });
    await calls.acquire(1);
    const controller = new AbortController();
    const waiting = calls.acquire(1, { signal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });

    const reason = new Error('already gone');
    await expect(calls.acquire(1, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    const { limiter: free } = limiter({});
    await expect(free.acquire(1, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(free.stats()).toMatchObject({ inFlight: 0, waiting: 0 });
  });

  it('paces calls by the token bucket: a call waits until the refill covers its estimate', async () => {
    // 600 tokens a minute: 10 tokens a second.
    const { time, limiter: calls } = limiter({ tokensPerMinute: 600 });
    await calls.acquire(600);
    expect(calls.stats().tokensAvailable).toBe(0);

    const second = watch(calls.acquire(100));
    await time.advance(9_999);
    expect(second.settled).toBe(false);
    expect(calls.stats()).toMatchObject({ waiting: 1, tokensAvailable: 99 });

    await time.advance(1);
    expect(second.settled).toBe(true);
    expect(calls.stats()).toMatchObject({ inFlight: 2, waiting: 0, tokensAvailable: 0 });
    expect(time.pending).toBe(0);
  });

  it('lets a call estimated above the whole budget through once the bucket is full, driving it negative', async () => {
    // 100 tokens a minute.
    const { time, limiter: calls } = limiter({ tokensPerMinute: 100 });
    const first = watch(calls.acquire(250));
    await flush();
    expect(first.settled).toBe(true);
    expect(calls.stats().tokensAvailable).toBe(-150);

    // From -150 back to full is 250 tokens: two and a half minutes.
    const again = watch(calls.acquire(250));
    await time.advance(149_999);
    expect(again.settled).toBe(false);
    await time.advance(1);
    expect(again.settled).toBe(true);
    expect(calls.stats().tokensAvailable).toBe(-150);
  });

  it('does not let small calls overtake a large one waiting for tokens at the head of the line', async () => {
    const { time, limiter: calls } = limiter({ tokensPerMinute: 600 });
    await calls.acquire(600);
    const granted: string[] = [];
    calls.acquire(500).then(
      () => granted.push('large'),
      (error: unknown) => granted.push(`large failed: ${String(error)}`),
    );
    calls.acquire(1).then(
      () => granted.push('small'),
      (error: unknown) => granted.push(`small failed: ${String(error)}`),
    );

    await time.advance(1_000);
    expect(granted).toEqual([]);
    expect(calls.stats()).toMatchObject({ waiting: 2, tokensAvailable: 10 });

    await time.advance(49_000);
    expect(granted).toEqual(['large']);
    await time.advance(100);
    expect(granted).toEqual(['large', 'small']);
  });

  it('lets the next caller in when the aborted waiter was the one holding the line for tokens', async () => {
    const { time, limiter: calls } = limiter({ tokensPerMinute: 600 });
    await calls.acquire(600);
    const controller = new AbortController();
    const large = watch(calls.acquire(500, { signal: controller.signal }));
    const small = watch(calls.acquire(5));
    await time.advance(499);
    expect(small.settled).toBe(false);

    controller.abort(new Error('cancelled'));
    await flush();
    expect(large.settled).toBe(true);
    expect(small.settled).toBe(false);
    await time.advance(1);
    expect(small.settled).toBe(true);
    expect(time.pending).toBe(0);
  });

  it('corrects the bucket by the actual usage, refunding up to the capacity and charging into debt', async () => {
    const { time, limiter: calls } = limiter({ tokensPerMinute: 600 });
    const overran = await calls.acquire(100);
    overran.release(900);
    expect(calls.stats().tokensAvailable).toBe(600 - 900);

    // The debt means the next call waits 30 s for the bucket to reach 0, plus 1 s for its own 10 tokens.
    const next = watch(calls.acquire(10));
    await time.advance(30_999);
    expect(next.settled).toBe(false);
    await time.advance(1);
    expect(next.settled).toBe(true);

    await time.advance(60_000);
    const underran = await calls.acquire(500);
    expect(calls.stats().tokensAvailable).toBe(100);
    underran.release(20);
    expect(calls.stats().tokensAvailable).toBe(580);
    const refunded = await calls.acquire(50);
    refunded.release(0);
    expect(calls.stats().tokensAvailable).toBe(580);
  });

  it('leaves the estimate standing when released without an actual count', async () => {
    const { limiter: calls } = limiter({ tokensPerMinute: 600 });
    const permit = await calls.acquire(100);
    permit.release();
    expect(calls.stats()).toMatchObject({ inFlight: 0, tokensAvailable: 500 });
  });

  it('calls onWait every tick while waiting and stops once the call is granted', async () => {
    const { time, limiter: calls } = limiter({ maxConcurrent: 1, waitTickMs: 1_000 });
    const holder = await calls.acquire(1);
    const ticks: number[] = [];
    const waiting = watch(calls.acquire(1, { onWait: () => ticks.push(time.current) }));

    await time.advance(999);
    expect(ticks).toEqual([]);
    await time.advance(3_001);
    expect(ticks).toEqual([1_000, 2_000, 3_000, 4_000]);

    holder.release();
    await time.advance(5_000);
    expect(waiting.settled).toBe(true);
    expect(ticks).toHaveLength(4);
    expect(time.pending).toBe(0);
  });

  it('calls onWait while waiting for tokens too', async () => {
    const { time, limiter: calls } = limiter({ tokensPerMinute: 60, waitTickMs: 500 });
    await calls.acquire(60);
    let ticks = 0;
    const waiting = watch(calls.acquire(2, { onWait: () => (ticks += 1) }));
    await time.advance(1_999);
    expect(ticks).toBe(3);
    await time.advance(1);
    expect(waiting.settled).toBe(true);
  });

  it('ends the wait with the error an onWait throws, and gives up the place in line', async () => {
    const { time, limiter: calls } = limiter({ maxConcurrent: 1 });
    const holder = await calls.acquire(1);
    const heartbeatFailed = new Error('heartbeat failed');
    const failing = watch(
      calls.acquire(1, {
        onWait: () => {
          throw heartbeatFailed;
        },
      }),
    );
    const next = watch(calls.acquire(1));
    await time.advance(1_000);
    expect(failing).toMatchObject({ settled: true, error: heartbeatFailed });
    expect(calls.stats()).toMatchObject({ inFlight: 1, waiting: 1 });

    holder.release();
    await flush();
    expect(next.settled).toBe(true);
    expect(time.pending).toBe(0);
  });

  it('heartbeats on real timers by default and clears them when the wait ends', async () => {
    vi.useFakeTimers();
    const calls = new ModelCallLimiter({ maxConcurrent: 1 });
    const holder = await calls.acquire(1);
    const onWait = vi.fn();
    const waiting = calls.acquire(1, { onWait });
    // Awaited below, after the timers ran; until then a rejection must not go unhandled.
    waiting.catch(() => undefined);

    await vi.advanceTimersByTimeAsync(2_500);
    expect(onWait).toHaveBeenCalledTimes(2);
    holder.release();
    (await waiting).release();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('gives the slot back even when released with an unusable actual count, then says so', async () => {
    const { limiter: calls } = limiter({ maxConcurrent: 1, tokensPerMinute: 600 });
    const permit = await calls.acquire(100);
    expect(() => permit.release(Number.NaN)).toThrow(RangeError);
    expect(calls.stats()).toMatchObject({ inFlight: 0, tokensAvailable: 500 });
    expect(() => permit.release(-1)).not.toThrow();
  });

  it('rejects an estimate that is negative or not a number', async () => {
    const { limiter: calls } = limiter({ maxConcurrent: 1 });
    await expect(calls.acquire(-1)).rejects.toThrow(RangeError);
    await expect(calls.acquire(Number.NaN)).rejects.toThrow(/estimatedTokens/);
    expect(calls.stats()).toMatchObject({ inFlight: 0, waiting: 0 });
  });

  it.each([
    ['maxConcurrent', 0],
    ['maxConcurrent', -2],
    ['maxConcurrent', 1.5],
    ['tokensPerMinute', 0],
    ['tokensPerMinute', Number.NaN],
    ['tokensPerMinute', Infinity],
    ['waitTickMs', 0],
  ] as const)('refuses %s = %s with a ConfigError naming the option', (name, value) => {
    const create = () => new ModelCallLimiter({ [name]: value });
    expect(create).toThrow(ConfigError);
    expect(create).toThrow(new RegExp(`${name} must be a positive integer`));
  });
});

describe('estimateTokens', () => {
  it('counts a token per four characters, rounding up, and at least one', () => {
    expect(estimateTokens('')).toBe(1);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
    expect(estimateTokens('x'.repeat(4_000))).toBe(1_000);
  });
});
