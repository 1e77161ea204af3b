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
