import { appendFileSync, chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';
import { DefaultLogger } from '@temporalio/worker';
import type { LogEntry } from '@temporalio/worker';
import { PRIVATE_DIRECTORY } from './local-server.js';

/**
 * The log of a worker that `keel run` hosts: its warnings and errors (a failed model call logs the
 * SDK's error with its stack, ~70 lines) go to `<data directory>/worker.log`, not between the
 * progress lines, where the run's one-line failure says what happened. `KEEL_DEBUG` sends them
 * to stderr as well.
 */
export class HostedWorkerLog {
  readonly file: string;
  /** Whether anything was written (then the command points at the file). */
  written = false;
  readonly logger: DefaultLogger;

  constructor(dataDirectory: string) {
    this.file = path.join(dataDirectory, 'worker.log');
    this.logger = new DefaultLogger('WARN', (entry) => this.#write(entry));
  }

  #write(entry: LogEntry): void {
    const time = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
    const meta = entry.meta === undefined ? '' : ` ${inspect(entry.meta, { depth: 4, breakLength: 120 })}`;
    const line = `${time} [${entry.level}] ${entry.message}${meta}\n`;
    if (process.env.KEEL_DEBUG) process.stderr.write(line);
    try {
      // Private: it holds tool outputs and model errors. A log from an older Keel is made so at the first write.
      mkdirSync(path.dirname(this.file), { recursive: true, mode: PRIVATE_DIRECTORY });
      appendFileSync(this.file, line, { mode: 0o600 });
      if (!this.written) chmodSync(this.file, 0o600);
      this.written = true;
    } catch (error) {
      // A log that cannot be written must not hide what it would have said.
      process.stderr.write(`${line}(could not write ${this.file}: ${(error as Error).message})\n`);
    }
  }
}
