import { restoreTerminal } from './ctrl-c-key.js';

/**
 * The signals held back: Ctrl-C and a closed terminal. Not SIGTERM: a process that has had a
 * listener for it loses Node's terminal reset when it later dies of it (a `keel run` in raw mode
 * would leave the terminal raw), and a `kill` in the few milliseconds held is not worth that.
 */
const HELD_SIGNALS = ['SIGINT', 'SIGHUP'] as const;

/**
 * Runs `work` with Ctrl-C (and hang-up) held back: one that arrives meanwhile takes effect once
 * `work` is done (settled either way), so a step that must finish together (starting a process and
 * recording it) is never cut in half. Only a signal that nothing else listens for is held: one the
 * command handles itself (a run's Ctrl-C cancels it) reaches its listeners at once, as before.
 * A held signal is raised again afterwards, the terminal first given back its usual mode, and
 * ends the process, unless a listener for it was added meanwhile (that one heard it already).
 */
export async function withSignalsDeferred<T>(work: () => Promise<T>): Promise<T> {
  const held: NodeJS.Signals[] = [];
  // One listener per signal, knowing its own: Ctrl-C read as a key is emitted with no argument.
  const holders = HELD_SIGNALS.filter((signal) => process.listenerCount(signal) === 0).map(
    (signal) => [signal, () => void held.push(signal)] as const,
  );
  for (const [signal, hold] of holders) process.on(signal, hold);
  try {
    return await work();
  } finally {
    // A signal that came just now may still wait in the event loop (Node hands it to listeners in
    // a poll phase): two turns of the loop pass one, so it is held. Only one that lands in the
    // instant between the last turn and the listener's removal can still be missed.
    for (let turn = 0; turn < 2; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    for (const [signal, hold] of holders) process.off(signal, hold);
    const first = held.find((signal) => process.listenerCount(signal) === 0);
    if (first !== undefined) {
      restoreTerminal();
      process.kill(process.pid, first);
    }
  }
}
