import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { testServerCliEnvironment } from '../support/cli.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { keelEntry } from '../support/cli.js';
import { Terminal } from '../support/terminal.js';

// A command started with `&` in an interactive shell is a background job: if it changed the
// terminal's mode or read from it, the terminal driver would stop it ("Stopped (tty output)") and it
// would hang there. A worker in the background must keep running.
const checkout = fileURLToPath(new URL('../..', import.meta.url));
const opened: Terminal[] = [];
const models: ScriptedModel[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((terminal) => terminal.close()));
  await Promise.all(models.splice(0).map((model) => model.close()));
});

describe('keel as a background job of an interactive shell', () => {
  it('keel worker & keeps running (not stopped by the terminal) until killed', async () => {
    const model = await ScriptedModel.start([]);
    models.push(model);
    const queue = `q-${randomUUID()}`;
    const terminal = await Terminal.start(['bash', '--norc', '--noprofile', '-i'], {
      env: testServerCliEnvironment({
        OPENAI_BASE_URL: model.url,
        KEEL_MODEL: 'scripted',
        KEEL_WORKSPACE: checkout,
      }),
      cwd: checkout,
    });
    opened.push(terminal);
    await terminal.waitFor(/bash-[\d.]+[#$]/u);
    // set -b: the shell reports a job that stops at once, not at the next prompt.
    await terminal.type(`set -b; ${process.execPath} ${keelEntry()} worker --task-queue ${queue} &`);
    await terminal.press('Enter');
    const started = await terminal.waitFor(/Keel worker on task queue|Stopped/u);
    expect(started).not.toMatch(/Stopped/u);
    await terminal.type('jobs -l');
    await terminal.press('Enter');
    const screen = await terminal.waitFor(/\[1\]\+\s+\d+ (Running|Stopped)/u);
    expect(screen).toMatch(/\[1\]\+\s+\d+ Running/u);
    expect(screen).not.toMatch(/Stopped/u);
    await terminal.type('kill %1; wait; echo "worker ended: $?"');
    await terminal.press('Enter');
    await terminal.waitFor(/worker ended: \d+/u);
  });
});
