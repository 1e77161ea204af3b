import { describe, expect, it } from 'vitest';
import { ENDING_FAILURE_TYPES, runEndingFailure } from '../../src/contract/run-ending.js';
import { runResultOfFailure } from '../../src/contract/run-result-of-failure.js';
import type { RunResult } from '../../src/contract/run-result.js';

const common = {
  turns: 3,
  toolCalls: 2,
  usage: { inputTokens: 10, cachedInputTokens: 0, outputTokens: 5, reasoningTokens: 0, totalTokens: 15 },
  lastResponseId: 'resp_3',
  model: 'm',
};
const results: RunResult[] = [
  { status: 'completed', finalText: 'done', ...common },
  { status: 'failed', reason: 'bad key', errorType: 'ModelError.Authentication', ...common },
  { status: 'max_turns', lastText: '', ...common },
  { status: 'max_tokens', lastText: '', ...common },
  { status: 'max_time', lastText: '', ...common },
  { status: 'max_cost', lastText: '', ...common, costUsd: 0.5 },
  { status: 'incomplete', reason: 'content_filter', partialText: 'x', ...common },
];

describe('runEndingFailure', () => {
  it('completes only a completed run; every other ending fails with its documented type', () => {
    expect(runEndingFailure(results[0]!)).toBeUndefined();
    expect(results.slice(1).map((result) => runEndingFailure(result)?.type)).toEqual([
      'ModelError.Authentication',
      ENDING_FAILURE_TYPES.max_turns,
      ENDING_FAILURE_TYPES.max_tokens,
      ENDING_FAILURE_TYPES.max_time,
      ENDING_FAILURE_TYPES.max_cost,
      ENDING_FAILURE_TYPES.incomplete,
    ]);
    expect(runEndingFailure(results[1]!)?.message).toBe('bad key');
    expect(runEndingFailure(results[5]!)?.message).toContain('$0.5000');
  });
});

describe('runResultOfFailure', () => {
  it('reads back the result of every ending that fails', () => {
    for (const result of results.slice(1)) {
      expect(runResultOfFailure(runEndingFailure(result)?.type, [result])).toEqual(result);
    }
  });

  it('finds no result in a failure that is not a run’s ending', () => {
    const [completed, failed, maxTurns] = results;
    // A refused input carries no details; a bug's failure none either.
    expect(runResultOfFailure('KeelError.InvalidInput', [])).toBeUndefined();
    expect(runResultOfFailure('KeelError.Unexpected', undefined)).toBeUndefined();
    // Details that are not a result, or a result that would not fail, or fail with another type.
    expect(runResultOfFailure('ModelError.Authentication', [{ status: 'failed' }])).toBeUndefined();
    expect(runResultOfFailure('KeelError.MaxTurnsExceeded', [completed])).toBeUndefined();
    expect(runResultOfFailure('KeelError.MaxTokensExceeded', [maxTurns])).toBeUndefined();
    expect(runResultOfFailure('ModelError.RateLimit', [failed])).toBeUndefined();
    expect(runResultOfFailure(undefined, [failed])).toBeUndefined();
  });
});
