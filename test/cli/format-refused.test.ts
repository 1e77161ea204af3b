import { describe, expect, it } from 'vitest';
import { formatEvent } from '../../src/cli/format.js';

describe('formatEvent', () => {
  it('shows a refused signal with its name and reason, so `keel follow` does not hide it', () => {
    expect(
      formatEvent({
        seq: 3,
        kind: 'refused',
        turn: 1,
        signal: 'sned',
        reason: 'Keel runs take the signals …',
      }),
    ).toEqual(['  ⚠ refused signal sned: Keel runs take the signals …']);
  });
});
