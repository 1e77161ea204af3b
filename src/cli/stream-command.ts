import { RunNotStreamingError } from '../stream/subscribe.js';
import { withClient } from './inspect-commands.js';
import { CliFailure, EXIT, UsageError } from './io.js';
import type { Output } from './io.js';

/** `--from` of `keel follow --stream`: the first offset wanted, a whole number of at least 0. */
export function streamFrom(value: string | undefined): number {
  if (value === undefined) return 0;
  if (!/^\d+$/u.test(value))
    throw new UsageError(`--from takes an offset (0, 1, …), got ${JSON.stringify(value)}`);
  return Number(value);
}

/**
 * `keel follow <id> --stream`: the run's stream as JSON lines on stdout, `{"offset":…,"event":{…}}`,
 * from `from` until its `end` event (Ctrl-C stops reading; the run goes on). To resume, give
 * `--from` one past the last offset read. Exit code 0 when the run completed, 3 when it ended
 * otherwise.
 */
export function streamCommand(out: Output, taskQueue: string, runId: string, from: number): Promise<number> {
  return withClient(out, taskQueue, async (keel) => {
    const controller = new AbortController();
    const stop = (): void => controller.abort();
    process.once('SIGINT', stop);
    try {
      let ended: string | undefined;
      const items = keel.stream(runId, { from });
      const interrupted = new Promise<'interrupted'>((resolve) =>
        controller.signal.addEventListener('abort', () => resolve('interrupted'), { once: true }),
      );
      for (;;) {
        const next = await Promise.race([items.next(), interrupted]);
        if (next === 'interrupted' || next.done === true) break;
        out.record(next.value);
        if (next.value.event.type === 'end') ended = next.value.event.status;
      }
      if (ended === undefined) {
        out.note(
          `Stopped reading the stream; the run goes on. \`keel follow ${runId} --stream --from <offset>\` goes on from there.`,
        );
        return EXIT.ok;
      }
      return ended === 'completed' ? EXIT.ok : EXIT.notCompleted;
    } catch (error) {
      if (error instanceof RunNotStreamingError)
        throw new CliFailure(
          'not_streaming',
          `${error.message} (\`keel follow ${runId}\` follows it without a stream)`,
        );
      throw error;
    } finally {
      process.removeListener('SIGINT', stop);
    }
  });
}
