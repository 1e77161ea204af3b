import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/cli/terminal-text.js';
import { keelEntry, runCli, testServerCliEnvironment } from '../support/cli.js';
import { deferred } from '../support/deferred.js';
import { connectTestServer, temporaryWorkspace, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { waitForState } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { Terminal } from '../support/terminal.js';
import { blockingTool, echoTool } from '../support/test-tools.js';
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

async function keelTerminal(args: string[], columns = 100, cwd?: string): Promise<Terminal> {
  const terminal = await Terminal.keel(args, {
    env: environment,
    columns,
    ...(cwd === undefined ? {} : { cwd }),
  });
  opened.push(terminal);
  return terminal;
}

describe('keel run in a terminal', () => {
  it('redraws one status line in place while the model thinks and a tool runs, and leaves none behind', async () => {
    const thinking = deferred();
    const block = blockingTool();
    const model = await ScriptedModel.start([
      reply.held(
        reply.items([{ text: 'Blocking first.' }, { call: { name: 'block', arguments: { label: 'x' } } }]),
        thinking.promise,
      ),
      reply.text('All done.'),
    ]);
    try {
      await withTestWorker(server, { model, tools: [block.tool] }, async ({ taskQueue }) => {
        const terminal = await keelTerminal(['run', 'Block a while', '--task-queue', taskQueue]);
        await terminal.waitFor(/thinking · turn 1\/\d+ · \d+s · \d+ tokens/u);
        // The line is redrawn (the clock moves on), and it is still one line, not one per redraw.
        await terminal.waitFor(/thinking · turn 1\/\d+ · [1-9]\d*s ·/u);
        expect(statusLines(await terminal.scrollback())).toHaveLength(1);
        thinking.resolve();
        await terminal.waitFor(/running block · turn 1/u);
        const acting = await terminal.scrollback();
        expect(acting).toMatch(/^▸ turn 1 · \d+ tokens · Blocking first\.$/mu);
        expect(acting).toContain('  → block');
        expect(statusLines(acting)).toEqual([expect.stringMatching(/running block · turn 1/u)]);
        // The status line is the last line, below the durable ones.
        expect(acting.split('\n').at(-1)).toMatch(/running block/u);
        block.release.resolve('released');
        await terminal.waitFor('✔ completed');
        expect(await terminal.exited()).toBe(0);
        const final = await terminal.scrollback();
        expect(statusLines(final)).toEqual([]);
        expect(final).toContain('✓ block: x: released');
        expect(final).toContain('✔ completed (2 turns · 1 tool call · ');
        expect(final.split('\n').at(-1)).toBe('All done.');
      });
    } finally {
      await model.close();
    }
  });

  it('cuts previews to the terminal width', async () => {
    const long = 'A very long thought about the workspace that goes on and on. '.repeat(5);
    const model = await ScriptedModel.start([
      reply.items([{ text: long }, { call: { name: 'echo', arguments: { text: long } } }]),
      reply.text('Short answer.'),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ taskQueue }) => {
        const terminal = await keelTerminal(['run', 'Think long', '--task-queue', taskQueue], 60);
        expect(await terminal.exited()).toBe(0);
        const lines = (await terminal.scrollback()).split('\n');
        const events = lines.filter((line) => /^(▸| {2}[→✓✗])/u.test(line));
        expect(events).toEqual([
          expect.stringMatching(/^▸ turn 1 · \d+ tokens · A very long thought .*…$/u),
          expect.stringMatching(/^ {2}→ echo .*…$/u),
          expect.stringMatching(/^ {2}✓ echo: echo: A very long .*…$/u),
          expect.stringMatching(/^▸ turn 2 · \d+ tokens · Short answer\.$/u),
        ]);
        for (const line of events) expect(displayWidth(line)).toBeLessThanOrEqual(60);
        expect(lines.at(-1)).toBe('Short answer.');
      });
    } finally {
      await model.close();
    }
  });

  it('re-reads the width when the terminal is resized: the status line and previews fit the new one', async () => {
    const thinking = deferred();
    const long = 'A thought that is far too long for a narrow terminal window. '.repeat(3);
    const model = await ScriptedModel.start([reply.held(reply.text(long), thinking.promise)]);
    try {
      await withTestWorker(server, { model }, async ({ taskQueue }) => {
        const terminal = await keelTerminal(['run', 'Resize me', '--task-queue', taskQueue], 100);
        await terminal.waitFor(/thinking · turn 1\/\d+ · \d+s · \d+ tokens/u);
        await terminal.resize(30);
        // Redrawn at the new width (cut, so the spinner line ends in …), with no piece of the old one left.
        await terminal.waitFor(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] thinking · turn 1.*…$/mu);
        const narrow = await terminal.screen();
        expect(statusLines(narrow)).toHaveLength(1);
        // The old, wider line said how many tokens; the cut one has no room for that, nor may any row.
        expect(narrow).not.toContain('token');
        thinking.resolve();
        expect(await terminal.exited()).toBe(0);
        const turn = (await terminal.scrollback()).split('\n').find((line) => line.startsWith('▸ turn 1'));
        expect(turn).toMatch(/…$/u);
        expect(displayWidth(turn!)).toBeLessThanOrEqual(30);
      });
    } finally {
      await model.close();
    }
  });

  it('says a call waits for approval on the status line, with the cost, until `keel approve` lets it run', async () => {
    const model = await ScriptedModel.start([
      reply.items([{ text: 'Writing it down.' }, { call: { name: 'echo', arguments: { text: 'hi' } } }]),
      reply.text('Written.'),
    ]);
    try {
      await withTestWorker(
        server,
        { model, tools: [echoTool], prices: { 'scripted-model': { input: 2.5, output: 10 } } },
        async ({ taskQueue }) => {
          const terminal = await keelTerminal([
            'run',
            'Echo it',
            '--approve',
            'echo',
            '--task-queue',
            taskQueue,
          ]);
          // The event line and the status line are drawn apart: on a busy machine either may come first.
          await terminal.waitFor('⏸ echo waits for approval (call call_1_1): {"text":"hi"}');
          const waiting = await terminal.waitFor(
            /waiting for approval: echo · turn 1\/\d+ · \d+s · 112 tokens · \$0\.0004/u,
          );
          expect(waiting).toContain('⏸ echo waits for approval (call call_1_1): {"text":"hi"}');
          const runId = /Run (keel-[0-9a-f-]+) started/u.exec(waiting)![1]!;
          const approved = await runCli(['approve', runId, 'call_1_1', '--task-queue', taskQueue], {
            env: environment,
          });
          expect(approved.code).toBe(0);
          await terminal.waitFor('✔ completed');
          expect(await terminal.exited()).toBe(0);
          const final = await terminal.scrollback();
          await saveScreen(
            'approval',
            ['while the call waits for approval', waiting],
            [`after \`keel approve ${runId} call_1_1\` in another terminal`, final],
          );
          expect(statusLines(final)).toEqual([]);
          expect(final).toContain('  approved: echo');
          expect(final).toContain('✓ echo: echo: hi');
        },
      );
    } finally {
      await model.close();
    }
  });

  it('shows the demo run with its status line and ends clean', async () => {
    const workspace = await temporaryWorkspace();
    await writeFile(path.join(workspace, 'README.md'), '# Tiny project\n\nIt does one thing.\n');
    const terminal = await keelTerminal(['run', '--demo', 'What is in here?'], 100, workspace);
    // Each of the demo's three turns thinks for 1.2 s; the status line is drawn from a state query
    // every 400 ms. On a loaded machine the first query can go unanswered for its whole 5 s
    // deadline while the hosted worker starts, and the run can pass all three windows meanwhile:
    // the command then says it waited for a worker, and only then may the status line be missing.
    const thinking = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] thinking · turn [123]\/\d+/u;
    const seen = await terminal.waitFor(new RegExp(`${thinking.source}|✔ completed`, 'u'), 60_000);
    const live = await terminal.screen();
    expect(live).not.toContain('No worker polls');
    expect(await terminal.exited(90_000)).toBe(0);
    const final = await terminal.scrollback();
    if (!thinking.test(seen)) {
      expect(final, 'no status line was drawn, though the run did not wait for a worker').toContain(
        '… waiting for a worker',
      );
      console.log(
        '[measure] demo: the run ended before the state query first answered; no status line to see',
      );
    }
    await saveScreen('demo', ['while the model thinks', live], ['at the end', final]);
    expect(statusLines(final)).toEqual([]);
    expect(final).toContain('→ read_file README.md');
    expect(final).toContain('The workspace has 1 entry; README.md should say what it is.');
    expect(final).toContain('✔ completed (3 turns · 2 tool calls');
    // The demo's words reach the screen whole: nothing in them is taken for a secret and redacted.
    expect(final).toContain("This answer came from Keel's scripted demo model, not from an AI");
  });
});

