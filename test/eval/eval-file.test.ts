import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvalFileError, loadEvalFile } from '../../src/eval/eval-file.js';
import { loadJudge } from '../../src/eval/judge.js';

let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'keel-eval-file-'));
  await mkdir(path.join(folder, 'cases'));
  await writeFile(path.join(folder, 'cases', 'ticket-2.json'), '{}');
  await writeFile(path.join(folder, 'prompt.md'), 'Be brief.\n');
  await writeFile(
    path.join(folder, 'judge.mjs'),
    'export default ({ recorded, candidate }) => ({ same: recorded.length === candidate.length, note: "by length" });\n',
  );
  await writeFile(path.join(folder, 'not-a-judge.mjs'), 'export default 42;\n');
  await writeFile(path.join(folder, 'broken-judge.mjs'), 'export default (;\n');
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** Writes `content` (JSON unless a string) as an eval file and loads it. */
async function load(content: unknown, name = 'eval.json') {
  const file = path.join(folder, name);
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
  return loadEvalFile(file);
}

/** The problems loading `content` reports, without the file name each starts with. */
async function problems(content: unknown): Promise<string[]> {
  const file = path.join(folder, 'eval.json');
  const error = await load(content).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(EvalFileError);
  const message = (error as EvalFileError).message.split('\n');
  for (const line of message) expect(line.startsWith(`${file}: `)).toBe(true);
  return message.map((line) => line.slice(file.length + 2));
}

