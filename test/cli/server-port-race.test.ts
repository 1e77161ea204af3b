import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { freePort } from '../support/free-port.js';
import { LocalServers } from '../support/local-servers.js';

const servers = new LocalServers();
const held: Server[] = [];
const connections: Socket[] = [];
afterEach(async () => {
  await servers.stopAll();
  for (const socket of connections.splice(0)) socket.destroy();
  await Promise.all(held.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** Listens on a free port on 127.0.0.1 until the test ends, so nothing else can bind it. */
async function holdPort(port?: number): Promise<number> {
  const chosen = port ?? (await freePort());
  const server = createServer((socket) => connections.push(socket));
  held.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(chosen, '127.0.0.1', () => resolve());
  });
  return chosen;
}

/**
 * A `temporal` that runs the real one, its first `times` starts with `--http-port taken` added: the
 * real server then exits as it does when another process took the HTTP port it picked for itself.
 */
async function losingWrapper(taken: number, times: number): Promise<{ binary: string; starts: string }> {
  const executable = inject('temporalExecutable');
  if (executable.type !== 'existing-path') throw new Error('the test set-up found no temporal binary');
  const directory = await mkdtemp(path.join(tmpdir(), 'keel-port-race-'));
  const starts = path.join(directory, 'starts');
  const binary = path.join(directory, 'temporal');
  // The server gets an allow-list of variables only (local-server.ts): the values are in the script.
  await writeFile(
    binary,
    [
      '#!/bin/sh',
      `echo start >> '${starts}'`,
      `if [ "$(wc -l < '${starts}')" -le ${times} ]; then exec '${executable.path}' "$@" --http-port ${taken}; fi`,
      `exec '${executable.path}' "$@"`,
      '',
    ].join('\n'),
  );
  await chmod(binary, 0o755);
  return { binary, starts };
}

const startsIn = async (file: string) =>
  existsSync(file) ? (await readFile(file, 'utf8')).trim().split('\n').length : 0;

describe('keel server start when a port the server picked for itself is taken', () => {
  it('starts the server again, and it answers', async () => {
    const { binary, starts } = await losingWrapper(await holdPort(), 1);
    const { env, dataDirectory } = await servers.setup({ TEMPORAL_CLI_PATH: binary });
    const { code, stderr } = await servers.runCli(['server', 'start'], { env });
    expect(stderr).not.toContain('exited');
    expect(code).toBe(0);
    expect(await startsIn(starts)).toBe(2);
    const log = await readFile(path.join(dataDirectory, 'server.log'), 'utf8');
    expect(log).toContain('bind: address already in use');
    const record = await LocalServers.record(dataDirectory);
    expect(record?.starting).toBeUndefined();
    const status = await servers.runCli(['server', 'status'], { env });
    expect(status.code).toBe(0);
  }, 120_000);

  it('gives up after three starts, with the end of the log', async () => {
    const taken = await holdPort();
    const { binary, starts } = await losingWrapper(taken, 3);
    const { env, dataDirectory } = await servers.setup({ TEMPORAL_CLI_PATH: binary });
    const { code, stderr } = await servers.runCli(['server', 'start'], { env });
    expect(code).toBe(1);
    expect(await startsIn(starts)).toBe(3);
    expect(stderr).toContain(`127.0.0.1:${taken}: bind: address already in use`);
    expect(await LocalServers.record(dataDirectory)).toBeUndefined();
  }, 120_000);

  it('does not try again when the gRPC port Keel chose is the one taken', async () => {
    const { env, dataDirectory, port } = await servers.setup({});
    await holdPort(port);
    const { binary, starts } = await losingWrapper(port, 0);
    const { code, stderr } = await servers.runCli(['server', 'start'], {
      env: { ...env, TEMPORAL_CLI_PATH: binary },
    });
    expect(code).toBe(1);
    expect(await startsIn(starts)).toBe(1);
    expect(stderr).toContain(`${port}: bind: address already in use`);
    expect(await LocalServers.record(dataDirectory)).toBeUndefined();
  }, 120_000);
});
