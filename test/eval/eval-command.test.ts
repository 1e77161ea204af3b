import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeelClient } from '../../src/client.js';
import { EvalReport } from '../../src/eval/report.js';
import { defineTool } from '../../src/tools/define-tool.js';
import type { ScriptStep } from '../../src/testing/index.js';
import { runCli, startCli, testServerCliEnvironment } from '../support/cli.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { RecordedRequest } from '../support/scripted-model.js';
import { schemaErrors } from '../support/published-schemas.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** The three recorded tasks; each names its case, so the scripted model knows which it answers. */
const TASKS = {
  same: 'case same: say hello through echo',
  answer: 'case answer: add 2 and 3',
  calls: 'case calls: write a note',
  inline: 'case inline: just greet',
} as const;
type CaseName = keyof typeof TASKS;

/**
 * What each model answers, turn by turn. `model-a` is the recorded runs' model; `model-b`, the
 * candidate, answers `same` alike (its arguments in another key order), `answer` in other words
 * after the same call, and `calls` with other calls: an echo the recording lacks and a write_note
 * with other arguments (side-effecting: never run in the eval).
 */
const PLANS: Record<string, Record<CaseName, ScriptStep[]>> = {
  'model-a': {
    same: [reply.calls({ name: 'echo', arguments: { text: 'hello' } }), reply.text('Said hello.')],
    answer: [reply.calls({ name: 'add', arguments: { a: 2, b: 3 } }), reply.text('The sum is 5.')],
    calls: [reply.calls({ name: 'write_note', arguments: { text: 'x' } }), reply.text('Noted.')],
    inline: [],
  },
  'model-b': {
    same: [reply.calls({ name: 'echo', arguments: { text: 'hello' } }), reply.text('Said hello.')],
    answer: [reply.calls({ name: 'add', arguments: { b: 3, a: 2 } }), reply.text('The total is 5.')],
    calls: [
      reply.calls(
        { name: 'echo', arguments: { text: 'note' } },
        { name: 'write_note', arguments: { text: 'y' } },
      ),
      reply.text('Could not note.'),
    ],
    inline: [reply.text('Hi there.')],
  },
};

/** model-b costs twice what model-a does. */
const PRICES = { 'model-a': { input: 1, output: 1 }, 'model-b': { input: 2, output: 2 } };

/** A model that answers by the run's case and turn, found from the task or the chained response. */
function casePolicy(): (request: RecordedRequest) => ScriptStep {
  const origins: Array<{ name: CaseName; turn: number }> = [];
  return (request) => {
    const previous = request.body.previous_response_id;
    let origin: { name: CaseName; turn: number };
    if (previous === undefined) {
      const input = JSON.stringify(request.body.input);
      const name = (Object.keys(TASKS) as CaseName[]).find((key) => input.includes(TASKS[key]));
      if (name === undefined) throw new Error(`no case in ${input}`);
      origin = { name, turn: 0 };
    } else {
      const before = origins[Number(previous.replace('resp_', '')) - 1];
      if (before === undefined) throw new Error(`unknown previous response ${previous}`);
      origin = { name: before.name, turn: before.turn + 1 };
    }
    origins[request.index] = origin;
    const step = PLANS[request.body.model]?.[origin.name]?.[origin.turn];
    if (step === undefined)
      throw new Error(`${request.body.model} has no turn ${origin.turn} for ${origin.name}`);
    return step;
  };
}

/** Tools that count their runs: the eval must answer recorded calls without running them. */
function countedTools() {
  const ran: string[] = [];
  const echo = defineTool({
    name: 'echo',
    description: 'Echo the text back.',
    schema: z.object({ text: z.string() }),
    readOnly: true,
    execute: ({ text }) => {
      ran.push(`echo ${text}`);
      return `echo: ${text}`;
    },
  });
  const add = defineTool({
    name: 'add',
    description: 'Add two numbers.',
    schema: z.object({ a: z.number(), b: z.number() }),
    readOnly: true,
    execute: ({ a, b }) => {
      ran.push(`add ${a} ${b}`);
      return String(a + b);
    },
  });
  const writeNote = defineTool({
    name: 'write_note',
    description: 'Write a note (a side effect).',
    schema: z.object({ text: z.string() }),
    execute: ({ text }) => {
      ran.push(`write_note ${text}`);
      return `noted ${text}`;
    },
  });
  return { tools: [echo, add, writeNote], ran };
}

/** The recorded side: the three tasks run once under model-a. */
async function recordRuns(keel: KeelClient): Promise<Record<'same' | 'answer' | 'calls', string>> {
  const ids = { same: '', answer: '', calls: '' };
  for (const name of ['same', 'answer', 'calls'] as const) {
    ids[name] = await keel.startRun({ task: TASKS[name], model: 'model-a' });
    expect(await keel.waitForResult(ids[name])).toMatchObject({ status: 'completed' });
  }
  return ids;
}

/** The function-call outputs model-b was sent, in order. */
function candidateOutputs(model: ScriptedModel): string[] {
  return model.requests
    .filter((request) => request.body.model === 'model-b')
    .flatMap((request) => request.body.input)
    .filter((item) => item.type === 'function_call_output')
    .map((item) => String(item.output));
}

