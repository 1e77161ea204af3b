import { ApplicationFailure, CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { KeelClient } from '../client.js';
import type { RunResult } from '../contract/run-result.js';
import { keelModel, keelTokens, keelTurns } from '../workflows/search-attributes.js';
import { formatResult } from './format.js';

/**
 * How a run that has ended ended, read from Temporal (its close event), never by a query: a query
 * of a closed run replays it on a worker, and waits for one when none is there.
 */
export type Ending =
  | { kind: 'result'; result: RunResult }
  | { kind: 'cancelled' }
  /** It ended without a result: refused at setup (invalid input), terminated, timed out. */
  | { kind: 'failed'; message: string; type: string | null };

/** Whether Temporal says the run has ended (anything but RUNNING). */
export function hasEnded(description: WorkflowExecutionDescription): boolean {
  return description.status.name !== 'RUNNING';
}

/**
 * The ending of a run that has ended. `waitForResult` returns the run's result at once then (a
 * failed run's partial result too), or rejects with the reason it has none.
 */
export async function endingOf(keel: KeelClient, runId: string): Promise<Ending> {
  try {
    return { kind: 'result', result: await keel.waitForResult(runId) };
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    const cause = error.cause;
    if (cause instanceof CancelledFailure) return { kind: 'cancelled' };
    const type = cause instanceof ApplicationFailure ? (cause.type ?? null) : null;
    return { kind: 'failed', message: cause?.message ?? error.message, type };
  }
}

/** `keel status` of a run that has ended: how, and what it used (from its search attributes). */
export function formatEnding(
  runId: string,
  description: WorkflowExecutionDescription,
  ending: Ending,
): string[] {
  const closed = description.closeTime ? ` at ${description.closeTime.toISOString()}` : '';
  if (ending.kind === 'result') {
    const [headline = ''] = formatResult(ending.result);
    return [`run ${runId} has ended${closed}`, `  ${headline} · model ${ending.result.model}`];
  }
  const attributes = description.typedSearchAttributes;
  const turns = attributes.get(keelTurns);
  const tokens = attributes.get(keelTokens);
  const model = attributes.get(keelModel);
  const used = [
    turns !== undefined ? `${turns} ${turns === 1 ? 'turn' : 'turns'}` : undefined,
    tokens !== undefined ? `${tokens} tokens` : undefined,
    model !== undefined ? `model ${model}` : undefined,
  ].filter((part) => part !== undefined);
  const suffix = used.length > 0 ? ` (${used.join(' · ')})` : '';
  if (ending.kind === 'cancelled') return [`run ${runId} has ended${closed}`, `  ■ cancelled${suffix}`];
  return [
    `run ${runId} has ended${closed} without a result (${description.status.name})${suffix}`,
    ...ending.message.split('\n').map((line, index) => `${index === 0 ? '  ✘ ' : '    '}${line}`),
  ];
}

/** The ending as `--json` data, beside the run id and Temporal's status. */
export function endingData(ending: Ending): { result: RunResult | null; failure: object | null } {
  if (ending.kind === 'result') return { result: ending.result, failure: null };
  if (ending.kind === 'cancelled') return { result: null, failure: null };
  return { result: null, failure: { message: ending.message, type: ending.type } };
}
