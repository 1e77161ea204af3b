import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli, testServerCliEnvironment } from '../support/cli.js';
import { deferred } from '../support/deferred.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { waitForState } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { Terminal } from '../support/terminal.js';
import { echoTool } from '../support/test-tools.js';
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

async function chatTerminal(args: string[]): Promise<Terminal> {
  const terminal = await Terminal.keel(['chat', ...args], { env: environment, columns: 100 });
  opened.push(terminal);
  return terminal;
}

/** Matches a screen on which the `you>` prompt (a screen drops trailing blanks) has shown `times` times. */
const prompts = (times: number): RegExp => new RegExp(Array(times).fill('you>').join('[\\s\\S]*'), 'u');

/** The session id `keel chat` announced. */
function sessionIdOn(screen: string): string {
  const match = /Session (keel-[0-9a-f-]+) started/u.exec(screen);
  if (!match) throw new Error(`no session id on the screen:\n${screen}`);
  return match[1]!;
}

/** What a request sent the model, as text to search. */
const sent = (model: ScriptedModel, index: number): string =>
  JSON.stringify(model.requests[index]?.body.input);

describe('keel chat in a terminal', () => {
  it('talks to a session: a message, an inline approval, the answer, a follow-up, /end', async () => {
    const model = await ScriptedModel.start([
      reply.items([{ text: 'Let me echo it.' }, { call: { name: 'echo', arguments: { text: 'hi' } } }]),
      reply.text('Echoed: hi'),
      reply.text('Again: hi'),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ keel, taskQueue }) => {
        const terminal = await chatTerminal(['--task-queue', taskQueue, '--approve', 'echo']);
        await terminal.waitFor(prompts(1));
        await terminal.type('Say hi');
        await terminal.press('Enter');
        let asking = await terminal.waitFor('Run echo(text="hi")? [y/n/e(dit)]');
        const runId = sessionIdOn(asking);
        // The question is the last line, with no status line drawn over it.
        asking = await terminal.screen();
        expect(asking.split('\n').at(-1)).toBe('Run echo(text="hi")? [y/n/e(dit)]');
        expect(statusLines(asking)).toEqual([]);
        await terminal.type('y');
        await terminal.press('Enter');
        await terminal.waitFor('Echoed: hi');
        await terminal.waitFor(prompts(2));
        await terminal.type('And again?');
        await terminal.press('Enter');
        await terminal.waitFor('Again: hi');
        await terminal.waitFor(prompts(3));
        await terminal.type('/end');
        await terminal.press('Enter');
        await terminal.waitFor('✔ completed');
        expect(await terminal.exited()).toBe(0);
        const final = await terminal.scrollback();
        await saveScreen('chat', ['at the approval question', asking], ['at the end', final]);
        expect(statusLines(final)).toEqual([]);
        expect(final).toContain('  approved: echo');
        // The end says how the session ended, without repeating the answer just shown.
        expect(final.split('\n').at(-1)).toMatch(/^✔ completed \(3 turns · 1 tool call · \d+ tokens\)$/u);
        expect(final).toContain('✓ echo: echo: hi');

        expect((await keel.waitForResult(runId)).status).toBe('completed');
        expect(sent(model, 0)).toContain('Say hi');
        expect(sent(model, 1)).toContain('echo: hi');
        expect(sent(model, 2)).toContain('And again?');
        model.assertDone();
      });
    } finally {
      await model.close();
    }
  });

  it('leaves the session open on Ctrl-C at an empty prompt, and `keel chat <id>` comes back to it', async () => {
    const model = await ScriptedModel.start([reply.text('First answer.'), reply.text('Second answer.')]);
    try {
      await withTestWorker(server, { model }, async ({ keel, taskQueue }) => {
        const first = await chatTerminal(['--task-queue', taskQueue]);
        await first.waitFor(prompts(1));
        await first.type('Hello');
        await first.press('Enter');
        const runId = sessionIdOn(await first.waitFor('First answer.'));
        await first.waitFor(prompts(2));
        await first.press('C-c');
        const left = await first.waitFor(`Left session ${runId} open: \`keel chat ${runId}\` to come back.`);
        expect(await first.exited()).toBe(0);
        expect(left).not.toContain('✔ completed');

        const second = await chatTerminal([runId, '--task-queue', taskQueue]);
        await second.waitFor(`Continuing session ${runId} (1 answer so far)`);
        await second.waitFor(prompts(1));
        await second.type('Still there?');
        await second.press('Enter');
        await second.waitFor('Second answer.');
        await second.waitFor(prompts(2));
        // Ctrl-D ends the session as /end does.
        await second.press('C-d');
        await second.waitFor('✔ completed');
        expect(await second.exited()).toBe(0);
        expect((await keel.waitForResult(runId)).status).toBe('completed');
        expect(sent(model, 1)).toContain('Still there?');
      });
    } finally {
      await model.close();
    }
  });
});

