import { writeFile } from 'node:fs/promises';
import { exportRunHistory } from '../eval/history-file.js';
import { withClient } from './inspect-commands.js';
import { CliFailure, EXIT } from './io.js';
import type { Output } from './io.js';

/**
 * `keel export <id> [--output FILE]`: the run's whole history (every execution) as a Keel history
 * file, for an eval case kept in a repository. Without `--output` the file goes to stdout; with it,
 * one line (or `--json` data) says what was written. A run still going exports what it did so far.
 */
export function exportCommand(
  out: Output,
  taskQueue: string,
  runId: string,
  outputFile: string | undefined,
): Promise<number> {
  return withClient(out, taskQueue, async (keel) => {
    const file = await exportRunHistory(keel.temporal, runId);
    const text = JSON.stringify(file, null, 2) + '\n';
    const events = file.executions.reduce((sum, execution) => sum + execution.history.events.length, 0);
    if (outputFile === undefined) {
      process.stdout.write(text);
      return EXIT.ok;
    }
    try {
      await writeFile(outputFile, text);
    } catch (error) {
      throw new CliFailure('write-failed', `Cannot write ${outputFile}: ${(error as Error).message}`);
    }
    const summary = { runId, output: outputFile, executions: file.executions.length, events };
    if (out.json) out.data(summary);
    else
      out.line(
        `Exported run ${runId} (${summary.executions} ${summary.executions === 1 ? 'execution' : 'executions'}, ${events} events) to ${outputFile}`,
      );
    return EXIT.ok;
  });
}
