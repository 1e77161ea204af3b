import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool.js';

/** When the probe tool started and when its AbortSignal fired, for one call label. */
export interface ProbeRecord {
  startedAt: number;
  abortedAt?: number;
  started: Promise<void>;
  aborted: Promise<void>;
}

/**
 * A tool that waits until its AbortSignal fires, recording when it started and when the signal
 * fired (`performance.now()`), by label: the cancellation benchmark's probe.
 */
export function probeTool() {
  const records = new Map<string, ProbeRecord & { resolveStarted(): void; resolveAborted(): void }>();
  const record = (label: string) => {
    let found = records.get(label);
    if (found === undefined) {
      let resolveStarted!: () => void;
      let resolveAborted!: () => void;
      const started = new Promise<void>((resolve) => (resolveStarted = resolve));
      const aborted = new Promise<void>((resolve) => (resolveAborted = resolve));
      found = { startedAt: Number.NaN, started, aborted, resolveStarted, resolveAborted };
      records.set(label, found);
    }
    return found;
  };
  const tool = defineTool({
    name: 'probe',
    description: 'Waits until cancelled.',
    schema: z.object({ label: z.string() }),
    execute: ({ label }, { signal }) =>
      new Promise<string>((_resolve, reject) => {
        const entry = record(label);
        entry.startedAt = performance.now();
        entry.resolveStarted();
        signal.addEventListener(
          'abort',
          () => {
            entry.abortedAt = performance.now();
            entry.resolveAborted();
            reject(signal.reason as Error);
          },
          { once: true },
        );
      }),
  });
  return { tool, record: (label: string): ProbeRecord => record(label) };
}
