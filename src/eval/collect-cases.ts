import type { Client } from '@temporalio/client';
import { RunInput } from '../contract/run-input.js';
import type { RunTranscript } from './recorded-run.js';

/** Where an eval case comes from: a recorded run by id, each run a query finds, a history file, or a task. */
export type CaseSource<Expect> =
  | { kind: 'run'; id?: string; runId: string; expect?: Expect }
  | { kind: 'query'; id?: string; query: string; limit: number; expect?: Expect }
  | { kind: 'history'; id?: string; path: string; expect?: Expect }
  | { kind: 'task'; id: string; task: string; expect?: Expect };

/** One case, resolved: its id, its recording (none for an inline task), and its own assertions. */
export interface ResolvedCase<Expect> {
  caseId: string;
  recorded: RunTranscript | undefined;
  task: string;
  expect: Expect | undefined;
  /** Whether the recording was read from the cluster (and can be read again there by its run id). */
  fromCluster: boolean;
}

/** How sources are read: injected, so this module holds only the rules. */
export interface Readers {
  readRun(client: Client, runId: string): Promise<RunTranscript>;
  readHistory(path: string): Promise<RunTranscript>;
}

/** How many runs a query looks at, per run it may bring in, before it stops looking. */
const QUERY_SCAN_FACTOR = 5;

/** Most runs one query may bring into an eval. */
export const MAX_QUERY_CASES = 1_000;

/**
 * The cases of `sources`, in order: a query's runs newest first, each under its run id (prefixed with
 * the source's id when it has one). A run still going, or one that was itself an eval's candidate
 * (it replayed another), is no recording to evaluate: a named one is an error, a queried one is
 * skipped and said so through `skipped`.
 */
export async function collectCases<Expect>(
  client: Client,
  sources: readonly CaseSource<Expect>[],
  readers: Readers,
  skipped: (runId: string, why: string) => void,
): Promise<ResolvedCase<Expect>[]> {
  const cases: ResolvedCase<Expect>[] = [];
  const taken = new Set<string>();
  const add = (wanted: string, recorded: RunTranscript | undefined, task: string, expect?: Expect): void => {
    const caseId = uniqueCaseId(wanted, taken);
    const fromCluster = current === 'run' || current === 'query';
    cases.push({ caseId, recorded, task, expect, fromCluster });
  };
  let current: CaseSource<Expect>['kind'] = 'task';
  for (const source of sources) {
    current = source.kind;
    switch (source.kind) {
      case 'task':
        add(source.id, undefined, source.task, source.expect);
        break;
      case 'run': {
        const recorded = await readers.readRun(client, source.runId);
        const unusable = notARecording(recorded);
        if (unusable !== undefined) throw new EvalSourceError(`Run ${source.runId} ${unusable}.`);
        add(source.id ?? source.runId, recorded, recorded.task, source.expect);
        break;
      }
      case 'history': {
        const recorded = await readers.readHistory(source.path);
        const unusable = notARecording(recorded);
        if (unusable !== undefined)
          throw new EvalSourceError(`The history in ${source.path} (run ${recorded.runId}) ${unusable}.`);
        add(source.id ?? recorded.runId, recorded, recorded.task, source.expect);
        break;
      }
      case 'query': {
        // Only runs (not evals), each once (its last execution, not one that continued as new),
        // and only ended ones: a run still going has no ending to compare with.
        const query =
          "WorkflowType = 'agentRun' AND ExecutionStatus != 'Running' AND " +
          `ExecutionStatus != 'ContinuedAsNew' AND (${source.query})`;
        const seen = new Set<string>();
        let found = 0;
        // Skipped runs (an eval's own candidates, unreadable ones) do not count toward the limit.
        for await (const execution of client.workflow.list({ query })) {
          if (found >= source.limit || seen.size >= source.limit * QUERY_SCAN_FACTOR) break;
          const runId = execution.workflowId;
          if (seen.has(runId)) continue;
          seen.add(runId);
          let recorded: RunTranscript;
          try {
            recorded = await readers.readRun(client, runId);
          } catch (error) {
            skipped(runId, `cannot be read: ${(error as Error).message}`);
            continue;
          }
          const unusable = notARecording(recorded);
          if (unusable !== undefined) {
            skipped(runId, unusable);
            continue;
          }
          found += 1;
          add(
            source.id === undefined ? runId : `${source.id}.${runId}`,
            recorded,
            recorded.task,
            source.expect,
          );
        }
        if (found === 0) throw new EvalSourceError(`No ended run matches ${source.query}.`);
        break;
      }
    }
  }
  if (cases.length === 0) throw new EvalSourceError('The eval has no case left to run.');
  return cases;
}

/** A source of cases that cannot give one: the message says which and why. */
export class EvalSourceError extends Error {
  override name = 'EvalSourceError';
}

/** Why a transcript is no recording to evaluate against, if it is not. */
function notARecording(recorded: RunTranscript): string | undefined {
  if (recorded.outcome.status === 'running') return 'has not ended yet: evaluate runs that have';
  if (recorded.input.replay !== undefined)
    return "was an eval's candidate run (it replayed another run's calls), not a recording";
  // A run refused at its start (an input it could not use) has nothing to replay.
  const input = RunInput.safeParse(recorded.input);
  if (!input.success)
    return `started with an input a run cannot use (${input.error.issues[0]?.message ?? 'invalid'})`;
  return undefined;
}

/** A case id the eval contract accepts, from a run id or a name, not yet taken. */
function uniqueCaseId(wanted: string, taken: Set<string>): string {
  const base = wanted.replace(/[^A-Za-z0-9._-]/gu, '_').slice(-96) || 'case';
  let caseId = base;
  for (let count = 2; taken.has(caseId); count += 1) caseId = `${base}-${count}`;
  taken.add(caseId);
  return caseId;
}
