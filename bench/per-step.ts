import { distribution, round } from './support/stats.js';
import { BenchModel, benchTask } from './support/bench-model.js';
import type { BenchEnvironment } from './support/environment.js';
import { fetchEvents, historySize, mergeBreakdowns, stepBreakdown } from './support/history-timeline.js';
import {
  addServerLoad,
  emptyServerLoad,
  histogramMean,
  scrapeMetrics,
  serverLoadMeans,
} from './support/metrics.js';
import type { MetricsSnapshot, ServerLoadTotals } from './support/metrics.js';
import type { Variant } from './per-step-variants.js';
import { startVariants } from './per-step-start.js';
import { LOOP_TURNS, ratios, VERCEL_WORKFLOW_5_STEP_LOOP_OVERHEAD_MS } from './per-step-result.js';
import type { PerStepOptions, PerStepResult, VariantResult } from './per-step-result.js';

export { summarizePerStep } from './per-step-result.js';
export type { PerStepOptions, PerStepResult, VariantResult } from './per-step-result.js';

/** What one variant's measured runs added up to, while they run. */
interface Tally {
  runTimes: number[];
  loopTimes: number[];
  workflowIds: string[];
  cpuSeconds: number;
  steps: number;
  serverLoad: ServerLoadTotals;
}

/**
 * Per-step overhead: the same agent (instant scripted model, no-op tool) as a plain loop, as Keel's
 * built worker in its own process on Keel's dev server and on a stock one, and as the
 * `@temporalio/openai-agents` agent in its own process, runs interleaved; steps timed where the model
 * server sees each request, broken down from the histories and the dev server's own metrics.
 */
export async function benchPerStep(
  environment: BenchEnvironment,
  options: PerStepOptions,
  say: (line: string) => void,
): Promise<PerStepResult> {
  const model = await BenchModel.start({ turns: options.turns });
  const variants: Variant[] = [];
  const notMeasured: Record<string, string> = {};
  try {
    variants.push(...(await startVariants(environment, options, model.url, notMeasured, say)));
    const tallies = new Map<string, Tally>(
      variants.map((variant) => [
        variant.name,
        {
          runTimes: [],
          loopTimes: [],
          workflowIds: [],
          cpuSeconds: 0,
          steps: 0,
          serverLoad: emptyServerLoad(),
        },
      ]),
    );
    // A short warm-up run per variant: worker start, sandbox creation and connections are not per-step costs.
    for (const variant of variants) await variant.run(benchTask(`warmup-${variant.name}`, 3), 3);
    const metricsBefore = await scrapeMetrics();
    for (let repetition = 0; repetition < options.repetitions; repetition++) {
      for (const variant of variants) {
        const tally = tallies.get(variant.name)!;
        const measured = await measure(variant, tally, `${variant.name}-${repetition}`, options.turns);
        tally.runTimes.push(measured.ms);
        tally.cpuSeconds += measured.cpuSeconds;
        tally.steps += options.turns - 1;
        if (measured.workflowId !== undefined) tally.workflowIds.push(measured.workflowId);
      }
      say(`per-step: repetition ${repetition + 1}/${options.repetitions} done`);
    }
    for (let run = 0; run < options.loopRuns; run++) {
      for (const variant of variants) {
        const tally = tallies.get(variant.name)!;
        const key = `loop${LOOP_TURNS}-${variant.name}-${run}`;
        tally.loopTimes.push((await measure(variant, tally, key, LOOP_TURNS)).ms);
      }
    }
    if (options.loopRuns > 0) say(`per-step: ${options.loopRuns} ${LOOP_TURNS}-turn runs per variant done`);
    const metricsAfter = await scrapeMetrics();

    const plainLoops = tallies.get('plain')?.loopTimes ?? [];
    const results: Record<string, VariantResult> = {};
    for (const variant of variants) {
      const tally = tallies.get(variant.name)!;
      const intervals = [...model.arrivals.entries()]
        .filter(([run]) => run.startsWith(`${variant.name}-`))
        .flatMap(([, times]) => times.slice(1).map((time, index) => time - (times[index] ?? time)));
      const result: VariantResult = {
        label: variant.label,
        runs: tally.runTimes.length,
        stepMs: distribution(intervals),
        runMs: distribution(tally.runTimes, 1),
      };
      if (tally.loopTimes.length > 0) {
        result.loop = { runMs: distribution(tally.loopTimes, 1) };
        if (variant.name !== 'plain' && plainLoops.length === tally.loopTimes.length)
          result.loop.overheadMs = distribution(
            tally.loopTimes.map((time, index) => time - plainLoops[index]!),
            1,
          );
      }
      const ids = tally.workflowIds;
      if (ids.length > 0 && variant.environment !== undefined && variant.modelActivity !== undefined) {
        const client = variant.environment.client;
        const histories = await Promise.all(ids.map((id) => fetchEvents(client, id)));
        const breakdown = mergeBreakdowns(
          histories.map((events) => stepBreakdown(events, variant.modelActivity!)),
        );
        if (breakdown !== undefined) result.breakdown = breakdown;
        result.history = await historySize(client, ids[0]!);
      }
      if (variant.inProcessTaskQueue !== undefined)
        result.workerMetrics = workerMetrics(metricsBefore, metricsAfter, variant.inProcessTaskQueue);
      if (variant.process !== undefined && tally.steps > 0)
        result.workerCpuMsPerStep = round((tally.cpuSeconds * 1000) / tally.steps);
      if (variant.environment?.serverMetricsUrl !== undefined)
        result.serverLoad = serverLoadMeans(tally.serverLoad);
      results[variant.name] = result;
    }
    if (model.problems.length > 0) throw new Error(`benchmark model: ${model.problems.join('; ')}`);
    return {
      options,
      variants: results,
      ratios: ratios(results),
      vercelLoopOverheadMs: VERCEL_WORKFLOW_5_STEP_LOOP_OVERHEAD_MS,
      notMeasured,
      serverCalls: Object.fromEntries(
        ['RespondWorkflowTaskCompleted', 'RespondActivityTaskCompleted', 'RecordActivityTaskHeartbeat'].map(
          (operation) => [
            operation,
            histogramMean(metricsBefore, metricsAfter, 'temporal_request_latency', { operation }),
          ],
        ),
      ),
    };
  } finally {
    for (const variant of variants.reverse()) await variant.stop();
    await model.close();
  }
}