describe('keel follow in a terminal', () => {
  it('follows a run it did not start with the same status line, and leaves none behind', async () => {
    const thinking = deferred();
    const model = await ScriptedModel.start([reply.held(reply.text('Followed.'), thinking.promise)]);
    try {
      await withTestWorker(server, { model }, async ({ keel, taskQueue }) => {
        const runId = await keel.startRun({ task: 'Be followed' });
        const terminal = await keelTerminal(['follow', runId, '--task-queue', taskQueue]);
        await terminal.waitFor(/thinking · turn 1\/\d+ · \d+s · \d+ tokens/u);
        expect(statusLines(await terminal.scrollback())).toHaveLength(1);
        thinking.resolve();
        await terminal.waitFor('✔ completed (1 turn · 0 tool calls');
        expect(await terminal.exited()).toBe(0);
        const final = await terminal.scrollback();
        expect(statusLines(final)).toEqual([]);
        expect(final.split('\n').at(-1)).toBe('Followed.');
      });
    } finally {
      await model.close();
    }
  });
});

describe('the model writing, live in a terminal', () => {
  it.each([{ command: 'run' }, { command: 'follow' }])(
    'keel $command shows the line being written in the status line, safe to print, then the status again',
    async ({ command }) => {
      const halfway = deferred();
      const model = await ScriptedModel.start([
        reply.streamed(reply.text('Reading \u001b]0;owned\u0007the files now and then answering.'), {
          pauseAfter: 3,
          resume: halfway.promise,
        }),
      ]);
      try {
        await withTestWorker(server, { model }, async ({ keel, taskQueue }) => {
          let terminal: Terminal;
          if (command === 'run') {
            terminal = await keelTerminal(['run', 'Write slowly', '--task-queue', taskQueue]);
          } else {
            const runId = await keel.startRun({ task: 'Write slowly' });
            terminal = await keelTerminal(['follow', runId, '--task-queue', taskQueue]);
          }
          // Three deltas are out and the model waits: the status line shows them, nothing durable yet.
          const writing = await terminal.waitFor(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Reading the files/mu);
          expect(statusLines(writing)).toHaveLength(1);
          expect(writing).not.toContain('answering');
          expect(writing).not.toContain('owned');
          expect(writing).not.toMatch(/^▸ turn 1/mu);
          halfway.resolve();
          // Failed once in CI (the run stayed "thinking"): a failure says what the run was doing.
          await terminal.waitFor('✔ completed (1 turn · 0 tool calls').catch(async (error: unknown) => {
            const runId = /Run (\S+) started/u.exec(await terminal.scrollback())?.[1];
            const description =
              runId === undefined
                ? undefined
                : await keel.temporal.workflow
                    .getHandle(runId)
                    .describe()
                    .catch(() => undefined);
            const pending = description?.raw.pendingActivities?.map((activity) => ({
              type: activity.activityType?.name,
              attempt: activity.attempt,
              state: activity.state,
              lastFailure: activity.lastFailure?.message,
            }));
            throw new Error(
              `${(error as Error).message}\nrun ${runId} ${description?.status.name}; pending activities ${JSON.stringify(pending)}; ` +
                `model requests ${model.requests.length}; model problems ${JSON.stringify(model.problems)}`,
            );
          });
          expect(await terminal.exited()).toBe(0);
          const final = await terminal.scrollback();
          expect(statusLines(final)).toEqual([]);
          expect(final.split('\n').at(-1)).toBe('Reading the files now and then answering.');
        });
      } finally {
        await model.close();
      }
    },
  );
});

