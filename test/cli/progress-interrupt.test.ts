import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, testServerCliEnvironment } from '../support/cli.js';
import { deferred } from '../support/deferred.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { Terminal } from '../support/terminal.js';
import { blockingTool } from '../support/test-tools.js';
import { saveScreen, statusLines } from './screens.js';

let server: TestServer;
let environment: NodeJS.ProcessEnv;
const opened: Terminal[] = [];
beforeAll(async () => {
  server = await connectTestServer();
  environment = testServerCliEnvironment();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((terminal) => terminal.close()));
});
afterAll(async () => {
  await server?.close();
});

const PROMPT = 'Cancel the run (c) or detach and leave it running (d)? [c/d]';

/** The run id `keel run` announced on the screen. */
function runIdOn(screen: string): string {
  const match = /Run (keel-[0-9a-f-]+) started/u.exec(screen);
  if (!match) throw new Error(`no run id on the screen:\n${screen}`);
  return match[1]!;
}

describe('Ctrl-C during keel run in a terminal', () => {
  it('pauses the progress while it asks: the question stays the last line until answered', async () => {
    const thinking = deferred();
    const block = blockingTool();
    const model = await ScriptedModel.start([
      reply.held(
        reply.items([{ text: 'Now a slow tool.' }, { call: { name: 'block', arguments: { label: 'x' } } }]),
        thinking.promise,
      ),
      reply.text('Done.'),
    ]);
    try {
      await withTestWorker(server, { model, tools: [block.tool] }, async ({ keel, taskQueue }) => {
        const terminal = await Terminal.keel(['run', 'Go slowly', '--task-queue', taskQueue], {
          env: environment,
          columns: 100,
        });
        opened.push(terminal);
        const runId = runIdOn(await terminal.waitFor(/thinking · turn 1/u));
        await terminal.press('C-c');
        await terminal.waitFor(PROMPT);
        // Now the run moves on while the question waits: a turn and a running tool to report.
        thinking.resolve();
        await block.started.promise;
        // A whole other `keel status` reads the new state meanwhile: far longer than the follower
        // needs to poll (every 400 ms) and print, had it not paused.
        const status = await runCli(['status', runId, '--task-queue', taskQueue], { env: environment });
        expect(status.stdout).toContain('running: block');
        const asking = await terminal.screen();
        expect(asking.split('\n').at(-1)).toBe(PROMPT);
        expect(asking).not.toContain('▸ turn 1');
        expect(statusLines(asking)).toEqual([]);

        await terminal.type('d');
        await terminal.press('Enter');
        const detached = await terminal.waitFor(`Detached from ${runId}`);
        expect(await terminal.exited()).toBe(0);
        // What waited is printed after the answer, in order, and no status line is left.
        const answered = detached.indexOf(`${PROMPT} d`);
        expect(answered).toBeGreaterThan(-1);
        expect(detached.indexOf('▸ turn 1 ')).toBeGreaterThan(answered);
        expect(detached.indexOf('  → block x')).toBeGreaterThan(detached.indexOf('▸ turn 1 '));
        const final = await terminal.scrollback();
        expect(statusLines(final)).toEqual([]);
        await saveScreen(
          'ctrl-c',
          ['while the question waits (the run has moved on meanwhile)', asking],
          ['after answering d', final],
        );

        block.release.resolve('released');
        expect((await keel.waitForResult(runId)).status).toBe('completed');
      });
    } finally {
      await model.close();
    }
  });

  it('detaches at once on a second Ctrl-C while it asks', async () => {
    const thinking = deferred();
    const model = await ScriptedModel.start([reply.held(reply.text('Later.'), thinking.promise)]);
    try {
      await withTestWorker(server, { model }, async ({ keel, taskQueue }) => {
        const terminal = await Terminal.keel(['run', 'Wait', '--task-queue', taskQueue], {
          env: environment,
        });
        opened.push(terminal);
        const runId = runIdOn(await terminal.waitFor(/thinking · turn 1/u));
        await terminal.press('C-c');
        await terminal.waitFor(PROMPT);
        // The prompt reads keys itself in a terminal: this Ctrl-C reaches it, not the SIGINT handler.
        await terminal.press('C-c');
        const detached = await terminal.waitFor(`Detached from ${runId}`);
        expect(detached).toMatch(new RegExp(`^Detached from ${runId}`, 'mu'));
        expect(await terminal.exited()).toBe(0);
        thinking.resolve();
        expect((await keel.waitForResult(runId)).status).toBe('completed');
      });
    } finally {
      await model.close();
    }
  });

  it('takes the question back when the run ends before the answer, and shows how it ended', async () => {
    const thinking = deferred();
    const model = await ScriptedModel.start([reply.held(reply.text('Finished anyway.'), thinking.promise)]);
    try {
      await withTestWorker(server, { model }, async ({ taskQueue }) => {
        const terminal = await Terminal.keel(['run', 'Finish', '--task-queue', taskQueue], {
          env: environment,
        });
        opened.push(terminal);
        await terminal.waitFor(/thinking · turn 1/u);
        await terminal.press('C-c');
        await terminal.waitFor(PROMPT);
        thinking.resolve();
        await terminal.waitFor('✔ completed');
        expect(await terminal.exited()).toBe(0);
        // Read once it has exited: the answer is printed after the ending line, which a busy machine
        // may draw a capture before.
        const ended = await terminal.scrollback();
        expect(ended).toContain(`${PROMPT} — the run has ended meanwhile.`);
        expect(ended.indexOf('▸ turn 1 ')).toBeGreaterThan(ended.indexOf(PROMPT));
        expect(ended.split('\n').at(-1)).toBe('Finished anyway.');
        expect(statusLines(ended)).toEqual([]);
      });
    } finally {
      await model.close();
    }
  });
});
