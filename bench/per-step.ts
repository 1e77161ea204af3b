import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { silentLogger } from '../test/support/loggers.js';
import { distribution, ratio } from './support/stats.js';
import type { Distribution } from './support/stats.js';
import { BenchModel, benchTask } from './support/bench-model.js';
import { openEnvironment } from './support/environment.js';
import type { BenchEnvironment } from './support/environment.js';
import { fetchEvents, historySize, mergeBreakdowns, stepBreakdown } from './support/history-timeline.js';
import type { StepBreakdown } from './support/history-timeline.js';
import { startKeelWorker } from './support/keel-worker.js';
import type { BenchWorker, BenchWorkerOptions } from './support/keel-worker.js';
import { localNoopTool } from './support/noop-tool.js';
import { histogramMean, scrapeMetrics } from './support/metrics.js';
import type { MetricsSnapshot } from './support/metrics.js';
import { plainLoop } from './support/plain-loop.js';
import type { WhatIfInput } from './what-if/workflows.js';
import { KEEL_SERVER_DYNAMIC_CONFIG } from '../src/server-settings.js';
import { ACTIVITY_NAMES } from '../src/contract/activity-names.js';

/** Options of the per-step benchmark. */
export interface PerStepOptions {
  /** Model turns per run (turns − 1 steps of one model turn + one tool call). */
  turns: number;
  /** Runs of each variant, interleaved so that noise hits every variant alike. */
  repetitions: number;
  /** Also run the agent built with `@temporalio/openai-agents`. */
  agents: boolean;
  /** Also run Keel on a second dev server with eager activity dispatch enabled. */
  eagerServer: boolean;
  /** Also run Keel's activities under the what-if loops (minimal workflow; tool as a local activity). */
  whatIf: boolean;
}

/** One way of running the agent. */
export interface VariantResult {
  label: string;
  runs: number;
  /** Milliseconds per step (model request to next model request), over all runs' steps. */
  stepMs: Distribution;
  /** Milliseconds per whole run, start to result. */
  runMs: Distribution;
  /** Where each step's time goes, from the workflow histories (Temporal variants only). */
  breakdown?: StepBreakdown;
  /** History length and size of one run (Temporal variants only). */
  history?: { events: number; bytes: number };
  /** The worker's own view, from the SDK's metrics (mean ms; Temporal variants only). */
  workerMetrics?: Record<string, { meanMs: number; count: number }>;
}

/** What the per-step benchmark found. */
export interface PerStepResult {
  options: PerStepOptions;
  variants: Record<string, VariantResult>;
  /**
   * Ratios of ms/step between variants (b = keel, a = plain, c = openai-agents): median, mean, p95,
   * and `busy`, the ratio without workflow-task dispatch waits (Temporal variants only).
   */
  ratios: Record<string, { median: number; mean: number; p95: number; busy?: number }>;
  /** Why the `@temporalio/openai-agents` variant did not run, if it did not. */
  agentsUnavailable?: string;
  /** Mean latency and count of the worker's calls to the server, all Temporal variants together. */
  serverCalls: Record<string, { meanMs: number; count: number }>;
}

interface Variant {
  name: string;
  label: string;
  /** Starts a run and waits for it; returns the workflow id for Temporal variants. */
  run(task: string, turns: number): Promise<string | undefined>;
  environment?: BenchEnvironment;
  modelActivity?: string;
  taskQueue?: string;
  stop(): Promise<void>;
}

/**
 * Per-step overhead: the same 20-turn agent (instant scripted model, no-op tool) as (a) a plain loop,
 * (b) Keel, (c) `@temporalio/openai-agents`, runs interleaved; steps timed where the model server
 * sees each request, and Keel's step time broken down from its workflow histories.
 */