/**
 * One measured run of `variant`: its wall time, its worker process's CPU time, and (added to
 * `tally`) the dev server's transfer-queue load latencies over it. Runs go one at a time, so the
 * server's metrics between two scrapes are this run's.
 */
async function measure(
  variant: Variant,
  tally: Tally,
  key: string,
  turns: number,
): Promise<{ ms: number; cpuSeconds: number; workflowId: string | undefined }> {
  const metricsUrl = variant.environment?.serverMetricsUrl;
  const serverBefore = metricsUrl === undefined ? undefined : await scrapeMetrics(metricsUrl);
  const cpuBefore = (await variant.process?.usage())?.cpuSeconds ?? 0;
  const started = performance.now();
  const workflowId = await variant.run(benchTask(key, turns), turns);
  const ms = performance.now() - started;
  const cpuAfter = (await variant.process?.usage())?.cpuSeconds ?? 0;
  if (serverBefore !== undefined)
    addServerLoad(tally.serverLoad, serverBefore, await scrapeMetrics(metricsUrl));
  return { ms, cpuSeconds: cpuAfter - cpuBefore, workflowId };
}

/** The SDK's timings for one task queue: workflow task execution and each activity's execution. */
function workerMetrics(
  before: MetricsSnapshot,
  after: MetricsSnapshot,
  taskQueue: string,
): Record<string, { meanMs: number; count: number }> {
  const found: Record<string, { meanMs: number; count: number }> = {
    'workflow task execution': histogramMean(before, after, 'temporal_workflow_task_execution_latency', {
      task_queue: taskQueue,
    }),
    'workflow task schedule→start': histogramMean(
      before,
      after,
      'temporal_workflow_task_schedule_to_start_latency',
      { task_queue: taskQueue },
    ),
  };
  const types = new Set(
    [...after.keys()]
      .filter((key) => key.startsWith('temporal_activity_execution_latency{') && key.includes(taskQueue))
      .map((key) => /activity_type="([^"]+)"/.exec(key)?.[1])
      .filter((type) => type !== undefined),
  );
  for (const type of types) {
    found[`${type} execution`] = histogramMean(before, after, 'temporal_activity_execution_latency', {
      task_queue: taskQueue,
      activity_type: type,
    });
  }
  return found;
}
