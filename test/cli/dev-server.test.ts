import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createLocalEnvironment } from '../../src/cli/dev-server.js';
import { freePort } from '../support/free-port.js';

const directories: string[] = [];
afterEach(async () => {
  await Promise.all(
    directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })),
  );
});

/**
 * A `temporal` in front of the real one that counts its server starts (`--version` passes
 * through) and behaves as `first` on the first start: `hang` never answers (as a server reading its
 * binary from a cold disk for longer than the SDK's 5 s), `broken` fails every command.
 */
async function wrappedCli(
  first: 'hang' | 'broken',
): Promise<{ path: string; starts: () => Promise<number> }> {
  const executable = inject('temporalExecutable');
  expect(executable.type, 'the tests run the temporal CLI from a path').toBe('existing-path');
  const real = (executable as { path: string }).path;
  const directory = await mkdtemp(path.join(tmpdir(), 'keel-dev-server-'));
  directories.push(directory);
  const counter = path.join(directory, 'starts');
  const script = path.join(directory, 'temporal');
  const version = first === 'broken' ? 'exit 1' : `exec ${JSON.stringify(real)} "$@"`;
  const firstStart = first === 'broken' ? 'exit 1' : '[ "$n" = 0 ] && exec sleep 60';
  await writeFile(
    script,
    [
      '#!/usr/bin/env bash',
      `[ "$1" = --version ] && ${version}`,
      `n=$(cat ${JSON.stringify(counter)} 2>/dev/null || echo 0)`,
      `echo $((n + 1)) > ${JSON.stringify(counter)}`,
      firstStart,
      `exec ${JSON.stringify(real)} "$@"`,
      '',
    ].join('\n'),
  );
  await chmod(script, 0o755);
  return { path: script, starts: async () => Number(await readFile(counter, 'utf8').catch(() => '0')) };
}

describe('createLocalEnvironment', () => {
  it('starts the dev server again when the SDK gave up waiting for a slow first start', async () => {
    const cli = await wrappedCli('hang');
    const said: string[] = [];
    const environment = await createLocalEnvironment(
      {
        server: {
          executable: { type: 'existing-path', path: cli.path },
          ip: '127.0.0.1',
          port: await freePort(),
          log: { format: 'pretty', level: 'error' },
        },
      },
      (line) => said.push(line),
    );
    try {
      // The second start answers in time here; on a disk colder still, a third may be needed.
      expect(await cli.starts()).toBeGreaterThanOrEqual(2);
      expect(await cli.starts()).toBeLessThanOrEqual(3);
      expect(said.join('\n')).toContain('slow to start');
      const info = await environment.client.workflowService.getSystemInfo({});
      expect(info.serverVersion).toMatch(/\d+\.\d+/u);
    } finally {
      await environment.teardown();
    }
  }, 60_000);

  it('tries a binary that does not even print its version once, and says what the SDK said', async () => {
    const cli = await wrappedCli('broken');
    await expect(
      createLocalEnvironment({
        server: {
          executable: { type: 'existing-path', path: cli.path },
          ip: '127.0.0.1',
          port: await freePort(),
          log: { format: 'pretty', level: 'error' },
        },
      }),
    ).rejects.toThrow(/did not start within/u);
    expect(await cli.starts()).toBe(1);
  }, 60_000);
});
