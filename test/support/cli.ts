import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

const sourceBin = fileURLToPath(new URL('../../bin/keel.js', import.meta.url));
/** The CLI's TypeScript source, which `bin/keel.js` runs through tsx while `dist/` is not its build. */
const sourceEntry = fileURLToPath(new URL('../../src/cli/keel.ts', import.meta.url));
/** tsx's loader, by its path: `--import tsx` would look for tsx from the process's own directory. */
const tsxLoader = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

/**
 * The `keel` the tests run: the built CLI in the global set-up's copy of `dist/` (built first when
 * stale), which is what the package installs and starts in a third of the time tsx takes to run
 * the source; without that set-up, this checkout's `bin/keel.js`. `npx keel` in a checkout, which
 * runs the source, has tests of its own (test/cli/interrupt-exit.test.ts).
 */
export function keelEntry(): string {
  const built = inject('builtKeel');
  return built === undefined ? sourceBin : path.join(built.root, 'dist', 'cli', 'keel.js');
}

/** The environment a CLI process gets: PATH and HOME from this one, plus `extra`; nothing else leaks in. */
export function cliEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...extra };
}

/** {@link cliEnvironment} pointed at the test run's Temporal server (call it inside a test or hook). */
export function testServerCliEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return cliEnvironment({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    ...extra,
  });
}

/** A running `keel` process whose output the test can wait on. */
export class CliProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  readonly #waiters: Array<{ ready: () => boolean; resolve: () => void }> = [];

  constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => this.#append('stdout', chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.#append('stderr', chunk));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Resolves once stdout or stderr contains `text`. */
  async waitForOutput(text: string): Promise<void> {
    const ready = () => this.stdout.includes(text) || this.stderr.includes(text);
    if (ready()) return;
    await new Promise<void>((resolve, reject) => {
      this.#waiters.push({ ready, resolve });
      this.exited.then(() => {
        if (!ready())
          reject(
            new Error(
              `keel exited without printing ${JSON.stringify(text)}:\n${this.stdout}\n${this.stderr}`,
            ),
          );
      }, reject);
    });
  }

  #append(stream: 'stdout' | 'stderr', chunk: string): void {
    this[stream] += chunk;
    for (const waiter of this.#waiters.filter((candidate) => candidate.ready())) {
      this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }
}

/** How to start a CLI: its environment, directory, and whether to run this checkout's source. */
export interface CliOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * Run this checkout's TypeScript source through tsx, as `bin/keel.js` does while `dist/` is older
   * than `src/`, instead of the built CLI.
   */
  source?: boolean;
}

/** Starts `keel <args>` without waiting for it. */
export function startCli(args: string[], options: CliOptions): CliProcess {
  return new CliProcess(
    spawn(
      process.execPath,
      [...(options.source === true ? ['--import', tsxLoader, sourceEntry] : [keelEntry()]), ...args],
      {
        env: options.env,
        cwd: options.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    ),
  );
}

/** Runs `keel <args>` to the end. */
export async function runCli(
  args: string[],
  options: CliOptions,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = startCli(args, options);
  const code = await cli.exited;
  return { code, stdout: cli.stdout, stderr: cli.stderr };
}
