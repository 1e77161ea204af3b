#!/usr/bin/env node
import { main } from './main.js';

// Exit explicitly once the command is done: everything was closed in its finally blocks, and a
// terminal prompt or a native handle must not keep the command waiting.
main(process.argv.slice(2)).then(exitWhenWritten, (error: unknown) => {
  process.stderr.write(`keel: ${(error as Error).stack ?? String(error)}\n`);
  exitWhenWritten(1);
});

/**
 * Exits once stdout and stderr have passed on what was written: to a pipe, writes are asynchronous,
 * and exiting at once cut a large `--json` (an eval's report, an exported history) short.
 */
function exitWhenWritten(code: number): void {
  let open = 2;
  const written = (): void => {
    open -= 1;
    if (open === 0) process.exit(code);
  };
  process.stdout.write('', written);
  process.stderr.write('', written);
}