export async function benchPerStep(
  environment: BenchEnvironment,
  options: PerStepOptions,
  say: (line: string) => void,
): Promise<PerStepResult> {
  const model = await BenchModel.start({ turns: options.turns });
  const variants: Variant[] = [];
  let agentsUnavailable: string | undefined;
  try {
    const plain = await plainLoop(model.url, environment.directory);
    variants.push({
      name: 'plain',
      label: '(a) plain loop, no Temporal',
      run: async (task, turns) => {
        await plain(task, turns);
        return undefined;
      },
      stop: () => Promise.resolve(),
    });
    variants.push(await keelVariant('keel', '(b) Keel, local dev server', environment, model.url));
    variants.push(
      await keelVariant('keelLocal', '(b″) Keel, the tool marked local', environment, model.url, [
        localNoopTool,
      ]),
    );
    if (options.agents) {
      try {
        variants.push(await agentsVariant(environment, model.url));
      } catch (error) {
        agentsUnavailable = (error as Error).message;
        say(`per-step: @temporalio/openai-agents unavailable: ${agentsUnavailable}`);
      }
    }
    if (options.whatIf) {
      const bundle = await bundleWhatIf(environment.directory);
      variants.push(
        await whatIfVariant(
          'minimal',
          "(d) Keel's activities, minimal workflow",
          environment,
          model.url,
          bundle,
          false,
        ),
        await whatIfVariant(
          'localTool',
          '(e) as (d), tool as a local activity',
          environment,
          model.url,
          bundle,
          true,
        ),
      );
    }
    if (options.eagerServer) {
      const eager = await openEnvironment({
        kind: 'start',
        dynamicConfig: { ...KEEL_SERVER_DYNAMIC_CONFIG, 'system.enableActivityEagerExecution': true },
        keelBundlePath: environment.keelBundle.codePath,
      });
      const variant = await keelVariant(
        'keelEager',
        '(b′) Keel, server with eager activity dispatch',
        eager,
        model.url,
      );
      variants.push({
        ...variant,
        stop: async () => {
          await variant.stop();
          await eager.close();
        },
      });
    }

    const metricsBefore = await scrapeMetrics();
    const workflowIds = new Map<string, string[]>();
    const runTimes = new Map<string, number[]>();
    // A short warm-up run per variant: worker start, sandbox creation and connections are not per-step costs.
    for (const variant of variants) await variant.run(benchTask(`warmup-${variant.name}`, 3), 3);
    for (let repetition = 0; repetition < options.repetitions; repetition++) {
      for (const variant of variants) {
        const started = performance.now();
        const workflowId = await variant.run(benchTask(`${variant.name}-${repetition}`), options.turns);
        runTimes.set(variant.name, [...(runTimes.get(variant.name) ?? []), performance.now() - started]);
        if (workflowId !== undefined)
          workflowIds.set(variant.name, [...(workflowIds.get(variant.name) ?? []), workflowId]);
      }
      say(`per-step: repetition ${repetition + 1}/${options.repetitions} done`);
    }

    const metricsAfter = await scrapeMetrics();
    const results: Record<string, VariantResult> = {};
    for (const variant of variants) {
      const intervals = [...model.arrivals.entries()]
        .filter(([run]) => run.startsWith(`${variant.name}-`))
        .flatMap(([, times]) => times.slice(1).map((time, index) => time - (times[index] ?? time)));
      const ids = workflowIds.get(variant.name) ?? [];
      const result: VariantResult = {
        label: variant.label,
        runs: runTimes.get(variant.name)?.length ?? 0,
        stepMs: distribution(intervals),
        runMs: distribution(runTimes.get(variant.name) ?? [], 1),
      };
      if (ids.length > 0 && variant.environment !== undefined && variant.modelActivity !== undefined) {
        const client = variant.environment.client;
        const histories = await Promise.all(ids.map((id) => fetchEvents(client, id)));
        const breakdown = mergeBreakdowns(
          histories.map((events) => stepBreakdown(events, variant.modelActivity!)),
        );
        if (breakdown !== undefined) result.breakdown = breakdown;
        result.history = await historySize(client, ids[0]!);
      }
      if (variant.taskQueue !== undefined)
        result.workerMetrics = workerMetrics(metricsBefore, metricsAfter, variant.taskQueue);
      results[variant.name] = result;
    }
    if (model.problems.length > 0) throw new Error(`benchmark model: ${model.problems.join('; ')}`);
    return {
      options,
      variants: results,
      ratios: ratios(results),
      ...(agentsUnavailable ? { agentsUnavailable } : {}),
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

function ratios(
  results: Record<string, VariantResult>,
): Record<string, { median: number; mean: number; p95: number; busy?: number }> {
  const pairs: Array<[string, string, string]> = [
    ['keel/plain', 'keel', 'plain'],
    ['keel/agents', 'keel', 'agents'],
    ['agents/plain', 'agents', 'plain'],
    ['keelLocal/keel', 'keelLocal', 'keel'],
    ['keelLocal/agents', 'keelLocal', 'agents'],
    ['keelLocal/plain', 'keelLocal', 'plain'],
    ['keelEager/keel', 'keelEager', 'keel'],
    ['minimal/keel', 'minimal', 'keel'],
    ['localTool/keel', 'localTool', 'keel'],
    ['localTool/minimal', 'localTool', 'minimal'],
  ];
  const found: Record<string, { median: number; mean: number; p95: number; busy?: number }> = {};
  for (const [name, top, bottom] of pairs) {
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

async function keelVariant(
  name: string,
  label: string,
  environment: BenchEnvironment,
  modelUrl: string,
  tools?: BenchWorkerOptions['tools'],
): Promise<Variant> {
  return workerVariant(
    name,
    label,
    environment,
    { modelUrl, ...(tools ? { tools } : {}) },
    async (started, task, turns) => {
      const runId = await started.keel.startRun({ task, maxTurns: turns, tools: ['noop'] });
      const result = await started.keel.waitForResult(runId);
      if (result.status !== 'completed') throw new Error(`Keel run ${runId} ended ${result.status}`);
      return runId;
    },
  );
}

/** A variant served by a Keel worker in this process; `run` starts one run on it and returns its workflow id. */
async function workerVariant(
  name: string,
  label: string,
  environment: BenchEnvironment,
  options: BenchWorkerOptions,
  run: (started: BenchWorker, task: string, turns: number) => Promise<string>,
): Promise<Variant> {
  const started = await startKeelWorker(environment, options);
  const running = started.worker.run();
  // stop() awaits it and fails there; until then a worker failure must not go unhandled.
  running.catch(() => undefined);
  return {
    name,
    label,
    environment,
    modelActivity: ACTIVITY_NAMES.callModel,
    taskQueue: started.taskQueue,
    run: (task, turns) => run(started, task, turns),
    async stop() {
      started.worker.shutdown();
      await running;
      await started.connection.close();
    },
  };
}

async function bundleWhatIf(directory: string): Promise<string> {
  const bundlePath = path.join(directory, 'what-if-workflows.js');
  const bundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('./what-if/workflows.ts', import.meta.url)),
    logger: silentLogger,
  });
  await writeFile(bundlePath, bundle.code);
  return bundlePath;
}

async function whatIfVariant(
  name: string,
  label: string,
  environment: BenchEnvironment,
  modelUrl: string,
  bundlePath: string,
  localTool: boolean,
): Promise<Variant> {
  const options = { modelUrl, workflowBundle: { codePath: bundlePath } };
  return workerVariant(name, label, environment, options, async (started, task, turns) => {
    const workflowId = `what-if-${randomUUID()}`;
    const input: WhatIfInput = { task, maxTurns: turns, localTool };
    await environment.client.workflow.execute('whatIfLoop', {
      taskQueue: started.taskQueue,
      workflowId,
      args: [input],
    });
    return workflowId;
  });
}

async function agentsVariant(environment: BenchEnvironment, modelUrl: string): Promise<Variant> {
  // Imported here so that a broken install of the optional comparison cannot stop the other benchmarks.
  const { bundleAgentsWorkflows, startAgentsWorker } = await import('./agents/worker.js');
  const bundlePath = await bundleAgentsWorkflows(environment.directory);
  const agents = await startAgentsWorker(environment, { modelUrl, bundlePath });
  const running = agents.worker.run();
  // stop() awaits it and fails there; until then a worker failure must not go unhandled.
  running.catch(() => undefined);
  return {
    name: 'agents',
    label: '(c) @temporalio/openai-agents, same server',
    environment,
    modelActivity: 'invokeModelActivity',
    taskQueue: agents.taskQueue,
    async run(task, turns) {
      const workflowId = await agents.start(task, turns + 1);
      await agents.result(workflowId);
      return workflowId;
    },
    async stop() {
      agents.worker.shutdown();
      await running;
      await agents.connection.close();
    },
  };
}

/** One line per variant and ratio, for the summary. */
export function summarizePerStep(result: PerStepResult): string[] {
  const lines = Object.values(result.variants).map(
    (variant) =>
      `  ${variant.label.padEnd(48)} step median ${variant.stepMs.median} ms, mean ${variant.stepMs.mean} ms, p95 ${variant.stepMs.p95} ms` +
      (variant.breakdown
        ? ` (${variant.breakdown.workflowTasksPerStep} workflow tasks, ${variant.breakdown.eventsPerStep} events per step)`
        : ''),
  );
  for (const [name, value] of Object.entries(result.ratios)) {
    lines.push(
      `  ${name.padEnd(48)} ${value.median}× median, ${value.mean}× mean, ${value.p95}× p95` +
        (value.busy === undefined ? '' : `, ${value.busy}× without workflow-task waits`),
    );
  }
  if (result.agentsUnavailable) lines.push(`  (c) not measured: ${result.agentsUnavailable}`);
  return lines;
}