describe('loadEvalFile', () => {
  it('loads the agreed example, resolving paths against its folder and merging expectations', async () => {
    const loaded = await load({
      candidate: { instructionsFile: 'prompt.md', model: 'gpt-5-mini', tools: ['echo'] },
      unmatched: 'refuse',
      allowTools: [],
      judge: './judge.mjs',
      concurrency: 2,
      expect: { sameAnswer: true, notCalls: ['rm'] },
      cases: [
        { id: 'refund-1', run: 'keel-123' },
        { id: 'ticket-2', history: 'cases/ticket-2.json' },
        { id: 'recent', query: 'KeelStatus = "completed"', limit: 20 },
        {
          id: 'inline',
          task: 'Say hi',
          expect: {
            answerMatches: '/hi/i',
            calls: ['echo'],
            notCalls: ['write_file'],
            maxTurns: 6,
            maxCostUsd: 0.02,
            maxTokens: 5000,
            status: 'completed',
          },
        },
      ],
    });
    expect(loaded.candidate).toEqual({
      instructionsFile: path.join(folder, 'prompt.md'),
      instructions: 'Be brief.\n',
      model: 'gpt-5-mini',
      tools: ['echo'],
    });
    expect(loaded.judge).toBe(path.join(folder, 'judge.mjs'));
    expect(loaded.match).toBe('judge');
    expect(loaded.concurrency).toBe(2);
    expect(loaded.cases).toEqual([
      {
        id: 'refund-1',
        source: { kind: 'run', runId: 'keel-123' },
        expect: { sameAnswer: true, notCalls: ['rm'] },
      },
      {
        id: 'ticket-2',
        source: { kind: 'history', path: path.join(folder, 'cases', 'ticket-2.json') },
        expect: { sameAnswer: true, notCalls: ['rm'] },
      },
      {
        id: 'recent',
        source: { kind: 'query', query: 'KeelStatus = "completed"', limit: 20 },
        expect: { sameAnswer: true, notCalls: ['rm'] },
      },
      {
        id: 'inline',
        source: { kind: 'task', task: 'Say hi' },
        // An inline task has no recorded answer: the file's sameAnswer does not apply to it.
        expect: {
          answerMatches: '/hi/i',
          calls: ['echo'],
          notCalls: ['rm', 'write_file'],
          maxTurns: 6,
          maxCostUsd: 0.02,
          maxTokens: 5000,
          status: 'completed',
        },
      },
    ]);
  });

  it('fills in the defaults', async () => {
    const loaded = await load({ cases: [{ id: 'a', run: 'r' }] });
    expect(loaded).toMatchObject({
      candidate: {},
      unmatched: 'refuse',
      allowTools: [],
      match: 'exact',
      concurrency: 4,
    });
    expect(loaded.cases[0]!.source).toEqual({ kind: 'run', runId: 'r' });
    expect((await load({ cases: [{ id: 'q', query: 'x' }] })).cases[0]!.source).toMatchObject({ limit: 20 });
  });

  it('takes a "$schema" for editors and ignores it; one that is no string is an error', async () => {
    const loaded = await load({
      $schema: '../node_modules/keel/docs/schemas/eval-file.schema.json',
      cases: [{ id: 'a', run: 'r' }],
    });
    expect(loaded.cases.map((entry) => entry.id)).toEqual(['a']);
    expect(await problems({ $schema: 1, cases: [{ id: 'a', run: 'r' }] })).toEqual([
      expect.stringMatching(/^\$schema: /u),
    ]);
  });

  it('names every unknown key by its JSON path, prototype names included', async () => {
    expect(
      await problems(
        '{"cases":[{"id":"a","run":"r","expect":{"maxTurn":3}},{"id":"b","run":"r","__proto__":{"x":1}}],"candidat":{},"constructor":1}',
      ),
    ).toEqual([
      'cases[0].expect.maxTurn: unknown key',
      'cases[1].__proto__: unknown key',
      'candidat: unknown key',
      'constructor: unknown key',
    ]);
  });

  it('names the case of a bad regular expression', async () => {
    const found = await problems({ cases: [{ id: 'a', run: 'r', expect: { answerMatches: '/[/' } }] });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^cases\[0\]\.expect\.answerMatches: is not a valid regular expression: /);
  });

  it('refuses cases without exactly one source, repeated ids, and misplaced settings', async () => {
    expect(
      await problems({
        match: 'normalised',
        judge: 'judge.mjs',
        cases: [
          { id: 'a' },
          { id: 'b', run: 'r', task: 't' },
          { id: 'a', run: 'r', limit: 3 },
          { id: 'c', task: 't', expect: { sameAnswer: true } },
          { id: 'bad id!', run: 'r' },
        ],
      }),
    ).toEqual([
      'cases[0]: needs one of run, history, query or task',
      'cases[1]: has run and task: give exactly one of run, history, query or task',
      'cases[2].limit: applies only to a query case',
      'cases[3].expect.sameAnswer: an inline task has no recorded answer to compare with',
      'cases[4].id: must be 1–100 letters, digits, dots, dashes or underscores',
      'match: is normalised but a judge is set: set match to judge, or drop judge',
      'cases[2].id: repeats the id a of cases[0]',
    ]);
    expect(
      await problems({
        cases: [
          { id: 'a', run: 'r' },
          { id: 'a', run: 's' },
        ],
      }),
    ).toEqual(['cases[1].id: repeats the id a of cases[0]']);
    expect(await problems({ match: 'exact', judge: 'judge.mjs', cases: [{ id: 'a', run: 'r' }] })).toEqual([
      'match: is exact but a judge is set: set match to judge, or drop judge',
    ]);
    expect(await problems({ match: 'judge', cases: [{ id: 'a', run: 'r' }] })).toEqual([
      'judge: match is judge: name the judge module',
    ]);
    expect(await problems({ cases: [] })).toEqual(['cases: Too small: expected array to have >=1 items']);
  });

  it('names files that are missing, relative to the eval file', async () => {
    expect(
      await problems({
        candidate: { instructionsFile: 'missing.md' },
        judge: 'missing.mjs',
        cases: [{ id: 'a', history: 'cases/missing.json' }],
      }),
    ).toEqual([
      `candidate.instructionsFile: cannot read ${path.join(folder, 'missing.md')} (ENOENT)`,
      `judge: cannot read ${path.join(folder, 'missing.mjs')} (ENOENT)`,
      `cases[0].history: cannot read ${path.join(folder, 'cases', 'missing.json')} (ENOENT)`,
    ]);
  });

  it('says when the file is not JSON or cannot be read', async () => {
    const [notJson] = await problems('{"cases": [');
    expect(notJson).toMatch(/^is not valid JSON: /);
    await expect(loadEvalFile(path.join(folder, 'nope.json'))).rejects.toThrow(
      `${path.join(folder, 'nope.json')}: cannot be read (ENOENT)`,
    );
  });
});

describe('loadJudge', () => {
  it("returns the module's default export function", async () => {
    const judge = await loadJudge(path.join(folder, 'judge.mjs'));
    expect(await judge({ caseId: 'a', task: 't', recorded: 'abc', candidate: 'xyz' })).toEqual({
      same: true,
      note: 'by length',
    });
  });

  it('refuses a module whose default export is not a function, or that does not load', async () => {
    await expect(loadJudge(path.join(folder, 'not-a-judge.mjs'))).rejects.toThrow(
      /not-a-judge\.mjs must export a function as its default export .*; its default export is a number\./u,
    );
    await expect(loadJudge(path.join(folder, 'broken-judge.mjs'))).rejects.toThrow(
      /^Could not load the judge module .*broken-judge\.mjs: /u,
    );
    await expect(loadJudge(path.join(folder, 'absent.mjs'))).rejects.toThrow(
      /^Could not load the judge module /u,
    );
  });
});
