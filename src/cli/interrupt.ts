import { createInterface } from 'node:readline';
import { lineEditorOpen } from './ctrl-c-key.js';
import type { Output } from './io.js';
import { pauseProgress } from './status-line.js';

/**
 * While following: the first Ctrl-C asks "cancel or detach?", a second one detaches at once. Progress
 * output stops while the question waits, so it stays the last thing on the screen; should the run end
 * before the answer, the question is taken back. Returns the function that stops listening.
 */
export function onInterrupt(out: Output, cancel: () => Promise<void>, detach: () => void): () => void {
  let asking = false;
  const handler = (): void => {
    if (asking) return detach();
    asking = true;
    let settled = false;
    const prompt = createInterface({ input: process.stdin, output: process.stderr });
    // In a terminal the question reads Ctrl-C itself (below), not as a second SIGINT as well.
    const release = lineEditorOpen();
    const settle = (): void => {
      settled = true;
      asking = false;
      release();
      prompt.close();
      resume();
    };
    const resume = pauseProgress(() => {
      if (settled) return;
      // Ends the prompt's line before the progress that waited is printed.
      out.note('— the run has ended meanwhile.');
      settle();
    });
    prompt.question('\nCancel the run (c) or detach and leave it running (d)? [c/d] ', (answer) => {
      if (settled) return;
      settle();
      if (answer.trim().toLowerCase().startsWith('c'))
        void cancel().catch((error: Error) => out.note(error.message));
      else detach();
    });
    // A second Ctrl-C while it asks: detach at once, on a line of its own.
    prompt.on('SIGINT', () => {
      if (settled) return;
      process.stderr.write('\n');
      settle();
      detach();
    });
    prompt.once('close', () => {
      if (settled) return;
      settle();
      detach();
    });
  };
  process.on('SIGINT', handler);
  return () => process.removeListener('SIGINT', handler);
}
