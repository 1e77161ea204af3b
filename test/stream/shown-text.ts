import type { StreamItem } from '../../src/contract/stream-event.js';

/**
 * The text of each turn as a caller following the stream shows it: deltas appended, a `reset`
 * dropping what its turn showed so far. One entry per turn that showed text, in turn order.
 */
export function shownText(items: readonly StreamItem[]): string[] {
  const turns = new Map<number, string>();
  for (const { event } of items) {
    if (event.type === 'text') turns.set(event.turn, (turns.get(event.turn) ?? '') + event.delta);
    if (event.type === 'reset') turns.delete(event.turn);
  }
  return [...turns.entries()].sort(([a], [b]) => a - b).map(([, text]) => text);
}

/**
 * The offsets of a stream as a reader gets them, checked: the run's log in order, each offset once
 * (the log's copy of a turn the reader followed live is left out), and the live events of a turn (its
 * text, call starts and resets while it is written) with the offset of that turn's `turn_start` (a
 * reset the reader makes before an event of the log, with that event's).
 * Returns what does not hold.
 */
export function offsetProblems(items: readonly StreamItem[]): string[] {
  const problems: string[] = [];
  let expected = items[0]?.offset ?? 0;
  let turnStart: number | undefined;
  items.forEach(({ offset, event }, index) => {
    // A reset the reader makes takes the offset of what it precedes.
    if (event.type === 'reset' && (offset === expected || offset === turnStart)) return;
    if (offset >= expected) {
      if (event.type === 'turn_start') turnStart = offset;
      expected = offset + 1;
    } else if (
      offset !== turnStart ||
      (event.type !== 'text' && event.type !== 'tool_call' && event.type !== 'reset')
    ) {
      problems.push(
        `item ${index} (${event.type}) has offset ${offset}; expected ${expected} or ${turnStart}`,
      );
    }
  });
  return problems;
}
