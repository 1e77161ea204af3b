/** The signals that end a CLI command: Ctrl-C, `kill`, a closed terminal. */
const ENDING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Runs `work` with the ending signals held back: one that arrives meanwhile takes effect once `work`
 * is done (settled either way), so a step that must finish together (starting a process and
 * recording it) is never cut in half. Only a signal that nothing else listens for is held: one the
 * command handles itself (a run's Ctrl-C cancels it) reaches its listeners at once, as before.
 * When held, the signal is raised again afterwards, with the default action (the process ends).
 */
export async function withSignalsDeferred<T>(work: () => Promise<T>): Promise<T> {
  const held: NodeJS.Signals[] = [];
  const unhandled = ENDING_SIGNALS.filter((signal) => process.listenerCount(signal) === 0);
  const hold = (signal: NodeJS.Signals): void => {
    held.push(signal);
  };
  for (const signal of unhandled) process.on(signal, hold);
  try {
    return await work();
  } finally {
    // A signal that came just now may still wait in the event loop (Node hands it to listeners in
    // a poll phase): two turns of the loop pass one, so it is held, not lost.
    for (let turn = 0; turn < 2; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    for (const signal of unhandled) process.off(signal, hold);
    const first = held[0];
    if (first !== undefined) process.kill(process.pid, first);
  }
}
