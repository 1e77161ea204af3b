import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { cliEnvironment } from '../support/cli.js';
import { deferred } from '../support/deferred.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { Terminal } from '../support/terminal.js';

// The exit code after Ctrl-C, as a shell sees it: a run the user detached from exits 0 (the run goes
// on), a cancelled one 3. Through `npx keel` too, whose npm also gets the terminal's SIGINT.
const checkout = fileURLToPath(new URL('../..', import.meta.url));
const opened: Terminal[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((terminal) => terminal.close()));
});

// `npx keel` runs dist/ when it is the build of the current source (the global set-up builds it), else
// the TypeScript source through tsx, a compile of the CLI's whole import graph, and then `keel worker`
// bundles the workflows with webpack at start: 15–25 s of CPU alone, which a machine running two CI
// jobs at once stretched past the terminal tier's 30 s. What is tested is the exit code, not that
// start-up: it gets room either way.
const STARTUP_MS = 100_000;

describe('the exit code after Ctrl-C in a terminal', { timeout: 150_000 }, () => {
  it.each([
    ['npx keel', 'd', 0],
    ['npx keel', 'c', 3],
    ['the built keel', 'd', 0],
  ])('%s, answered "%s": exit code %d', async (launcher, answer, expected) => {
    const args = ['run', '--demo', 'Take your time'];
    const env = environment();
    const terminal =
      launcher === 'npx keel'
        ? await Terminal.start(['npx', '--no-install', 'keel', ...args], { env, cwd: checkout })
        : await Terminal.keel(args, { env, cwd: checkout });
    opened.push(terminal);
    await terminal.waitFor('started with the scripted demo model', STARTUP_MS);
    await terminal.press('C-c');
    await terminal.waitFor('Cancel the run (c) or detach');
    await terminal.type(answer);
    await terminal.press('Enter');
    const code = await terminal.exited();
    const screen = await terminal.scrollback();
    expect(screen).toMatch(answer === 'd' ? /Detached from keel-/u : /■ cancelled/u);
    expect(code).toBe(expected);
  });

  it('npx keel, Ctrl-C twice: detached at once, exit code 0', async () => {
    const terminal = await Terminal.start(
      ['npx', '--no-install', 'keel', 'run', '--demo', 'Take your time'],
      {
        env: environment(),
        cwd: checkout,
      },
    );
    opened.push(terminal);
    await terminal.waitFor('started with the scripted demo model', STARTUP_MS);
    await terminal.press('C-c');
    await terminal.waitFor('Cancel the run (c) or detach');
    await terminal.press('C-c');
    expect(await terminal.exited()).toBe(0);
    expect(await terminal.scrollback()).toMatch(/Detached from keel-/u);
  });

  it('npx keel chat, Ctrl-C while the model thinks, answered "d": detached, exit code 0', async () => {
    const thinking = deferred();
    const model = await ScriptedModel.start([reply.held(reply.text('Late answer.'), thinking.promise)]);
    const server = await connectTestServer();
    try {
      await withTestWorker(server, { model }, async ({ taskQueue }) => {
        const terminal = await Terminal.start(
          ['npx', '--no-install', 'keel', 'chat', '--task-queue', taskQueue],
          { env: environment(), cwd: checkout },
        );
        opened.push(terminal);
        await terminal.waitFor('you>', STARTUP_MS);
        await terminal.type('Think hard');
        await terminal.press('Enter');
        await terminal.waitFor(/thinking · turn 1/u);
        await terminal.press('C-c');
        await terminal.waitFor('Cancel the run (c) or detach');
        await terminal.type('d');
        await terminal.press('Enter');
        const code = await terminal.exited();
        expect(await terminal.scrollback()).toMatch(/Detached; session keel-[0-9a-f-]+ stays open/u);
        expect(code).toBe(0);
      });
    } finally {
      thinking.resolve();
      await server.close();
      await model.close();
    }
  });

  it('npx keel worker, Ctrl-C: the worker shuts down, exit code 0', async () => {
    const model = await ScriptedModel.start([]);
    try {
      const terminal = await Terminal.start(
        ['npx', '--no-install', 'keel', 'worker', '--task-queue', `ctrl-c-${randomUUID()}`],
        {
          env: {
            ...environment(),
            OPENAI_BASE_URL: model.url,
            KEEL_MODEL: 'scripted',
            KEEL_WORKSPACE: checkout,
          },
          cwd: checkout,
        },
      );
      opened.push(terminal);
      await terminal.waitFor('Ctrl-C to stop.', STARTUP_MS);
      await terminal.press('C-c');
      expect(await terminal.exited()).toBe(0);
    } finally {
      await model.close();
    }
  });
});

function environment(): NodeJS.ProcessEnv {
  return cliEnvironment({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    npm_config_update_notifier: 'false',
  });
}
