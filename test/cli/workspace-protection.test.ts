import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { cliEnvironment, runCli } from '../support/cli.js';
import { temporaryWorkspace } from '../support/harness.js';

/** The CLI's view of the test server: the "local server already running", so `.keel` is its data directory. */
function localServer(extra: Record<string, string>): NodeJS.ProcessEnv {
  const port = inject('temporalAddress').split(':').at(-1)!;
  return cliEnvironment({ KEEL_LOCAL_PORT: port, ...extra });
}

describe('keel run in a directory that holds its own data', () => {
  it('refuses to host a worker when KEEL_DATA_DIR lies in the workspace unprotected, naming the variables', async () => {
    const workspace = await realpath(await temporaryWorkspace());
    const { code, stdout, stderr } = await runCli(['run', '--demo', 'What is in here?'], {
      env: localServer({ KEEL_DATA_DIR: 'server-data' }),
      cwd: workspace,
    });
    expect(stderr).toContain(
      `KEEL_DATA_DIR (${path.join(workspace, 'server-data')}, the local server's database) lies inside the ` +
        `workspace (KEEL_WORKSPACE=${workspace}) and KEEL_WORKSPACE_PROTECT (now ".git,.keel") does not protect it`,
    );
    expect(stderr).toContain('add "server-data" to KEEL_WORKSPACE_PROTECT');
    expect(stderr).not.toContain('started with the scripted demo model');
    expect(stdout).toBe('');
    expect(code).toBe(1);
  });

  it('keel worker refuses the same way, and also an unprotected KEEL_STATE_DIR', async () => {
    const workspace = await realpath(await temporaryWorkspace());
    const model = { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' };
    for (const [extra, variable] of [
      [{ KEEL_DATA_DIR: 'server-data' }, 'KEEL_DATA_DIR'],
      [{ KEEL_STATE_DIR: path.join(workspace, 'state') }, 'KEEL_STATE_DIR'],
    ] as const) {
      const { code, stderr } = await runCli(['worker'], {
        env: localServer({ ...model, ...extra }),
        cwd: workspace,
      });
      expect(stderr).toMatch(new RegExp(`^${variable} \\(${workspace}/.*\\) lies inside the workspace`, 'm'));
      expect(stderr).not.toContain('Keel worker on task queue');
      expect(code).toBe(1);
    }
  });

  it('hosts the worker with the default data directory, .keel, which is protected', async () => {
    const { code, stdout } = await runCli(['run', '--demo', 'What is in here?'], {
      env: localServer({}),
      cwd: await temporaryWorkspace(),
    });
    expect(stdout).toContain('✔ completed (2 turns');
    expect(code).toBe(0);
  });
});
