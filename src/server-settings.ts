/**
 * Temporal server settings Keel relies on, in one place: `keel server start` (and every command that
 * starts the local server), the tests' server, the benchmarks and `deploy/dynamicconfig` use them.
 *
 * **`history.transferProcessorMaxPollRPS`** (Temporal's default: 20 per history shard). Every
 * workflow task and every activity task of a run reaches matching through its history shard's
 * transfer queue, and the queue's reader loads new tasks at most this many times a second. A run's
 * steps come quicker than 50 ms apart, so at 20 each task waited for the reader's next slot: 30–42 ms
 * between a task's scheduled and started events, about 40 ms of every model turn and every tool call
 * (BENCHMARKS.md, "The wait before every task"). The dev server has one history shard, so all runs
 * share that one reader. 1,000 lets the reader load at most every millisecond; under load each load
 * still takes up to `history.transferTaskBatchSize` (100) tasks.
 */
export const KEEL_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, number | boolean | string>> = {
  'history.transferProcessorMaxPollRPS': 1000,
};

/** `KEEL_SERVER_DYNAMIC_CONFIG` (or `config`) as `temporal server start-dev` arguments. */
export function dynamicConfigArguments(
  config: Readonly<Record<string, unknown>> = KEEL_SERVER_DYNAMIC_CONFIG,
): string[] {
  return Object.entries(config).flatMap(([key, value]) => [
    '--dynamic-config-value',
    `${key}=${JSON.stringify(value)}`,
  ]);
}
