#!/usr/bin/env node
import { exitWhenWritten } from '../exit-when-written.js';
import { main } from './main.js';

// Exit explicitly once the command is done: everything was closed in its finally blocks, and a
// terminal prompt or a native handle must not keep the command waiting.
main(process.argv.slice(2)).then(exitWhenWritten, (error: unknown) => {
  process.stderr.write(`keel: ${(error as Error).stack ?? String(error)}\n`);
  exitWhenWritten(1);
});
