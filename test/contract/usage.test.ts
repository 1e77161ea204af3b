import { describe, expect, it } from 'vitest';
import { addUsage, emptyUsage } from '../../src/contract/usage.js';
import type { Usage } from '../../src/contract/usage.js';

const first: Usage = {
  inputTokens: 100,
  cachedInputTokens: 60,
  outputTokens: 20,
  reasoningTokens: 8,
  totalTokens: 120,
};
const second: Usage = {
  inputTokens: 7,
  cachedInputTokens: 3,
  outputTokens: 5,
  reasoningTokens: 2,
  totalTokens: 12,
};

describe('addUsage', () => {
  it('adds every field separately', () => {
    expect(addUsage(first, second)).toEqual({
      inputTokens: 107,
      cachedInputTokens: 63,
      outputTokens: 25,
      reasoningTokens: 10,
      totalTokens: 132,
    });
  });

  it('leaves a usage unchanged when adding the empty usage', () => {
    expect(addUsage(emptyUsage, first)).toEqual(first);
    expect(addUsage(first, emptyUsage)).toEqual(first);
  });

  it('changes neither of its arguments', () => {
    const before = { ...first };

    addUsage(first, second);

    expect(first).toEqual(before);
    expect(emptyUsage).toEqual({
      inputTokens: 0,
      cachedInputTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
      totalTokens: 0,
    });
  });

  it('keeps the shared empty usage frozen, so no run can change the starting point of another', () => {
    expect(Object.isFrozen(emptyUsage)).toBe(true);
  });
});
