import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { openEnvironment } from '../../bench/support/environment.js';
import { freePort } from '../support/free-port.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `npm run bench -- <args>` (the script itself, through tsx) and collects its exit code and stderr. */
async function bench(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stderr };
}

describe('npm run bench -- --address', () => {
  it('refuses an address that is not host:port with exit code 2', async () => {
    const { code, stderr } = await bench(['--address', 'not-an-address', '--quick']);
    expect(code).toBe(2);
    expect(stderr).toContain('--address must be host:port, not "not-an-address"');
  });

  it(
    'refuses an address where no Temporal server answers with exit code 2',
    { timeout: 60_000 },
    async () => {
      const address = `127.0.0.1:${await freePort()}`;
      const out = await mkdtemp(path.join(tmpdir(), 'keel-bench-address-'));
      const { code, stderr } = await bench(['--address', address, '--quick', '--out', out]).finally(() =>
        rm(out, { recursive: true, force: true }),
      );
      expect(code).toBe(2);
      expect(stderr).toContain(`No Temporal server answers at ${address}`);
    },
  );

  it('uses an existing server as it is: its version, and no CPU time or metrics of a process of ours', async () => {
    const environment = await openEnvironment({
      kind: 'existing',
      address: inject('temporalAddress'),
      namespace: inject('temporalNamespace'),
      keelBundlePath: inject('workflowBundlePath'),
      built: inject('builtKeel'),
      say: () => undefined,
    });
    try {
      expect(environment.serverVersion).toMatch(/^\d+\.\d+/);
      expect(environment.serverPid).toBeUndefined();
      expect(environment.serverMetricsUrl).toBeUndefined();
    } finally {
      await environment.close();
    }
  });
});