/** The report `keel eval --json` printed, checked against its zod schema and the published one. */
function reportOf(stdout: string): EvalReport & { evalId: string } {
  const printed = JSON.parse(stdout) as { evalId: string };
  expect(schemaErrors('eval-report.schema.json', printed)).toEqual([]);
  return { ...EvalReport.parse(printed), evalId: printed.evalId };
}

describe('keel eval', () => {
  it('re-runs recorded runs against another model, tools answered from the recordings, and reports exactly what changed in all three formats', async () => {
    const model = await ScriptedModel.start(casePolicy());
    const { tools, ran } = countedTools();
    const directory = await mkdtemp(path.join(tmpdir(), 'keel-eval-'));
    const html = path.join(directory, 'report.html');
    try {
      const options = { model, tools, modelMode: 'foreground' as const, prices: PRICES };
      await withTestWorker(server, options, async ({ keel, taskQueue }) => {
        const ids = await recordRuns(keel);
        expect(ran).toEqual(['echo hello', 'add 2 3', 'write_note x']);
        const args = [
          'eval',
          ...['--run', ids.same, '--run', ids.answer, '--run', ids.calls],
          ...['--model', 'model-b', '--unmatched', 'run', '--task-queue', taskQueue],
        ];
        const env = testServerCliEnvironment();
        const json = await runCli([...args, '--json', '--html', html], { env });
        expect(json.stderr).toContain('started: 3 case(s)');
        expect(json.code).toBe(4);
        const report = reportOf(json.stdout);
        const byCase = Object.fromEntries(report.cases.map((entry) => [entry.caseId, entry]));
        const same = byCase[ids.same]!;
        const answer = byCase[ids.answer]!;
        const calls = byCase[ids.calls]!;
        expect(report.cases.map((entry) => entry.caseId)).toEqual([ids.same, ids.answer, ids.calls]);
        // The same case: the same answer after the same call (its arguments in another key order).
        expect(same).toMatchObject({ passed: true, answer: { same: true }, calls: { same: true } });
        expect(same.divergence).toMatchObject({ diverged: false, refusedCalls: 0 });
        // Other words after the same call.
        expect(answer).toMatchObject({ passed: false, answer: { same: false }, calls: { same: true } });
        expect(answer.candidate.outcome.text).toBe('The total is 5.');
        expect(answer.recorded?.outcome.text).toBe('The sum is 5.');
        // Other calls: the recorded write_note gone, an echo and another write_note new; that
        // write_note is side-effecting and not allowed, so it was refused, not run.
        expect(calls.calls).toMatchObject({ same: false, kept: 0, removed: 1, added: 2 });
        expect(
          calls.calls?.entries.map((entry) => `${entry.change} ${entry.name} ${entry.arguments}`),
        ).toEqual([
          'removed write_note {"text":"x"}',
          'added echo {"text":"note"}',
          'added write_note {"text":"y"}',
        ]);
        expect(calls.divergence).toMatchObject({ diverged: false, refusedCalls: 1 });
        expect(report.totals).toMatchObject({ cases: 3, passed: 1, failed: 2, sameAnswer: 1, diverged: 0 });
        expect(report.totals.turns).toEqual({ before: 6, after: 6 });
        // Tokens and cost on both sides, from each run's own usage and the worker's prices.
        for (const entry of report.cases) {
          expect(entry.tokens.before).toBe(entry.recorded?.usage.totalTokens);
          expect(entry.tokens.after).toBe(entry.candidate.usage.totalTokens);
          expect(entry.costUsd.after).toBeGreaterThan(entry.costUsd.before!);
        }
        // Only the unmatched read-only echo ran; the recorded calls were answered from the recording.
        expect(ran).toEqual(['echo hello', 'add 2 3', 'write_note x', 'echo note']);
        const outputs = candidateOutputs(model);
        expect(outputs).toContain('echo: hello');
        expect(outputs).toContain('5');
        expect(outputs.find((output) => output.includes('not_recorded'))).toContain('write_note');

        // The table, from the same eval followed again under its id: nothing runs twice.
        const requests = model.requests.length;
        const table = await runCli([...args, '--id', report.evalId], { env });
        expect(table.code).toBe(4);
        expect(table.stderr).toContain(`Eval ${report.evalId} is there already`);
        expect(model.requests).toHaveLength(requests);
        const rows = table.stdout.split('\n');
        // Each case's row starts with its id (cut to the column's width).
        for (const runId of Object.values(ids))
          expect(rows.some((row) => row.startsWith(runId.slice(0, 24)))).toBe(true);
        expect(table.stdout).toMatch(/1 passed/u);
        expect(table.stdout).not.toContain('\u001b');

        // A query finds the recorded runs, skipping the eval's own candidates (newer, and ended
        // too) without counting them toward --limit.
        const queried = await runCli(
          [
            'eval',
            ...['--query', `TaskQueue = "${taskQueue}"`, '--limit', '3', '--model', 'model-b'],
            ...['--unmatched', 'run', '--json', '--task-queue', taskQueue],
          ],
          { env },
        );
        expect(queried.code).toBe(4);
        expect(
          reportOf(queried.stdout)
            .cases.map((entry) => entry.caseId)
            .sort(),
        ).toEqual(Object.values(ids).sort());
        expect(queried.stderr).toContain(`Skipped run ${report.evalId}.`);

        // The HTML report: both sides of every case, on one page that needs nothing else.
        const page = await readFile(html, 'utf8');
        for (const text of ['The sum is 5.', 'The total is 5.', 'Noted.', 'Could not note.', 'Said hello.'])
          expect(page).toContain(text);
        expect(page).not.toMatch(/<script|<link|src=/iu);
      });
    } finally {
      await model.close();
    }
  });

  it("checks an eval file's assertions, stops a case that leaves the recording under diverge, and runs inline tasks", async () => {
    const model = await ScriptedModel.start(casePolicy());
    const { tools, ran } = countedTools();
    const directory = await mkdtemp(path.join(tmpdir(), 'keel-eval-'));
    try {
      await withTestWorker(server, { model, tools, modelMode: 'foreground' }, async ({ keel, taskQueue }) => {
        const ids = await recordRuns(keel);
        const file = path.join(directory, 'eval.json');
        await writeFile(
          file,
          JSON.stringify({
            candidate: { model: 'model-b' },
            unmatched: 'diverge',
            cases: [
              { id: 'answer', run: ids.answer, expect: { answerMatches: '/\\b5\\b/', maxTurns: 2 } },
              { id: 'calls', run: ids.calls },
              {
                id: 'inline',
                task: TASKS.inline,
                expect: { answerMatches: '/^hi/i', maxTurns: 1, notCalls: ['write_note'] },
              },
            ],
          }),
        );
        const run = await runCli(['eval', file, '--json', '--task-queue', taskQueue], {
          env: testServerCliEnvironment(),
        });
        expect(run.code).toBe(4);
        const report = reportOf(run.stdout);
        const byCase = Object.fromEntries(report.cases.map((entry) => [entry.caseId, entry]));
        // Other words, but the file's assertions hold: it passes.
        expect(byCase.answer).toMatchObject({ passed: true, answer: { same: false } });
        expect(byCase.answer!.assertions.every((assertion) => assertion.result === 'passed')).toBe(true);
        // Its first call has no recorded answer: the case stops there, diverged.
        expect(byCase.calls).toMatchObject({
          passed: false,
          divergence: { diverged: true },
          stop: { after: { status: 'failed', errorType: 'KeelError.Diverged' } },
        });
        expect(byCase.calls!.divergence.reason).toContain('echo');
        expect(byCase.inline).toMatchObject({ passed: true, recorded: null, calls: null });
        expect(report.totals).toMatchObject({ cases: 3, passed: 2, failed: 1, diverged: 1 });
        // Diverging runs nothing of the turn it diverged in.
        expect(ran).toEqual(['echo hello', 'add 2 3', 'write_note x']);
      });
    } finally {
      await model.close();
    }
  });
  it('reports a cancelled eval: the case it cancelled as it ended, the one it never started as never started', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const model = await ScriptedModel.start((request) =>
      JSON.stringify(request.body.input).includes('case wait')
        ? reply.held(reply.text('too late'), held)
        : reply.text('never asked'),
    );
    const directory = await mkdtemp(path.join(tmpdir(), 'keel-eval-'));
    try {
      await withTestWorker(server, { model, modelMode: 'foreground' }, async ({ taskQueue }) => {
        const file = path.join(directory, 'eval.json');
        await writeFile(
          file,
          JSON.stringify({
            concurrency: 1,
            cases: [
              { id: 'wait', task: 'case wait: answer slowly' },
              { id: 'later', task: 'case later: answer' },
            ],
          }),
        );
        const evalId = `keel-eval-cancelled-${Date.now()}`;
        const cli = startCli(['eval', file, '--id', evalId, '--json', '--task-queue', taskQueue], {
          env: testServerCliEnvironment(),
        });
        await model.waitForRequests(1);
        await server.client.workflow.getHandle(evalId).cancel();
        expect(await cli.exited).toBe(4);
        expect(cli.stderr).toContain(`Eval ${evalId} was cancelled`);
        const report = reportOf(cli.stdout);
        expect(JSON.parse(cli.stdout)).toMatchObject({ evalId, cancelled: true });
        const byCase = Object.fromEntries(report.cases.map((entry) => [entry.caseId, entry]));
        expect(byCase.wait).toMatchObject({ passed: false, stop: { after: { status: 'cancelled' } } });
        expect(byCase.later).toMatchObject({ passed: false, stop: { after: { status: 'cancelled' } } });
        expect(byCase.wait!.candidate.outcome.reason ?? '').not.toContain('never started');
        expect(byCase.later!.candidate.outcome).toMatchObject({ reason: 'the candidate run never started' });
        expect(report.totals).toMatchObject({ cases: 2, passed: 0, failed: 2 });
        // Only the first case asked the model anything.
        expect(model.requests).toHaveLength(1);
      });
    } finally {
      release();
      await model.close();
    }
  });
});
