import type { Distribution } from './support/stats.js';
import { ratio } from './support/stats.js';
import type { StepBreakdown } from './support/history-timeline.js';
import type { ServerLoadMean } from './support/metrics.js';

/** Options of the per-step benchmark. */
export interface PerStepOptions {
  /** Model turns per run (turns − 1 steps of one model turn + one tool call). */
  turns: number;
  /** Runs of each variant, interleaved so that noise hits every variant alike. */
  repetitions: number;
  /** Runs of {@link LOOP_TURNS} turns per variant for the agent-loop overhead, interleaved too. */
  loopRuns: number;
  /** Also run the agent built with `@temporalio/openai-agents` (its worker in its own process). */
  agents: boolean;
  /** Also run Keel on a stock dev server (`dynamicConfig: {}`), without Keel's server settings. */
  stockServer: boolean;
  /** With `agents` and `stockServer`: the peer on the stock server too. */
  agentsOnStockServer: boolean;
  /** Also run the built worker with the no-op tool marked `local`. */
  localTool: boolean;
  /** Also run the built worker on a dev server with eager activity dispatch enabled. */
  eagerServer: boolean;
  /** Also run Keel in the bench process and the what-if loops (minimal workflow; tool as a local activity). */
  inProcess: boolean;
}

/** Model turns of the agent-loop overhead runs. */
export const LOOP_TURNS = 5;

/**
 * Vercel Workflow's published total overhead of a 5-step agent loop, 0.9 s: their figure, as quoted
 * in issue 14, not measured here; printed beside Keel's 5-turn loop overhead.
 */
export const VERCEL_WORKFLOW_5_STEP_LOOP_OVERHEAD_MS = 900;

/** One way of running the agent, measured. */
export interface VariantResult {
  label: string;
  runs: number;
  /** Milliseconds per step (model request to next model request), over all runs' steps. */
  stepMs: Distribution;
  /** Milliseconds per whole run, start to result. */
  runMs: Distribution;
  /** {@link LOOP_TURNS}-turn runs: their wall time, and (not for the plain loop) that minus the plain loop's run beside it. */
  loop?: { runMs: Distribution; overheadMs?: Distribution };
  /** Where each step's time goes, from the workflow histories (Temporal variants only). */
  breakdown?: StepBreakdown;
  /** History length and size of one run (Temporal variants only). */
  history?: { events: number; bytes: number };
  /** The worker's own view, from the SDK's metrics (mean ms; variants whose worker is in this process). */
  workerMetrics?: Record<string, { meanMs: number; count: number }>;
  /** CPU ms of the worker's process per step (variants with a worker process of their own). */
  workerCpuMsPerStep?: number;
  /**
   * The dev server's `task_latency_load` over this variant's measured runs (mean ms): how long its
   * workflow and activity tasks waited in the history shard's transfer queue. Absent on an existing server.
   */
  serverLoad?: Record<'workflowTask' | 'activityTask', ServerLoadMean>;
}

/** What the per-step benchmark found. */
export interface PerStepResult {
  options: PerStepOptions;
  variants: Record<string, VariantResult>;
  /** Ratios of ms/step between variants: median, mean, p95, and `busy`, without workflow-task waits. */
  ratios: Record<string, { median: number; mean: number; p95: number; busy?: number }>;
  /** Vercel Workflow's published 5-step loop overhead (ms), for the loop row. */
  vercelLoopOverheadMs: number;
  /** Why a variant did not run, by variant. */
  notMeasured: Record<string, string>;
  /** Mean latency and count of the in-process workers' calls to the server. */
  serverCalls: Record<string, { meanMs: number; count: number }>;
}

/** Variant pairs whose ms/step the result compares (name: [numerator, denominator]). */
const RATIOS: Record<string, [string, string]> = {
  'keel/plain': ['keel', 'plain'],
  'keel/agents': ['keel', 'agents'],
  'keel/keelStock': ['keel', 'keelStock'],
  'agents/agentsStock': ['agents', 'agentsStock'],
  'keelStock/agentsStock': ['keelStock', 'agentsStock'],
  'agents/plain': ['agents', 'plain'],
  'keelLocal/keel': ['keelLocal', 'keel'],
  'keelLocal/agents': ['keelLocal', 'agents'],
  'keelEager/keel': ['keelEager', 'keel'],
  'keelInProcess/keel': ['keelInProcess', 'keel'],
  'minimal/keelInProcess': ['minimal', 'keelInProcess'],
  'localTool/minimal': ['localTool', 'minimal'],
};

