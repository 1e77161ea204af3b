import { describe, expect, it } from 'vitest';
import { candidateInput } from '../../src/eval/candidate-input.js';

const replay = { unmatched: 'refuse' as const, allowTools: [] };

describe("candidateInput: a recorded run's input under the candidate's settings", () => {
  it("keeps the recording's conversation unless the candidate sets one", () => {
    const recorded = {
      input: { task: 'hi', conversation: 'chained' as const, maxTurns: 5 },
      task: 'hi',
      turns: [],
    };
    expect(candidateInput(recorded, {}, replay)).toMatchObject({
      task: 'hi',
      conversation: 'chained',
      maxTurns: 5,
    });
    expect(candidateInput(recorded, { conversation: 'stateless' }, replay)).toMatchObject({
      conversation: 'stateless',
      maxTurns: 5,
    });
  });

  it('gives an inline task the conversation the candidate asks for, and none when it asks none', () => {
    expect(candidateInput({ task: 'hi' }, { conversation: 'stateless' }, replay)).toMatchObject({
      task: 'hi',
      conversation: 'stateless',
    });
    expect(candidateInput({ task: 'hi' }, {}, replay)).not.toHaveProperty('conversation');
  });
});
