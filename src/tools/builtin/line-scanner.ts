import { SCAN_THREAD_SOURCE } from './scan-thread-source.js';
import { ThreadDeadlineError, ThreadFailedError, ThreadPool } from './thread-pool.js';

/** One matching line: its 1-based number and its text, cut to a window around the match when long. */
export interface LineMatch {
  line: number;
  text: string;
}

/** The pattern ran past its time budget on one text: it most likely backtracks catastrophically. */
export class ScanTimeoutError extends Error {
  override name = 'ScanTimeoutError';
}

/** The pattern could not be run to the end on one text: it threw, or its thread ran out of memory. */
export class ScanFailedError extends Error {
  override name = 'ScanFailedError';
}

/**
 * Scans one file's bytes line by line, at most `limit` matching lines. Throws {@link ScanTimeoutError}
 * or {@link ScanFailedError}, or the signal's reason when it aborts.
 */
export type LineScanner = (bytes: Uint8Array, limit: number, signal: AbortSignal) => Promise<LineMatch[]>;

/** How a {@link LineScanner} cuts and bounds its work. */
export interface LineScannerOptions {
  /** Characters of each line that are matched. */
  maxLineChars: number;
  /** Characters of a matching line that are returned. */
  shownChars: number;
  /** Milliseconds one text may take; past that its thread is terminated. */
  budgetMs: number;
}

/**
 * The threads that scan: JavaScript regexes backtrack and run synchronously, so `(a+)+$` on a long
 * line would block the main thread's event loop (heartbeats, cancellation, every other call) for
 * as long as it runs. Two threads bound the CPU and memory a burst of parallel searches can take;
 * each thread's heap is bounded too, and a thread over its limits dies alone.
 */
export const scanThreads = new ThreadPool({
  source: SCAN_THREAD_SOURCE,
  maxThreads: 2,
  idleMs: 10_000,
  resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
});

type ScanReply = { matches: LineMatch[] } | { error: string };

/** A {@link LineScanner} for `pattern` (no `g` or `y` flag), run on {@link scanThreads}. */
export function createLineScanner(pattern: RegExp, options: LineScannerOptions): LineScanner {
  const { source, flags } = pattern;
  return async (bytes, limit, signal) => {
    // A copy of exactly these bytes, moved to the thread: a view may share a larger buffer.
    const copy = new Uint8Array(bytes);
    let reply: ScanReply;
    try {
      reply = (await scanThreads.run(
        {
          source,
          flags,
          bytes: copy,
          limit,
          maxLineChars: options.maxLineChars,
          shownChars: options.shownChars,
        },
        { deadlineMs: options.budgetMs, signal, transfer: [copy.buffer] },
      )) as ScanReply;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof ThreadDeadlineError) {
        throw new ScanTimeoutError(`the pattern ran for more than ${options.budgetMs} ms on one text`);
      }
      if (error instanceof ThreadFailedError) {
        throw new ScanFailedError(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'it ran out of memory' : error.message,
        );
      }
      throw error;
    }
    if ('error' in reply) throw new ScanFailedError(reply.error);
    return reply.matches;
  };
}
