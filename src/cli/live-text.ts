import type { KeelClient } from '../client.js';
import { RunNotStreamingError } from '../stream/subscribe.js';
import type { ProgressDisplay } from './status-line.js';
import { printable } from './terminal-text.js';

/** Pause before reading the stream again after a read failed (no worker answered the query, say). */
const RETRY_MS = 1_000;

/**
 * Shows the model's text as it is written, in the status line's place, from the run's stream until
 * the run ends or `signal` fires: the line being written, then the status again once the turn
 * calls a tool or ends. A `reset` (the turn's attempt died) drops what was shown: the turn's text
 * comes again. A run started before streaming existed has no stream: nothing is shown.
 * Durable output is left to the state's events, so a pipe or log reads the same as before.
 */
export async function showLiveText(
  keel: KeelClient,
  runId: string,
  display: ProgressDisplay,
  signal: AbortSignal,
): Promise<void> {
  let from = 0;
  let writing: string;
  const stop = (): void => display.typing(undefined);
  signal.addEventListener('abort', stop, { once: true });
  try {
    while (!signal.aborted) {
      try {
        // Taken up again after a failed read, the stream gives a turn being written from its start.
        writing = '';
        for await (const { offset, event } of keel.stream(runId, { from })) {
          if (signal.aborted) return;
          from = offset + 1;
          if (event.type === 'text') {
            writing += event.delta;
            // The whole line is made printable at once: an escape sequence may span deltas.
            const line = writing.slice(writing.lastIndexOf('\n') + 1);
            display.typing(line.trim() === '' ? undefined : printable(line, { singleLine: true }));
          } else if (event.type !== 'observation') {
            writing = '';
            display.typing(undefined);
          }
          if (event.type === 'end') return;
        }
        return;
      } catch (error) {
        if (error instanceof RunNotStreamingError) return;
        await pause(RETRY_MS, signal);
      }
    }
  } finally {
    signal.removeEventListener('abort', stop);
    display.typing(undefined);
  }
}

function pause(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, milliseconds);
    signal.addEventListener('abort', done, { once: true });
  });
}
