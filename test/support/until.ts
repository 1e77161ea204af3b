/**
 * Polls `condition` every `intervalMs` until it holds, as a test waits for what another process does
 * (a server, a container, a schedule): a hang detector, not a sleep. An error the condition throws
 * counts as "not yet"; the last one is in the timeout's message, with what was waited for.
 */
export async function until(
  condition: () => Promise<boolean>,
  what: string,
  { timeoutMs = 180_000, intervalMs = 500 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      if (await condition()) return;
    } catch (error) {
      last = error instanceof Error ? error.message : JSON.stringify(error);
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}${last ? `: ${last}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
