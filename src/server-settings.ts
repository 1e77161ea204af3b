/**
 * Temporal server settings Keel relies on, in one place: `keel server start` (and every command that
 * starts the local server), the tests' server, the benchmarks and `deploy/dynamicconfig` use them.
 *
 * **`history.transferProcessorMaxPollRPS`** (Temporal's default: 20 per history shard). The workflow
 * task that follows every activity (each model turn, each tool call) reaches matching through its
 * history shard's transfer queue, whose reader loads new tasks at most this many times a second. A
 * run's activities end quicker than 50 ms apart, so at 20 each of those workflow tasks waited for the
 * reader's next slot: 30–42 ms between its scheduled and started events, two waits in every step of a
 * model turn and a tool call (BENCHMARKS.md, "The wait before every workflow task"). The dev server
 * has one history shard, so all its runs share that one reader. At 1,000 the reader may load every
 * millisecond; under load one load still takes up to `history.transferTaskBatchSize` (100) tasks.
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

/**
 * The settings of `KEEL_SERVER_DYNAMIC_CONFIG` (as `key=value`) that a server started with the
 * command line `args` lacks: a local server outlives the commands, so one started by an older Keel
 * keeps running without them.
 */
export function missingServerSettings(args: readonly string[]): string[] {
  const given = new Set(args.filter((_arg, index) => args[index - 1] === '--dynamic-config-value'));
  return dynamicConfigArguments()
    .filter((_arg, index) => index % 2 === 1)
    .filter((setting) => !given.has(setting));
}
