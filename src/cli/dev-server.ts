import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { LocalTestWorkflowEnvironmentOptions } from '@temporalio/testing';

const run = promisify(execFile);

/**
 * How many times a dev server start is made when the SDK gave up waiting for it. The SDK waits a
 * fixed 5 s for the server to answer; the first start on a fresh machine reads the 150 MB binary
 * from a cold disk and can take longer (4.1 s here after dropping the page cache), while a second
 * start takes a fraction of a second.
 */
export const DEV_SERVER_START_ATTEMPTS = 3;

/** How long the warm-up (`temporal --version`, which pages the binary in) may take. */
const WARM_UP_TIMEOUT_MS = 120_000;

/** Whether `error` is the SDK's "did not start within 5s": the server was too slow, nothing else. */
function tooSlow(error: unknown): boolean {
  return error instanceof Error && /did not start within/u.test(error.message);
}

/**
 * `TestWorkflowEnvironment.createLocal`, made for a cold machine: a binary given by path is run once
 * first (`--version`, so the server start after it does not wait on the disk), and a start the SDK
 * gave up on for slowness is made again, up to {@link DEV_SERVER_START_ATTEMPTS} times in all. Any
 * other failure, and any failure of a binary whose `--version` failed, is thrown at once.
 */
export async function createLocalEnvironment(
  options: LocalTestWorkflowEnvironmentOptions,
  say: (line: string) => void = () => undefined,
): Promise<TestWorkflowEnvironment> {
  const executable = options.server?.executable;
  // The SDK cannot tell a slow server from one that exited (it only polls the port): a binary
  // that does not even print its version is broken, and trying it again would only wait longer.
  const runs =
    executable?.type !== 'existing-path' ||
    (await run(executable.path, ['--version'], { timeout: WARM_UP_TIMEOUT_MS }).then(
      () => true,
      () => false,
    ));
  const attempts = runs ? DEV_SERVER_START_ATTEMPTS : 1;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await TestWorkflowEnvironment.createLocal(options);
    } catch (error) {
      if (attempt >= attempts || !tooSlow(error)) throw error;
      say(`The Temporal dev server was slow to start (${(error as Error).message}); starting it again.`);
    }
  }
}