describe('counts in the CLI output', () => {
  it('reads "1 message waits", not "1 message(s) wait"', async () => {
    const thinking = deferred();
    const model = await ScriptedModel.start([
      reply.held(reply.text('Hello.'), thinking.promise),
      reply.text('Again.'),
    ]);
    try {
      await withTestWorker(server, { model }, async ({ keel, taskQueue }) => {
        const runId = await keel.startRun({ task: 'Talk', session: true });
        await model.waitForRequests(1);
        // The run is busy with its first turn: the message waits for the next one.
        const sent = await runCli(['send', runId, 'And then?', '--task-queue', taskQueue], {
          env: environment,
        });
        expect(sent.stdout).toBe("Sent; 1 message waits for the run's next turn.\n");
        thinking.resolve();
        await waitForState(keel, runId, (state) => state.answers === 2 && state.phase === 'idle');
        await keel.endSession(runId);
        expect((await keel.waitForResult(runId)).status).toBe('completed');
      });
    } finally {
      await model.close();
    }
  });
});

describe('keel run without a live terminal', () => {
  // Escape sequences a hostile model or tool could write: clear the screen, retitle, write the clipboard.
  const hostile =
    'Clear \u001b[2J\u001b[H title \u001b]0;owned\u0007 clip \u001b]52;c;aGk=\u0007 bell \u0007 done';

  it('prints plain lines with no escape sequence at all, even what the model and tools wrote', async () => {
    const model = await ScriptedModel.start([
      reply.items([{ text: hostile }, { call: { name: 'echo', arguments: { text: hostile } } }]),
      reply.text(`Answer: ${hostile}`),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ taskQueue }) => {
        const { code, stdout, stderr } = await runCli(['run', 'Be hostile', '--task-queue', taskQueue], {
          env: environment,
        });
        expect(code).toBe(0);
        expect(stdout).toContain('▸ turn 1');
        expect(stdout).toContain('✓ echo: echo: Clear');
        expect(stdout).toContain('Answer: Clear');
        // eslint-disable-next-line no-control-regex -- no control character may reach the output
        expect(stdout + stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u);
      });
    } finally {
      await model.close();
    }
  });

  it.each([
    ['NO_COLOR=1', false],
    ['TERM=dumb', false],
    ['TERM=xterm-256color', true],
  ])('in a terminal with %s, draws a status line: %s', async (setting, live) => {
    const model = await ScriptedModel.start([reply.text('Plain answer.')]);
    const raw = path.join(await temporaryWorkspace(), 'raw.log');
    try {
      await withTestWorker(server, { model }, async ({ taskQueue }) => {
        // `script` gives keel a terminal of its own and records every byte it writes to it.
        const command = `env ${setting} ${process.execPath} ${keelEntry()} run Plain --task-queue ${taskQueue}`;
        const terminal = await Terminal.start(['script', '-qefc', command, raw], { env: environment });
        opened.push(terminal);
        expect(await terminal.exited()).toBe(0);
        const bytes = await readFile(raw, 'utf8');
        expect(bytes).toContain('Plain answer.');
        if (live) expect(bytes).toContain('\u001b[2K');
        else expect(bytes).not.toContain('\u001b');
      });
    } finally {
      await model.close();
    }
  });
});
