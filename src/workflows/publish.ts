import { log, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { RunResult } from '../contract/run-result.js';
import { usageCost } from '../contract/usage-sums.js';
import { currentDetails } from './progress.js';
import type { RunContext } from './run-context.js';
import { keelModel, keelStatus, keelTokens, keelTurns } from './search-attributes.js';
import type { Ending } from './steps.js';

/**
 * Turns between two upserts that only bring progress (turns, tokens) up to date, so most steps cost
 * no event for them; a status change and the run's end always upsert.
 */
export const PROGRESS_UPSERT_TURNS = 5;

/** What {@link publish} sets besides the current details: `false` for nothing, else the search attributes. */
export type PublishAttributes = { status?: string } | false;

/**
 * Shows progress in the UI: the current details always; the search attributes (each upsert is an
 * event in history) only when asked: at the start, at each status change, after model turns (every
 * {@link PROGRESS_UPSERT_TURNS}th in executions with `leanUpserts`) and at the end.
 */
export function publish(run: RunContext, attributes: PublishAttributes = false): void {
  const { state } = run;
  setCurrentDetails(currentDetails(state, run.input.task));
  // Only where the namespace has them registered: setting an unknown one would fail every task.
  if (!run.searchAttributes || attributes === false) return;
  if (attributes.status === undefined && run.leanUpserts && state.turn % PROGRESS_UPSERT_TURNS !== 0) return;
  upsertSearchAttributes([
    ...(attributes.status !== undefined ? [{ key: keelStatus, value: attributes.status }] : []),
    ...(state.turn === 0 ? [{ key: keelModel, value: run.model }] : []),
    { key: keelTurns, value: state.turn },
    { key: keelTokens, value: state.usage.totalTokens },
  ]);
}

/** Counts the run's cost so far from its usage, when the worker knows the model's price. */
export function updateCost(run: RunContext): void {
  run.state.costUsd = run.price === undefined ? null : usageCost(run.state.usage, run.price);
}

/** Ends the run: the result with its totals, in the state and the UI. */
export function finish(run: RunContext, ending: Ending): RunResult {
  const { state } = run;
  const result = {
    ...ending,
    turns: state.turn,
    toolCalls: state.toolCalls,
    usage: state.usage,
    lastResponseId: state.lastResponseId,
    model: run.model,
    ...(state.costUsd !== null ? { costUsd: state.costUsd } : {}),
  };
  state.phase = 'finished';
  state.pendingCalls = [];
  state.result = result;
  run.stream?.append({ type: 'end', status: result.status });
  run.stream?.close();
  publish(run, { status: result.status });
  log.info('Run finished', { status: result.status, turns: result.turns });
  return result;
}
