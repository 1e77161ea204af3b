import { describe, expect, it } from 'vitest';
import { normaliseAnswer } from '../../src/eval/answer-match.js';
import { compareCase } from '../../src/eval/compare.js';
import type { Judge } from '../../src/eval/judge.js';
import { CaseReport, EvalReport, summarise } from '../../src/eval/report.js';
import { NOT_RECORDED, transcript } from './transcripts.js';

const pair = (before: string, after: string) => ({
  caseId: 'c1',
  recorded: transcript({ answer: before }),
  candidate: transcript({ runId: 'eval.c1', answer: after }),
});

describe('compareCase answers', () => {
  it('exact: only the very same text is the same answer', async () => {
    expect((await compareCase(pair('Paris.', 'Paris.'), { match: 'exact' })).answer.same).toBe(true);
    const differs = await compareCase(pair('Paris.', 'paris'), { match: 'exact' });
    expect(differs.answer).toEqual({ match: 'exact', same: false });
    expect(differs.passed).toBe(false);
    expect(differs.failures).toEqual(['the answer differs']);
  });

  it('normalised: NFC, case, whitespace and trailing punctuation do not count', async () => {
    const same = await compareCase(
      pair('The  capital is\nCafé Paris.', ' the capital is cafe\u0301 PARIS!! '),
      {
        match: 'normalised',
      },
    );
    expect(same.answer).toEqual({ match: 'normalised', same: true });
    expect(same.passed).toBe(true);
    expect(normaliseAnswer('STRASSE')).toBe(normaliseAnswer('straße'));
    expect((await compareCase(pair('Paris.', 'Lyon.'), { match: 'normalised' })).answer.same).toBe(false);
    expect((await compareCase(pair('a b', 'ab'), { match: 'normalised' })).answer.same).toBe(false);
  });

  it('a judge decides, with its note; it is given the case, task and both answers', async () => {
    const asked: unknown[] = [];
    const judge: Judge = (input) => {
      asked.push(input);
      return { same: input.candidate.includes('Paris'), note: 'both name Paris' };
    };
    const report = await compareCase(pair('Paris.', 'It is Paris'), { match: judge });
    expect(report.answer).toEqual({ match: 'judge', same: true, note: 'both name Paris' });
    expect(asked).toEqual([
      { caseId: 'c1', task: 'Do the thing', recorded: 'Paris.', candidate: 'It is Paris' },
    ]);
    const async = await compareCase(pair('a', 'b'), { match: () => Promise.resolve(false) });
    expect(async.answer).toEqual({ match: 'judge', same: false });
  });

  it('a judge that throws fails only its case, with the reason', async () => {
    const report = await compareCase(pair('a', 'a'), {
      match: () => {
        throw new Error('judge exploded\nstack line');
      },
    });
    expect(report.passed).toBe(false);
    expect(report.answer.error).toBe('the judge threw: judge exploded');
    expect(report.failures).toEqual(['answer not compared: the judge threw: judge exploded']);
    const rejected = await compareCase(pair('a', 'a'), { match: () => Promise.reject(new Error('nope')) });
    expect(rejected.answer.error).toBe('the judge threw: nope');
  });

  it('a judge that answers garbage or never answers fails its case with a clear error', async () => {
    const garbage = await compareCase(pair('a', 'a'), { match: (() => ({ yes: 1 })) as unknown as Judge });
    expect(garbage.answer.error).toBe(
      'the judge answered {"yes":1}, not a boolean or { same: boolean, note?: string }',
    );
    expect(garbage.passed).toBe(false);
    const silent = await compareCase(pair('a', 'a'), {
      match: () => new Promise<boolean>(() => undefined),
      judgeTimeoutMs: 50,
    });
    expect(silent.answer.error).toBe('the judge threw: no answer within 0.05 s');
  });

  it('a side that did not complete has no answer to be the same', async () => {
    let asked = false;
    const report = await compareCase(
      {
        caseId: 'c1',
        recorded: transcript({ answer: 'x' }),
        candidate: transcript({ answer: 'x', outcome: { status: 'max_turns' } }),
      },
      {
        match: () => {
          asked = true;
          return true;
        },
      },
    );
    expect(report.answer).toEqual({
      match: 'judge',
      same: false,
      note: 'the candidate run did not complete (max_turns)',
    });
    expect(asked).toBe(false);
  });
});

