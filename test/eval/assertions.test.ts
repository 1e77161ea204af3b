import { describe, expect, it } from 'vitest';
import {
  answerPattern,
  answerPatternProblem,
  checkAssertions,
  Expectations,
  mergeExpectations,
} from '../../src/eval/assertions.js';
import { NOT_RECORDED, transcript } from './transcripts.js';

const candidate = transcript({
  answer: 'Hello, World',
  turns: [
    {
      calls: [
        ['echo', { text: 'hi' }],
        ['toString', {}],
      ],
    },
    { calls: [['read_file', { path: 'a' }, NOT_RECORDED]] },
    {},
  ],
  costUsd: 0.015,
});

const results = (expect: Expectations, sameAnswer?: boolean) =>
  checkAssertions(expect, candidate, sameAnswer === undefined ? {} : { sameAnswer }).map(
    (result) => `${result.result}: ${result.assertion} (${result.detail})`,
  );

describe('checkAssertions', () => {
  it('sameAnswer holds or fails by the comparison, and is skipped without a recorded run', () => {
    expect(results({ sameAnswer: true }, true)).toEqual(['passed: same answer (same)']);
    expect(results({ sameAnswer: true }, false)).toEqual(['failed: same answer (different)']);
    expect(results({ sameAnswer: false }, false)).toEqual(['passed: different answer (different)']);
    expect(results({ sameAnswer: true })).toEqual([
      'skipped: same answer (an inline task has no recorded answer)',
    ]);
  });

  it('answerMatches: /re/flags is a regular expression, anything else a case-sensitive substring', () => {
    expect(results({ answerMatches: '/^hello, w/i' })).toEqual([
      'passed: answer matches /^hello, w/i (matches)',
    ]);
    expect(results({ answerMatches: '/^hello/' })).toEqual([
      'failed: answer matches /^hello/ (does not match)',
    ]);
    expect(results({ answerMatches: 'o, W' })).toEqual(['passed: answer matches o, W (matches)']);
    expect(results({ answerMatches: 'o, w' })).toEqual(['failed: answer matches o, w (does not match)']);
    // A slash that does not end in flags is a substring, not a pattern.
    expect(answerPattern('/usr/bin x')('see /usr/bin x')).toBe(true);
    const global = answerPattern('/l/g');
    expect([global('hello'), global('hello')]).toEqual([true, true]);
  });

  it('a bad regular expression is a problem, and a failed assertion if it gets through', () => {
    expect(answerPatternProblem('/[/')).toMatch(/^is not a valid regular expression: /);
    expect(answerPatternProblem('[')).toBeUndefined();
    expect(results({ answerMatches: '/(/' })[0]).toMatch(/^failed: answer matches \/\(\/ \(bad pattern: /);
    expect(Expectations.safeParse({ answerMatches: '/(/' }).success).toBe(false);
  });

  it('calls and notCalls look at every call the model asked for, refused ones included', () => {
    expect(results({ calls: ['echo', 'read_file'], notCalls: ['write_file'] })).toEqual([
      'passed: calls echo (called)',
      'passed: calls read_file (called)',
      'passed: never calls write_file (never called)',
    ]);
    expect(results({ calls: ['write_file', 'constructor'], notCalls: ['echo', 'toString'] })).toEqual([
      'failed: calls write_file (never called)',
      'failed: calls constructor (never called)',
      'failed: never calls echo (called)',
      'failed: never calls toString (called)',
    ]);
  });

  it('maxTurns, maxTokens, maxCostUsd and status hold at the limit and fail past it', () => {
    expect(results({ maxTurns: 3, maxTokens: 300, maxCostUsd: 0.015, status: 'completed' })).toEqual([
      'passed: ≤ 3 turns (3 turns)',
      'passed: ≤ 300 tokens (300 tokens)',
      'passed: cost ≤ $0.015 ($0.015)',
      'passed: status completed (completed)',
    ]);
    expect(results({ maxTurns: 2, maxTokens: 299, maxCostUsd: 0.01, status: 'failed' })).toEqual([
      'failed: ≤ 2 turns (3 turns)',
      'failed: ≤ 299 tokens (300 tokens)',
      'failed: cost ≤ $0.01 ($0.015)',
      'failed: status failed (completed)',
    ]);
  });

  it('a cost limit fails when the cost is unknown', () => {
    const unpriced = transcript();
    expect(checkAssertions({ maxCostUsd: 1 }, unpriced, {})).toEqual([
      {
        assertion: 'cost ≤ $1',
        result: 'failed',
        detail: 'cost unknown (the worker has no price for the model)',
      },
    ]);
  });
});

describe('mergeExpectations', () => {
  it("adds a case's expectations to the file's: its values win, lists join", () => {
    expect(
      mergeExpectations(
        { sameAnswer: true, maxTurns: 6, calls: ['echo'], notCalls: ['rm'] },
        { maxTurns: 3, calls: ['read_file', 'echo'] },
      ),
    ).toEqual({ sameAnswer: true, maxTurns: 3, calls: ['echo', 'read_file'], notCalls: ['rm'] });
    expect(mergeExpectations(undefined, undefined)).toEqual({});
  });
});
