import { randomUUID } from 'node:crypto';
import type { WorkerOptions } from '@temporalio/worker';
import { KeelClient } from '../src/client.js';
import type { RunResult } from '../src/contract/run-result.js';
import { BenchModel, benchTask } from './support/bench-model.js';
import type { BenchEnvironment } from './support/environment.js';
import { dispatchLatencies, fetchEvents } from './support/history-timeline.js';
import { mapLimit } from './support/pool.js';
import { ownCpuSeconds, processCpuSeconds } from './support/process-usage.js';
import { distribution, ratio, round } from './support/stats.js';
import type { Distribution } from './support/stats.js';
import { BenchWorkerProcess } from './support/worker-process.js';

/** Worker settings tried, by name; `default` is what `createKeelWorker` gives. */
export const WORKER_SETTINGS: Record<string, Partial<WorkerOptions>> = {
  default: {},
  /** Enough activity slots for every run's model call to be in flight at once. */
  activitySlots: { maxConcurrentActivityTaskExecutions: 2_000 },
  /** As `activitySlots`, plus more workflow-task slots and autoscaling pollers. */
  tuned: {
    maxConcurrentActivityTaskExecutions: 2_000,
    maxConcurrentWorkflowTaskExecutions: 200,
    workflowTaskPollerBehavior: { type: 'autoscaling', maximum: 50 },
    activityTaskPollerBehavior: { type: 'autoscaling', maximum: 50 },
  },
  /** A workflow cache far smaller than the number of runs: evicted runs are replayed from history. */
  smallCache: { maxCachedWorkflows: 20, maxConcurrentWorkflowTaskExecutions: 20 },
};

/** One measurement: `runs` concurrent runs on one worker process with one worker setting. */
export interface ConcurrencyCase {
  runs: number;
  setting: keyof typeof WORKER_SETTINGS;
}

/** Options of the concurrency benchmark. */
export interface ConcurrencyOptions {
  cases: ConcurrencyCase[];
  turns: number;
  modelLatencyMs: number;
}

/** What one case measured. */
export interface ConcurrencyCaseResult extends ConcurrencyCase {
  workerOptions: Partial<WorkerOptions>;
  completed: number;
  /** Seconds from the first start to the last result. */
  wallSeconds: number;
  /** `turns × model latency`: the wall time with no overhead at all. */
  idealSeconds: number;
  overIdeal: number;
  /** Seconds it took to start every run (they start in parallel, 50 at a time). */
  startSeconds: number;
  /** Steps (model turn + tool call) finished per second, all runs together. */
  stepsPerSecond: number;
  worker: {
    cpuSeconds: number;
    cpuSecondsPerRun: number;
    /** Resident memory once the worker polled, before any run. */
    idleRssMiB: number;
    peakRssMiB: number;
    peakRssPerRunMiB: number;
  };
  /** CPU seconds of the Temporal dev server and of this process (client and model server) in the case. */
  serverCpuSeconds?: number;
  benchProcessCpuSeconds: number;
  /** Schedule→start (ms) of every workflow task and activity of every run, from the histories. */
  workflowTaskLatency: Distribution;
  activityLatency: Distribution;
}

/** What the concurrency benchmark found. */
export interface ConcurrencyResult {
  options: ConcurrencyOptions;
  cases: ConcurrencyCaseResult[];
}

/**
 * Concurrency: many runs of `turns` turns at once on one worker (in its own process, so its CPU time
 * and memory are its own), the model answering after `modelLatencyMs`. Each case gets a fresh worker.
 */
export async function benchConcurrency(
  environment: BenchEnvironment,
  options: ConcurrencyOptions,
  say: (line: string) => void,
): Promise<ConcurrencyResult> {
  const cases: ConcurrencyCaseResult[] = [];
  for (const benchCase of options.cases) {
    const result = await runCase(environment, options, benchCase);
    say(
      `concurrency: ${benchCase.runs} runs, ${benchCase.setting}: ${result.wallSeconds} s ` +
        `(${result.overIdeal}× ideal), worker ${result.worker.cpuSeconds} CPU s, ` +
        `peak RSS ${result.worker.peakRssMiB} MiB, workflow task p95 ${result.workflowTaskLatency.p95} ms`,
    );
    cases.push(result);
  }
  return { options, cases };
}