/** The goal for Keel's step against the peer's, at median and p95 (issue 14). */
export const KEEL_TO_AGENTS_GOAL = 0.3;

/** The ratios of {@link RATIOS} between measured variants. */
export function ratios(
  results: Record<string, VariantResult>,
): Record<string, { median: number; mean: number; p95: number; busy?: number }> {
  const found: Record<string, { median: number; mean: number; p95: number; busy?: number }> = {};
  for (const [name, [top, bottom]] of Object.entries(RATIOS)) {
    const upper = results[top]?.stepMs;
    const lower = results[bottom]?.stepMs;
    if (upper && lower) {
      found[name] = {
        median: ratio(upper.median, lower.median),
        mean: ratio(upper.mean, lower.mean),
        p95: ratio(upper.p95, lower.p95),
      };
      const busyUpper = results[top]?.breakdown?.busyMs;
      const busyLower = results[bottom]?.breakdown?.busyMs;
      if (busyUpper !== undefined && busyLower !== undefined) found[name].busy = ratio(busyUpper, busyLower);
    }
  }
  return found;
}

/** History bytes per step, all event types together, rounded to the byte. */
export function bytesPerStep(breakdown: StepBreakdown): number {
  return Math.round(Object.values(breakdown.bytesPerStep).reduce((sum, bytes) => sum + bytes, 0));
}

/** A task kind's mean load latency, its queue latency and count; `– (n=0)` when no task was loaded. */
export function loadText(load: ServerLoadMean): string {
  return load.count === 0 ? '– (n=0)' : `${load.meanMs} (${load.queueMeanMs}, n=${load.count})`;
}

/** One line per variant and ratio, for the summary. */
export function summarizePerStep(result: PerStepResult): string[] {
  const lines = Object.values(result.variants).map(
    (variant) =>
      `  ${variant.label.padEnd(52)} step median ${variant.stepMs.median} ms, mean ${variant.stepMs.mean} ms, p95 ${variant.stepMs.p95} ms` +
      (variant.breakdown
        ? ` (${variant.breakdown.workflowTasksPerStep} workflow tasks, ${variant.breakdown.eventsPerStep} events` +
          `, ${bytesPerStep(variant.breakdown)} bytes per step)`
        : '') +
      (variant.workerCpuMsPerStep === undefined ? '' : `, worker ${variant.workerCpuMsPerStep} CPU ms/step`) +
      (variant.serverLoad
        ? `; server task_latency_load (queue) ms: workflow task ${loadText(variant.serverLoad.workflowTask)}, ` +
          `activity task ${loadText(variant.serverLoad.activityTask)}`
        : ''),
  );
  for (const [name, value] of Object.entries(result.ratios)) {
    lines.push(
      `  ${name.padEnd(52)} ${value.median}× median, ${value.mean}× mean, ${value.p95}× p95` +
        (value.busy === undefined ? '' : `, ${value.busy}× without workflow-task waits`) +
        (name === 'keel/agents' ? ` (goal ≤ ${KEEL_TO_AGENTS_GOAL}× at median and p95)` : ''),
    );
  }
  for (const [name, variant] of Object.entries(result.variants)) {
    const overhead = variant.loop?.overheadMs;
    if (overhead === undefined) continue;
    lines.push(
      `  ${`${LOOP_TURNS}-turn loop overhead, ${name}`.padEnd(52)} median ${overhead.median} ms, mean ${overhead.mean} ms, ` +
        `p95 ${overhead.p95} ms (Vercel Workflow's published 5-step loop: ${result.vercelLoopOverheadMs} ms)`,
    );
  }
  for (const [name, why] of Object.entries(result.notMeasured)) lines.push(`  ${name} not measured: ${why}`);
  return lines;
}
