import type { RunBudgets } from '../contract/run-input.js';
import type { RunState } from '../contract/run-state.js';

/** What a stop condition looks at: the run's state, and whether its time budget has run out. */
export interface StopView {
  state: RunState;
  outOfTime: boolean;
}

/** The statuses a stop condition ends a run with. */
export type StopStatus = 'max_turns' | 'max_tokens' | 'max_time' | 'max_cost';

/** A small predicate in the style of `stopWhen`: the status to stop with, or `undefined` to go on. */
export type StopCondition = (view: StopView) => StopStatus | undefined;

/** Stops once the run has taken `maxTurns` model turns. */
export function turnLimit(maxTurns: number): StopCondition {
  return ({ state }) => (state.turn >= maxTurns ? 'max_turns' : undefined);
}

/** Stops once the run has used `maxTotalTokens` tokens, all turns together. */
export function tokenBudget(maxTotalTokens: number): StopCondition {
  return ({ state }) => (state.usage.totalTokens >= maxTotalTokens ? 'max_tokens' : undefined);
}

/** Stops once the run has cost `maxCostUsd` (a run without a price costs nothing here). */
export function costBudget(maxCostUsd: number): StopCondition {
  return ({ state }) => ((state.costUsd ?? 0) >= maxCostUsd ? 'max_cost' : undefined);
}

/** Stops once the run's time budget has run out (its timer says so, see `startTimeBudget`). */
export const timeBudget: StopCondition = ({ outOfTime }) => (outOfTime ? 'max_time' : undefined);

/** The first condition that stops, in order: the order decides which status a run ends with. */
export function anyOf(conditions: readonly StopCondition[]): StopCondition {
  return (view) => {
    for (const condition of conditions) {
      const status = condition(view);
      if (status !== undefined) return status;
    }
    return undefined;
  };
}

/** The budgets a run has, as conditions: time, then tokens, then cost. */
export function budgetConditions(budgets: Partial<RunBudgets>): StopCondition[] {
  return [
    ...(budgets.maxDurationSeconds !== undefined ? [timeBudget] : []),
    ...(budgets.maxTotalTokens !== undefined ? [tokenBudget(budgets.maxTotalTokens)] : []),
    ...(budgets.maxCostUsd !== undefined ? [costBudget(budgets.maxCostUsd)] : []),
  ];
}
