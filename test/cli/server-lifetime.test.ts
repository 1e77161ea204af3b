import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliProcess } from '../support/cli.js';
import { temporaryWorkspace } from '../support/harness.js';
import { LocalServers } from '../support/local-servers.js';
import { ScriptedModel, reply } from '../support/scripted-model.js';
import { Terminal } from '../support/terminal.js';

const servers = new LocalServers();
const terminals: Terminal[] = [];
const workers: CliProcess[] = [];
afterEach(async () => {
  await Promise.all(terminals.splice(0).map((terminal) => terminal.close()));
  // A worker a failed test left running, before the servers it used.
  await Promise.all(
    workers.splice(0).map(async (worker) => {
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
      await worker.exited;
    }),
  );
  await servers.stopAll();
});

/** What a server killed under a command looks like on its screen. */
const DEAD_SERVER = /Failed to describe workflow|connection refused|ECONNREFUSED|transport error/iu;

describe('the local Temporal server Keel starts', () => {
  it('survives Ctrl-C in the terminal that started it: the run detaches and stays visible', async () => {
    const { env, dataDirectory } = await servers.setup();
    const workspace = await temporaryWorkspace();
    // With a README the demo takes three scripted turns (about 1.2 s each): Ctrl-C lands mid-run.
    await writeFile(path.join(workspace, 'README.md'), '# A project\n');
    const terminal = await Terminal.keel(['run', '--demo', 'What is in here?'], { env, cwd: workspace });
    terminals.push(terminal);
    const started = await terminal.waitFor(/Run (\S+) started/u, 90_000);
    const runId = /Run (\S+) started/u.exec(started)![1]!;
    expect(started).toContain('keeps running after this command ends');
    await terminal.waitFor('→ list_directory');
    await terminal.press('C-c');
    await terminal.waitFor('[c/d]');
    await terminal.type('d');
    await terminal.press('Enter');
    expect(await terminal.exited()).toBe(0);
    const screen = await terminal.scrollback();
    expect(screen).toContain(`Detached from ${runId}`);
    expect(screen).not.toMatch(DEAD_SERVER);

    const record = await LocalServers.record(dataDirectory);
    const status = await servers.runCli(['server', 'status', '--json'], { env, cwd: workspace });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, pid: record!.pid });
    const run = await servers.runCli(['status', runId, '--json'], { env, cwd: workspace });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ runId });
    expect(run.stderr).not.toMatch(DEAD_SERVER);
    // Bounds for a loaded machine: a first server start, the demo, and a status query without a worker.
  }, 180_000);

  it('outlives a keel worker that started it, stopped by SIGINT or SIGTERM, for the next worker', async () => {
    const model = await ScriptedModel.start(() => reply.text('unused'));
    try {
      const workspace = await temporaryWorkspace();
      const { env, dataDirectory } = await servers.setup({
        OPENAI_BASE_URL: model.url,
        KEEL_STATE_DIR: path.join(workspace, '.keel', 'state'),
      });
      // This checkout's source through tsx, as `npx keel` runs it after a change to src/.
      const first = servers.startCli(['worker'], { env, cwd: workspace, source: true });
      workers.push(first);
      await first.waitForOutput('Keel worker on task queue "keel"');
      expect(first.stderr).toContain('Starting a local Temporal server');
      expect(first.stderr).toContain('keeps running after this command ends');
      // A checkout runs src/ through tsx: its workflow code is bundled from src/, and that is said.
      expect(first.stderr).toContain(
        'Bundling the workflow code (about 5 s; a checkout runs the TypeScript source, so the workflow code is bundled from src/)…',
      );
      const record = await LocalServers.record(dataDirectory);
      first.child.kill('SIGINT');
      expect(await first.exited).toBe(0);

      const second = servers.startCli(['worker'], { env, cwd: workspace });
      workers.push(second);
      await second.waitForOutput('Keel worker on task queue "keel"');
      expect(second.stderr).toContain(`Using Keel's local Temporal server on 127.0.0.1:`);
      expect(second.stderr).toContain(`PID ${record!.pid}`);
      expect(second.stderr).not.toContain('Starting a local Temporal server');
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);

      const status = await servers.runCli(['server', 'status'], { env, cwd: workspace });
      expect(status.stdout).toContain(`PID      ${record!.pid}`);
      expect(status.code).toBe(0);
      const list = await servers.runCli(['list', '--json'], { env, cwd: workspace });
      expect(list.code).toBe(0);
    } finally {
      await model.close();
    }
  }, 180_000);
});
