import { createInterface } from 'node:readline';
import type { Output } from './io.js';

/**
 * While following: the first Ctrl-C asks "cancel or detach?", a second one detaches at once. Returns
 * the function that stops listening.
 */
export function onInterrupt(out: Output, cancel: () => Promise<void>, detach: () => void): () => void {
  let asking = false;
  const handler = (): void => {
    if (asking) return detach();
    asking = true;
    const prompt = createInterface({ input: process.stdin, output: process.stderr });
    let answered = false;
    prompt.question('\nCancel the run (c) or detach and leave it running (d)? [c/d] ', (answer) => {
      answered = true;
      prompt.close();
      asking = false;
      if (answer.trim().toLowerCase().startsWith('c'))
        void cancel().catch((error: Error) => out.note(error.message));
      else detach();
    });
    prompt.once('close', () => {
      if (!answered) detach();
    });
  };
  process.on('SIGINT', handler);
  return () => process.removeListener('SIGINT', handler);
}
