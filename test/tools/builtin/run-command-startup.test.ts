import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, workerConfigFromEnvironment } from '../../../src/config.js';
import { checkSandbox } from '../../../src/tools/builtin/run-command/check-sandbox.js';
import { checkRunCommandSandbox } from '../../../src/worker.js';

/** Whether the worker refuses run_command where commands cannot be sandboxed, unless told otherwise. */
let base: string;

beforeEach(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'keel-sandbox-startup-'));
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/** A stand-in for bubblewrap where a container forbids user namespaces: it says so and fails. */
async function forbiddenBubblewrap(): Promise<string> {
  const fake = path.join(base, 'bwrap');
  await writeFile(fake, '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n');
  await chmod(fake, 0o755);
  return fake;
}

function recordingLogger(): { warnings: string[]; warn(message: string): void } {
  const warnings: string[] = [];
  return { warnings, warn: (message) => void warnings.push(message) };
}

const withKey = { OPENAI_API_KEY: 'sk-test', KEEL_RUN_COMMAND_ALLOW: 'git' };

describe('run_command sandbox at worker start', () => {
  it('starts a real sandbox here', async () => {
    await expect(checkSandbox({ allow: ['git'] })).resolves.toBeUndefined();
    const logger = recordingLogger();
    await checkRunCommandSandbox({ runCommand: { allow: ['git'] } }, logger);
    expect(logger.warnings).toEqual([]);
  });

  it('refuses to start the worker when commands cannot be sandboxed, and names the way out', async () => {
    const runCommand = { allow: ['git'], bwrapPath: await forbiddenBubblewrap() };
    const error = await checkRunCommandSandbox({ runCommand }, recordingLogger()).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('commands cannot be sandboxed on this machine');
    expect((error as Error).message).toContain('bwrap: setting up uid map: Permission denied');
    expect((error as Error).message).toContain('set KEEL_RUN_COMMAND_SANDBOX=off');
  });

  it('refuses a bubblewrap that is not there', async () => {
    const runCommand = { allow: ['git'], bwrapPath: path.join(base, 'no-such-bwrap') };
    await expect(checkRunCommandSandbox({ runCommand }, recordingLogger())).rejects.toThrow(
      /cannot be sandboxed on this machine: Could not start .*: ENOENT/,
    );
  });

  it('starts without a sandbox only when the operator opts out, and warns loudly', async () => {
    const logger = recordingLogger();
    const runCommand = { allow: ['git'], sandbox: 'off' as const, bwrapPath: await forbiddenBubblewrap() };
    await checkRunCommandSandbox({ runCommand }, logger);
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]).toMatch(/^WARNING: run_command runs commands WITHOUT a sandbox/);
  });

  it('does nothing when run_command is off', async () => {
    const logger = recordingLogger();
    await checkRunCommandSandbox({ runCommand: undefined }, logger);
    expect(logger.warnings).toEqual([]);
  });
});

describe('run_command sandbox settings', () => {
  it('reads the sandbox, bubblewrap, network and read-only path variables', () => {
    const config = workerConfigFromEnvironment({
      ...withKey,
      KEEL_RUN_COMMAND_SANDBOX: 'off',
      KEEL_RUN_COMMAND_BWRAP: '/opt/bwrap/bin/bwrap',
      KEEL_RUN_COMMAND_NETWORK: 'true',
      KEEL_RUN_COMMAND_READ_ONLY_PATHS: '/opt/toolchain, /srv/data/',
      KEEL_RUN_COMMAND_MEMORY_MB: '512',
      KEEL_RUN_COMMAND_PROCESSES: '32',
      KEEL_RUN_COMMAND_CPU_SECONDS: '60',
      KEEL_RUN_COMMAND_FILE_MB: '100',
      KEEL_RUN_COMMAND_TMP_MB: '64',
      KEEL_RUN_COMMAND_WORKSPACE_MB: '900',
    });
    expect(config.runCommand).toEqual({
      allow: ['git'],
      sandbox: 'off',
      bwrapPath: '/opt/bwrap/bin/bwrap',
      network: true,
      readOnlyPaths: ['/opt/toolchain', '/srv/data/'],
      limits: { memoryMb: 512, processes: 32, cpuSeconds: 60, fileMb: 100, tmpMb: 64, workspaceMb: 900 },
    });
    expect(workerConfigFromEnvironment(withKey).runCommand).toEqual({ allow: ['git'] });
  });

  it.each([
    ['KEEL_RUN_COMMAND_SANDBOX', 'none', 'KEEL_RUN_COMMAND_SANDBOX must be "bwrap" or "off", not "none"'],
    [
      'KEEL_RUN_COMMAND_BWRAP',
      'bin/bwrap',
      'KEEL_RUN_COMMAND_BWRAP must be an absolute path, not "bin/bwrap"',
    ],
    ['KEEL_RUN_COMMAND_NETWORK', 'maybe', 'KEEL_RUN_COMMAND_NETWORK must be "true" or "false", not "maybe"'],
    [
      'KEEL_RUN_COMMAND_MEMORY_MB',
      '8',
      'KEEL_RUN_COMMAND_MEMORY_MB must be a whole number of at least 16, not "8"',
    ],
    [
      'KEEL_RUN_COMMAND_PROCESSES',
      '2.5',
      'KEEL_RUN_COMMAND_PROCESSES must be a whole number of at least 8, not "2.5"',
    ],
    [
      'KEEL_RUN_COMMAND_READ_ONLY_PATHS',
      '/opt,tools',
      'KEEL_RUN_COMMAND_READ_ONLY_PATHS must be a comma-separated list of absolute paths, not "/opt,tools"',
    ],
    [
      'KEEL_RUN_COMMAND_READ_ONLY_PATHS',
      '/',
      'KEEL_RUN_COMMAND_READ_ONLY_PATHS must be a comma-separated list of absolute paths, not "/"',
    ],
  ])('refuses %s=%s', (name, value, message) => {
    expect(() => workerConfigFromEnvironment({ ...withKey, [name]: value })).toThrow(
      new ConfigError(message),
    );
  });
});
