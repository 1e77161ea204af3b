import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { jsonBytes } from '../../src/contract/payload.js';
import { Conversation } from '../../src/workflows/conversation.js';

const call = (id: string) => ({ type: 'function_call', call_id: id, name: 'echo', arguments: '{}' });

/** A conversation of the task and `turns` turns, each a call and its result of about `size` bytes. */
function conversation(turns: number, size: number): Conversation {
  const result = new Conversation();
  result.addUserMessage('the task');
  for (let turn = 1; turn <= turns; turn++) {
    result.addTurnOutput([{ type: 'reasoning', id: `rs_${turn}`, encrypted_content: 'e' }, call(`c${turn}`)]);
    result.addObservations([{ callId: `c${turn}`, ok: true, output: 'x'.repeat(size) }]);
  }
  return result;
}

describe('a stateless conversation', () => {
  it('sends every item in order while it fits', () => {
    const items = conversation(2, 10).items(1_000_000);
    expect(items.map((item) => item.type)).toEqual([
      'message',
      'reasoning',
      'function_call',
      'function_call_output',
      'reasoning',
      'function_call',
      'function_call_output',
    ]);
    expect(items[3]).toEqual({ type: 'function_call_output', call_id: 'c1', output: 'x'.repeat(10) });
  });

  it('drops the oldest whole turns to fit, keeps the task and the latest turn, and says so', () => {
    const items = conversation(10, 10_000).items(35_000);
    expect(jsonBytes(items)).toBeLessThanOrEqual(35_000 + 200);
    expect(items[0]).toEqual({ type: 'message', role: 'user', content: 'the task' });
    expect(items[1]).toMatchObject({ type: 'message', role: 'developer' });
    expect(items[1]!.content).toMatch(/^\[7 earlier turn\(s\) of this conversation were dropped/);
    // Calls and their results leave together: every remaining result has its call.
    const calls = items.filter((item) => item.type === 'function_call').map((item) => item.call_id);
    const results = items.filter((item) => item.type === 'function_call_output').map((item) => item.call_id);
    expect(calls).toEqual(['c8', 'c9', 'c10']);
    expect(results).toEqual(calls);
  });

  it('carries a compacted copy across continue-as-new that resumes where it was', () => {
    const snapshot = conversation(6, 1_000).snapshot(3_500);
    const resumed = new Conversation(snapshot);
    expect(snapshot.omittedTurns).toBeGreaterThan(0);
    expect(resumed.items(1_000_000)).toEqual(new Conversation(snapshot).items(1_000_000));
    resumed.addUserMessage('next');
    expect(resumed.items(1_000_000).at(-1)).toEqual({ type: 'message', role: 'user', content: 'next' });
  });

  it('fails clearly and for good when even the task and the latest turn do not fit', () => {
    const error = (() => {
      try {
        conversation(1, 50_000).items(10_000);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error).toMatchObject({ type: 'KeelError.PayloadTooLarge', nonRetryable: true });
  });
});
