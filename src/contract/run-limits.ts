// The limits and budgets a run can set, as plain values, apart from their zod schemas in
// run-input.ts so that workflow code resolves them without zod.
import {
  DEFAULT_HEARTBEAT_SECONDS,
  DEFAULT_MAX_TURNS,
  DEFAULT_MODEL_TIMEOUT_SECONDS,
  DEFAULT_OUTPUT_CAP,
} from './defaults.js';
import type { RunBudgets, RunLimits } from './run-input.js';

/** The fields of `RunLimits` (test/contract/run-limits.test.ts holds them to the schema). */
export const RUN_LIMIT_KEYS = [
  'maxTurns',
  'observationCharLimit',
  'modelTimeoutSeconds',
  'heartbeatTimeoutSeconds',
] as const satisfies readonly (keyof RunLimits)[];

/** The fields of `RunBudgets`. */
export const RUN_BUDGET_KEYS = [
  'maxTotalTokens',
  'maxDurationSeconds',
  'maxCostUsd',
] as const satisfies readonly (keyof RunBudgets)[];

/** Limits when neither the run nor the worker sets them. */
export const DEFAULT_RUN_LIMITS: RunLimits = Object.freeze({
  maxTurns: DEFAULT_MAX_TURNS,
  observationCharLimit: DEFAULT_OUTPUT_CAP,
  modelTimeoutSeconds: DEFAULT_MODEL_TIMEOUT_SECONDS,
  heartbeatTimeoutSeconds: DEFAULT_HEARTBEAT_SECONDS,
});

/** The limits that apply to a run: its own, else the worker's, else {@link DEFAULT_RUN_LIMITS}. */
export function resolveLimits(input: Partial<RunLimits>, worker: Partial<RunLimits> = {}): RunLimits {
  const pick = <Key extends keyof RunLimits>(key: Key): RunLimits[Key] =>
    input[key] ?? worker[key] ?? DEFAULT_RUN_LIMITS[key];
  return {
    maxTurns: pick('maxTurns'),
    observationCharLimit: pick('observationCharLimit'),
    modelTimeoutSeconds: pick('modelTimeoutSeconds'),
    heartbeatTimeoutSeconds: pick('heartbeatTimeoutSeconds'),
  };
}