describe('keel chat: approvals edited or rejected, Ctrl-C while it works, bad usage', () => {
  it('runs a call with edited arguments (e) and rejects another with a reason the model is told (n)', async () => {
    const model = await ScriptedModel.start([
      reply.calls({ name: 'echo', arguments: { text: 'first' } }),
      reply.calls({ name: 'echo', arguments: { text: 'second' } }),
      reply.text('Both decided.'),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ taskQueue }) => {
        const terminal = await chatTerminal(['--task-queue', taskQueue, '--approve', 'echo']);
        await terminal.waitFor(prompts(1));
        await terminal.type('Echo twice');
        await terminal.press('Enter');
        await terminal.waitFor('Run echo(text="first")? [y/n/e(dit)]');
        await terminal.type('e');
        await terminal.press('Enter');
        await terminal.waitFor('arguments> {"text":"first"}');
        await terminal.press('C-u');
        await terminal.type('{"text":"edited"}');
        await terminal.press('Enter');
        await terminal.waitFor('Run echo(text="second")? [y/n/e(dit)]');
        await terminal.type('n');
        await terminal.press('Enter');
        await terminal.waitFor('Why? (the model is told; Enter to skip)');
        await terminal.type('not twice');
        await terminal.press('Enter');
        await terminal.waitFor('Both decided.');
        await terminal.waitFor(prompts(2));
        await terminal.type('/end');
        await terminal.press('Enter');
        expect(await terminal.exited()).toBe(0);
        expect(sent(model, 1)).toContain('echo: edited');
        expect(sent(model, 2)).toContain('not twice');
        expect(await terminal.scrollback()).toContain('  rejected: echo · not twice');
      });
    } finally {
      await model.close();
    }
  });

  it('asks to cancel or detach on Ctrl-C while the model thinks; detached, the session stays open', async () => {
    const thinking = deferred();
    const model = await ScriptedModel.start([reply.held(reply.text('Late answer.'), thinking.promise)]);
    try {
      await withTestWorker(server, { model }, async ({ keel, taskQueue }) => {
        const terminal = await chatTerminal(['--task-queue', taskQueue]);
        await terminal.waitFor(prompts(1));
        await terminal.type('Think hard');
        await terminal.press('Enter');
        const runId = sessionIdOn(await terminal.waitFor(/thinking · turn 1/u));
        await terminal.press('C-c');
        await terminal.waitFor('Cancel the run (c) or detach and leave it running (d)? [c/d]');
        await terminal.type('d');
        await terminal.press('Enter');
        await terminal.waitFor(`Detached; session ${runId} stays open: \`keel chat ${runId}\` to come back.`);
        expect(await terminal.exited()).toBe(0);
        thinking.resolve();
        const state = await waitForState(keel, runId, (current) => current.phase === 'idle');
        expect(state.lastAnswer).toBe('Late answer.');
        await keel.endSession(runId);
        expect((await keel.waitForResult(runId)).status).toBe('completed');
      });
    } finally {
      await model.close();
    }
  });

  it.each([
    [['chat', '--json'], 'keel chat is interactive'],
    [['chat', 'a', 'b'], 'Give at most one argument'],
    [['chat', 'keel-1', '--model', 'x'], 'apply to a new session only'],
    [['chat', 'keel-1', '--id', 'keel-2'], 'not both'],
    [['chat', '--detach'], 'Option --detach does not apply to "keel chat"'],
  ])('refuses %j with exit code 2 and says why', async (args, message) => {
    const { code, stderr } = await runCli(args, { env: environment });
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });
});

describe('keel chat from a pipe', () => {
  it('reads one message a line and prints plain text, no escape sequence', async () => {
    const model = await ScriptedModel.start([reply.text('Piped answer.')]);
    try {
      await withTestWorker(server, { model }, async ({ taskQueue }) => {
        const cli = startCli(['chat', '--task-queue', taskQueue], { env: environment });
        cli.child.stdin!.end('Hello from a pipe\n/end\n');
        expect(await cli.exited).toBe(0);
        expect(cli.stdout).toContain('you> Hello from a pipe\n');
        expect(cli.stdout).toContain('Piped answer.');
        expect(cli.stdout).toContain('✔ completed (1 turn · 0 tool calls');
        expect(cli.stdout + cli.stderr).not.toContain('\u001b');
      });
    } finally {
      await model.close();
    }
  });

  it('gives a new session the --id asked for, and refuses to continue it once it has ended', async () => {
    const model = await ScriptedModel.start([reply.text('Named answer.')]);
    try {
      await withTestWorker(server, { model }, async ({ keel, taskQueue }) => {
        const runId = `chat-${randomUUID()}`;
        const cli = startCli(['chat', '--id', runId, '--task-queue', taskQueue], { env: environment });
        cli.child.stdin!.end('Hello by name\n/end\n');
        expect(await cli.exited).toBe(0);
        expect(cli.stderr).toContain(`Session ${runId} started.`);
        expect((await keel.waitForResult(runId)).status).toBe('completed');

        const again = await runCli(['chat', runId, '--task-queue', taskQueue], { env: environment });
        expect(again.code).toBe(1);
        expect(again.stderr).toContain(`Run ${runId} has ended (COMPLETED)`);
      });
    } finally {
      await model.close();
    }
  });
});
