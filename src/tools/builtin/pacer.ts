import { setImmediate as nextTurn } from 'node:timers/promises';

/** Milliseconds of synchronous work between two turns of the event loop. */
const SLICE_MS = 10;

/**
 * Lets a long loop on the main thread give the event loop a turn every {@link SLICE_MS} ms, so
 * heartbeats, cancellation and other calls go on meanwhile; each turn also checks the signal. The
 * loop asks {@link Pacer.due} cheaply (a clock read every 1,024 asks) and awaits {@link Pacer.pause}.
 */
export class Pacer {
  #asks = 0;
  #sliceStart = performance.now();

  constructor(private readonly signal: AbortSignal) {}

  /** Whether the current slice is used up. */
  due(): boolean {
    return (++this.#asks & 1023) === 0 && performance.now() - this.#sliceStart > SLICE_MS;
  }

  /** Yields to the event loop, then throws the signal's reason if the call was aborted meanwhile. */
  async pause(): Promise<void> {
    await nextTurn();
    this.signal.throwIfAborted();
    this.#sliceStart = performance.now();
  }
}