async function runCase(
  environment: BenchEnvironment,
  options: ConcurrencyOptions,
  benchCase: ConcurrencyCase,
): Promise<ConcurrencyCaseResult> {
  const model = await BenchModel.start({ turns: options.turns, latencyMs: options.modelLatencyMs });
  const taskQueue = `keel-bench-${randomUUID()}`;
  const workerOptions = WORKER_SETTINGS[benchCase.setting] ?? {};
  const { process: worker, ready } = await BenchWorkerProcess.start({
    address: environment.address,
    namespace: environment.namespace,
    taskQueue,
    modelUrl: model.url,
    bundlePath: environment.keelBundle.codePath,
    searchAttributes: environment.searchAttributes,
    workerOptions,
  });
  try {
    const keel = new KeelClient(environment.client, taskQueue);
    const serverCpuBefore = environment.serverPid && (await processCpuSeconds(environment.serverPid));
    const ownCpuBefore = ownCpuSeconds();
    const started = performance.now();
    const keys = Array.from({ length: benchCase.runs }, (_, index) => `c${benchCase.runs}-${index}`);
    const runIds = await mapLimit(keys, 50, (key) =>
      keel.startRun({ task: benchTask(key), maxTurns: options.turns, tools: ['noop'] }),
    );
    const startSeconds = (performance.now() - started) / 1000;
    const results = await mapLimit(runIds, 200, (runId) =>
      keel.waitForResult(runId).catch((error: unknown): RunResult | undefined => {
        void error;
        return undefined;
      }),
    );
    const wallSeconds = (performance.now() - started) / 1000;
    const usage = await worker.usage();
    const ownCpu = ownCpuSeconds() - ownCpuBefore;
    const serverCpuAfter = environment.serverPid && (await processCpuSeconds(environment.serverPid));
    const histories = await mapLimit(runIds, 20, (runId) => fetchEvents(environment.client, runId));
    const latencies = histories.map((events) => dispatchLatencies(events));
    const idealSeconds = (options.turns * options.modelLatencyMs) / 1000;
    const cpuSeconds = usage.cpuSeconds - ready.cpuSeconds;
    return {
      ...benchCase,
      workerOptions,
      completed: results.filter((result) => result?.status === 'completed').length,
      wallSeconds: round(wallSeconds),
      idealSeconds,
      overIdeal: ratio(wallSeconds, idealSeconds),
      startSeconds: round(startSeconds),
      stepsPerSecond: round((benchCase.runs * (options.turns - 1)) / wallSeconds, 1),
      worker: {
        cpuSeconds: round(cpuSeconds),
        cpuSecondsPerRun: round(cpuSeconds / benchCase.runs, 4),
        idleRssMiB: round(ready.rssMiB, 1),
        peakRssMiB: round(usage.peakRssMiB, 1),
        peakRssPerRunMiB: round((usage.peakRssMiB - ready.rssMiB) / benchCase.runs, 3),
      },
      ...(typeof serverCpuBefore === 'number' && typeof serverCpuAfter === 'number'
        ? { serverCpuSeconds: round(serverCpuAfter - serverCpuBefore) }
        : {}),
      benchProcessCpuSeconds: round(ownCpu),
      workflowTaskLatency: distribution(latencies.flatMap((latency) => latency.workflowTask)),
      activityLatency: distribution(latencies.flatMap((latency) => latency.activity)),
    };
  } finally {
    await worker.stop();
    await model.close();
  }
}

/** One line per case, for the summary. */
export function summarizeConcurrency(result: ConcurrencyResult): string[] {
  return result.cases.map(
    (entry) =>
      `  ${String(entry.runs).padStart(5)} runs ${entry.setting.padEnd(13)} ${entry.completed}/${entry.runs} completed, ` +
      `${entry.wallSeconds} s = ${entry.overIdeal}× ideal, worker ${entry.worker.cpuSecondsPerRun} CPU s and ` +
      `${entry.worker.peakRssPerRunMiB} MiB per run (peak ${entry.worker.peakRssMiB} MiB), ` +
      `workflow task p95 ${entry.workflowTaskLatency.p95} ms, activity p95 ${entry.activityLatency.p95} ms`,
  );
}
