import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Client } from '@temporalio/client';
import type { LoadedDataConverter } from '@temporalio/common';
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import proto from '@temporalio/proto';
import { z } from 'zod';
import { formatIssues } from '../contract/format-issues.js';
import { dataConverterFromEnvironment } from '../data-converter.js';
import type { RunTranscript } from './recorded-run.js';
import { transcriptFromHistories } from './read-transcript.js';
import { inlineStoredPayloads, runExecutions } from './run-executions.js';
import type { History } from './run-executions.js';

/**
 * A run's exported history, as `keel export` writes it: every execution of the run, first to last,
 * each in Temporal's own JSON history form (what `temporal workflow show --output json` prints and
 * `historyFromJSON` reads), so a case kept in a repository reads (and replays) without the cluster.
 * Payloads stay as the codecs left them (an encrypted run stays encrypted: reading it needs its
 * keys); payloads that lived in an external store are inlined, so the file needs no store.
 */
export const RunHistoryFile = z.strictObject({
  format: z.literal('keel-run-history'),
  version: z.literal(1),
  /** The Keel run id (the workflow id of every execution). */
  runId: z.string().min(1),
  /** When it was exported, ISO 8601. */
  exportedAt: z.string(),
  executions: z
    .array(
      z.strictObject({
        /** Temporal's run id of the execution. */
        executionRunId: z.string(),
        /** Temporal's proto-JSON history: `{ "events": [ … ] }`. */
        history: z.looseObject({ events: z.array(z.unknown()).min(1) }),
      }),
    )
    .min(1),
});
export type RunHistoryFile = z.infer<typeof RunHistoryFile>;

/** A file that is not a run history Keel can read: the message names the file and says why. */
export class RunHistoryFileError extends Error {
  override name = 'RunHistoryFileError';
}

/** The run's whole history (every execution) as a {@link RunHistoryFile}, stored payloads inlined. */
export async function exportRunHistory(client: Client, runId: string): Promise<RunHistoryFile> {
  const converter = client.options.loadedDataConverter;
  const executions = await runExecutions(client, runId);
  const exported: RunHistoryFile['executions'] = [];
  for (const { executionRunId, history } of executions) {
    await inlineStoredPayloads(history, converter);
    exported.push({
      executionRunId,
      history: JSON.parse(historyToJSON(proto.temporal.api.history.v1.History.create(history))) as {
        events: unknown[];
      },
    });
  }
  return {
    format: 'keel-run-history',
    version: 1,
    runId,
    exportedAt: new Date().toISOString(),
    executions: exported,
  };
}

/**
 * The run id and histories of a history file's text: a {@link RunHistoryFile}, or one execution's
 * Temporal JSON history (`temporal workflow show --output json`, the Web UI's download), whose run
 * id is then the file's name without `.json`. `source` is the file's path (named in errors).
 */
export function parseRunHistoryFile(text: string, source: string): { runId: string; histories: History[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new RunHistoryFileError(`${source} is not JSON: ${(error as Error).message}`);
  }
  const single = z.looseObject({ events: z.array(z.unknown()).min(1) }).safeParse(json);
  if (single.success && (json as { format?: unknown }).format === undefined) {
    // A Temporal history does not name its workflow: the file's name stands for the run id.
    const runId = basename(source).replace(/\.json$/iu, '');
    const history = historyOf(single.data, source);
    return { runId, histories: [history] };
  }
  const parsed = RunHistoryFile.safeParse(json);
  if (!parsed.success) {
    throw new RunHistoryFileError(
      `${source} is not a Keel run history (keel export) nor a Temporal JSON history: ${formatIssues(parsed.error).slice(0, 5).join('; ')}`,
    );
  }
  return {
    runId: parsed.data.runId,
    histories: parsed.data.executions.map((execution) => historyOf(execution.history, source)),
  };
}

function historyOf(json: unknown, source: string): History {
  try {
    return historyFromJSON(json);
  } catch (error) {
    throw new RunHistoryFileError(
      `${source} holds a history Temporal cannot read: ${(error as Error).message}`,
    );
  }
}

/**
 * The transcript of the run a history file holds (see {@link parseRunHistoryFile}), its payloads
 * decoded with `converter`: by default the codec keys of the environment (KEEL_CODEC_KEYS_FILE,
 * KEEL_CODEC_KEY), which an exported encrypted run needs; a file needs no payload store.
 */
export async function readRunHistoryFile(
  path: string,
  converter: LoadedDataConverter = loadDataConverter(dataConverterFromEnvironment()),
): Promise<RunTranscript> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new RunHistoryFileError(`Cannot read the history file ${path}: ${(error as Error).message}`);
  }
  const { runId, histories } = parseRunHistoryFile(text, path);
  return transcriptFromHistories(runId, histories, converter);
}