describe('compareCase measures', () => {
  it('reports turns, tokens, cost and stop reasons before and after, with deltas', async () => {
    const report = await compareCase(
      {
        caseId: 'c1',
        recorded: transcript({ turns: [{ calls: [['echo', { text: 'a' }]] }, {}], costUsd: 0.02 }),
        candidate: transcript({
          turns: [{ tokens: 50 }],
          outcome: { status: 'failed', errorType: 'ModelError.RateLimit', text: '' },
        }),
      },
      { match: 'exact' },
    );
    expect(report.turns).toEqual({ before: 2, after: 1, delta: -1 });
    expect(report.tokens).toEqual({ before: 200, after: 50, delta: -150 });
    expect(report.costUsd).toEqual({ before: 0.02, after: null, delta: null });
    expect(report.stop).toEqual({
      before: { status: 'completed' },
      after: { status: 'failed', errorType: 'ModelError.RateLimit' },
    });
    expect(report.calls).toMatchObject({ same: false, kept: 0, removed: 1, added: 0, compact: '- echo(a)' });
    expect(() => CaseReport.parse(report)).not.toThrow();
  });

  it('marks a candidate that ended with KeelError.Diverged as diverged, where, and counts refused calls', async () => {
    const report = await compareCase(
      {
        caseId: 'c1',
        recorded: transcript({ answer: 'x' }),
        candidate: transcript({
          turns: [
            { calls: [['read_file', { path: 'a' }, NOT_RECORDED]] },
            { calls: [['write_file', { path: 'b' }]] },
          ],
          outcome: {
            status: 'failed',
            errorType: 'KeelError.Diverged',
            reason: 'write_file({"path":"b"}) was not recorded',
            text: '',
          },
        }),
      },
      { match: 'exact' },
    );
    expect(report.divergence).toEqual({
      diverged: true,
      reason: 'write_file({"path":"b"}) was not recorded',
      atTurn: 2,
      refusedCalls: 1,
    });
    expect(report.passed).toBe(false);
    expect(report.failures).toContain('diverged: write_file({"path":"b"}) was not recorded');
  });

  it('an inline task has no recorded side and passes when it completes', async () => {
    const report = await compareCase(
      { caseId: 'inline', candidate: transcript({ answer: 'hi' }) },
      { match: 'exact' },
    );
    expect(report).toMatchObject({
      passed: true,
      recorded: null,
      calls: null,
      answer: { match: 'exact', same: null },
      turns: { before: null, after: 1, delta: null },
      stop: { before: null },
    });
    const stopped = await compareCase(
      { caseId: 'inline', candidate: transcript({ outcome: { status: 'max_cost' } }) },
      { match: 'exact' },
    );
    expect(stopped.failures).toEqual(['did not complete (max_cost)']);
  });

  it('with assertions, passing means every assertion holds (the answer rule no longer applies)', async () => {
    const report = await compareCase(
      { ...pair('a', 'b'), expect: { answerMatches: 'b' } },
      { match: 'exact' },
    );
    expect(report.passed).toBe(true);
    const failing = await compareCase(
      { ...pair('a', 'b'), expect: { sameAnswer: true, maxTurns: 5 } },
      { match: 'exact' },
    );
    expect(failing.passed).toBe(false);
    expect(failing.failures).toEqual(['same answer: different']);
  });
});

describe('summarise', () => {
  it('totals cases, passes, same answers, divergences and sums before and after', async () => {
    const cases = [
      await compareCase(pair('a', 'a'), { match: 'exact' }),
      await compareCase(
        {
          caseId: 'c2',
          recorded: transcript({ costUsd: 0.01 }),
          candidate: transcript({
            costUsd: 0.03,
            outcome: { status: 'failed', errorType: 'KeelError.Diverged' },
          }),
        },
        { match: 'exact' },
      ),
      await compareCase({ caseId: 'c3', candidate: transcript({ turns: [{}, {}] }) }, { match: 'exact' }),
    ];
    const report = summarise(cases);
    expect(report.totals).toEqual({
      cases: 3,
      passed: 2,
      failed: 1,
      sameAnswer: 1,
      diverged: 1,
      turns: { before: 2, after: 4 },
      tokens: { before: 200, after: 400 },
      costUsd: { before: 0.01, after: 0.03 },
    });
    // The --json output is this object: it survives JSON and its schema.
    expect(EvalReport.parse(JSON.parse(JSON.stringify(report)))).toEqual(report);
    expect(summarise([]).totals.turns).toEqual({ before: null, after: null });
  });
});
