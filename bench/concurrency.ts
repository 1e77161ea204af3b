import { randomUUID } from 'node:crypto';
import { KeelClient } from '../src/client.js';
import { BenchModel, benchTask } from './support/bench-model.js';
import type { WorkerUsage } from './support/child-worker.js';
import type { ChildWorker } from './support/child-worker.js';
import { startDistWorker } from './support/dist-worker.js';
import type { BenchEnvironment } from './support/environment.js';
import { dispatchLatencies, fetchEvents } from './support/history-timeline.js';
import { mapLimit } from './support/pool.js';
import { ownCpuSeconds, processCpuSeconds } from './support/process-usage.js';
import { distribution, ratio, round } from './support/stats.js';
import type { Distribution } from './support/stats.js';

/** Which agent a case runs: Keel's built worker, or the `@temporalio/openai-agents` agent's worker. */
export type ConcurrencyAgent = 'keel' | 'agents';

/** One measurement: `runs` concurrent runs of one agent on a fresh worker process of its own. */
export interface ConcurrencyCase {
  runs: number;
  agent: ConcurrencyAgent;
}

/** Options of the concurrency benchmark. */
export interface ConcurrencyOptions {
  /** Run in this order; Keel's and the peer's case of one size go one after the other. */
  cases: ConcurrencyCase[];
  turns: number;
  modelLatencyMs: number;
}

/** What one case measured. */
export interface ConcurrencyCaseResult extends ConcurrencyCase {
  completed: number;
  /** Seconds from the first start to the last result. */
  wallSeconds: number;
  /** `turns × model latency`: the wall time with no overhead at all. */
  idealSeconds: number;
  overIdeal: number;
  /** Seconds it took to start every run (they start in parallel, 50 at a time). */
  startSeconds: number;
  /** Steps (model turn + tool call) finished per second, all runs together, over the whole wall time. */
  stepsPerSecond: number;
  /** Model requests per second in the middle half of the wall time, when every run is in flight. */
  saturatedStepsPerSecond: number;
  worker: {
    cpuSeconds: number;
    cpuMsPerStep: number;
    /** Resident memory once the worker polled, before any run. */
    readyRssMiB: number;
    peakRssMiB: number;
    /** (peak RSS − RSS at ready) / runs: what a cached run costs the worker. */
    rssPerRunMiB: number;
  };
  /** The dev server's CPU time in the case (undefined on an existing server: its process is not ours). */
  server?: { cpuSeconds: number; cpuMsPerStep: number };
  /** Worker CPU / (worker + server CPU), when the server's is known. */
  workerCpuShare?: number;
  /** CPU seconds of this process (client and model server) in the case. */
  benchProcessCpuSeconds: number;
  /** Schedule→start (ms) of every workflow task and activity of every run, from the histories. */
  workflowTaskLatency: Distribution;
  activityLatency: Distribution;
}

/** What the concurrency benchmark found. */
export interface ConcurrencyResult {
  options: ConcurrencyOptions;
  cases: ConcurrencyCaseResult[];
  /** Why the peer's cases did not run, if they did not. */
  agentsUnavailable?: string;
}

/** The labels of the agents, for the summary and the tables. */
export const AGENT_LABELS: Record<ConcurrencyAgent, string> = {
  keel: 'Keel (dist worker)',
  agents: '@temporalio/openai-agents',
};

/** A worker process for one case and how to run one agent run on it. */
interface CaseWorker {
  worker: ChildWorker;
  ready: WorkerUsage;
  start: (key: string) => Promise<string>;
  wait: (id: string) => Promise<boolean>;
}

/**
 * Concurrency: many runs of `turns` turns at once on one worker in its own process (Keel's built
 * worker, or the peer's), the model answering after `modelLatencyMs`; CPU and memory read from
 * `/proc` for the worker and the dev server. Each case gets a fresh worker and model server.
 */
export async function benchConcurrency(
  environment: BenchEnvironment,
  options: ConcurrencyOptions,
  say: (line: string) => void,
): Promise<ConcurrencyResult> {
  const cases: ConcurrencyCaseResult[] = [];
  let agentsUnavailable: string | undefined;
  for (const benchCase of options.cases) {
    if (benchCase.agent === 'agents' && agentsUnavailable !== undefined) continue;
    let result: ConcurrencyCaseResult;
    try {
      result = await runCase(environment, options, benchCase);
    } catch (error) {
      if (benchCase.agent !== 'agents') throw error;
      agentsUnavailable = (error as Error).message;
      say(`concurrency: @temporalio/openai-agents unavailable: ${agentsUnavailable}`);
      continue;
    }
    say(`concurrency: ${caseLine(result)}`);
    cases.push(result);
  }
  return { options, cases, ...(agentsUnavailable ? { agentsUnavailable } : {}) };
}

async function startCaseWorker(
  environment: BenchEnvironment,
  agent: ConcurrencyAgent,
  modelUrl: string,
  turns: number,
): Promise<CaseWorker> {
  if (agent === 'keel') {
    const { worker, ready, taskQueue } = await startDistWorker({
      built: environment.built,
      address: environment.address,
      namespace: environment.namespace,
      modelUrl,
      directory: environment.directory,
    });
    const keel = new KeelClient(environment.client, taskQueue);
    return {
      worker,
      ready,
      start: (key) => keel.startRun({ task: benchTask(key), maxTurns: turns, tools: ['noop'] }),
      wait: (id) =>
        keel.waitForResult(id).then(
          (result) => result.status === 'completed',
          () => false,
        ),
    };
  }
  const { bundleAgentsWorkflows, startAgentsWorker } = await import('./agents/worker.js');
  const bundlePath = await bundleAgentsWorkflows(environment.directory);
  const agents = await startAgentsWorker(environment, { modelUrl, bundlePath });
  return {
    worker: agents.worker,
    ready: agents.ready,
    // Its max turns count the final answer's turn apart.
    start: (key) => agents.start(benchTask(key), turns + 1),
    wait: (id) =>
      agents.result(id).then(
        () => true,
        () => false,
      ),
  };
}

async function runCase(
  environment: BenchEnvironment,
  options: ConcurrencyOptions,
  benchCase: ConcurrencyCase,
): Promise<ConcurrencyCaseResult> {
  const model = await BenchModel.start({ turns: options.turns, latencyMs: options.modelLatencyMs });
  try {
    const { worker, ready, start, wait } = await startCaseWorker(
      environment,
      benchCase.agent,
      model.url,
      options.turns,
    );
    try {
      const serverCpuBefore = environment.serverPid && (await processCpuSeconds(environment.serverPid));
      const ownCpuBefore = ownCpuSeconds();
      const started = performance.now();
      const prefix = `c${benchCase.runs}${benchCase.agent}-${randomUUID().slice(0, 8)}`;
      const keys = Array.from({ length: benchCase.runs }, (_, index) => `${prefix}-${index}`);
      const ids = await mapLimit(keys, 50, start);
      const startSeconds = (performance.now() - started) / 1000;
      const completed = (await mapLimit(ids, 200, wait)).filter(Boolean).length;
      const ended = performance.now();
      const wallSeconds = (ended - started) / 1000;
      const usage = await worker.usage();
      const ownCpu = ownCpuSeconds() - ownCpuBefore;
      const serverCpuAfter = environment.serverPid && (await processCpuSeconds(environment.serverPid));
      const histories = await mapLimit(ids, 20, (id) => fetchEvents(environment.client, id));
      const latencies = histories.map((events) => dispatchLatencies(events));
      const idealSeconds = (options.turns * options.modelLatencyMs) / 1000;
      const steps = benchCase.runs * (options.turns - 1);
      const cpuSeconds = usage.cpuSeconds - ready.cpuSeconds;
      const serverCpu =
        typeof serverCpuBefore === 'number' && typeof serverCpuAfter === 'number'
          ? serverCpuAfter - serverCpuBefore
          : undefined;
      // Every run is in flight in the middle half of the wall time: the rate there is the saturated one.
      const from = started + (ended - started) / 4;
      const to = ended - (ended - started) / 4;
      const requests = [...model.arrivals.values()].flat().filter((time) => time >= from && time < to);
      return {
        ...benchCase,
        completed,
        wallSeconds: round(wallSeconds),
        idealSeconds,
        overIdeal: ratio(wallSeconds, idealSeconds),
        startSeconds: round(startSeconds),
        stepsPerSecond: round(steps / wallSeconds, 1),
        saturatedStepsPerSecond: round(requests.length / ((to - from) / 1000), 1),
        worker: {
          cpuSeconds: round(cpuSeconds),
          cpuMsPerStep: round((cpuSeconds * 1000) / steps),
          readyRssMiB: round(ready.rssMiB, 1),
          peakRssMiB: round(usage.peakRssMiB, 1),
          rssPerRunMiB: round((usage.peakRssMiB - ready.rssMiB) / benchCase.runs, 3),
        },
        ...(serverCpu === undefined
          ? {}
          : {
              server: { cpuSeconds: round(serverCpu), cpuMsPerStep: round((serverCpu * 1000) / steps) },
              workerCpuShare: ratio(cpuSeconds, cpuSeconds + serverCpu),
            }),
        benchProcessCpuSeconds: round(ownCpu),
        workflowTaskLatency: distribution(latencies.flatMap((latency) => latency.workflowTask)),
        activityLatency: distribution(latencies.flatMap((latency) => latency.activity)),
      };
    } finally {
      await worker.stop();
    }
  } finally {
    await model.close();
  }
}

function caseLine(entry: ConcurrencyCaseResult): string {
  return (
    `${String(entry.runs).padStart(5)} runs ${AGENT_LABELS[entry.agent].padEnd(26)} ${entry.completed}/${entry.runs} completed, ` +
    `${entry.wallSeconds} s = ${entry.overIdeal}× ideal, ${entry.stepsPerSecond} steps/s (${entry.saturatedStepsPerSecond} at saturation), ` +
    `worker ${entry.worker.cpuMsPerStep} CPU ms/step, server ${entry.server?.cpuMsPerStep ?? 'n/a'} CPU ms/step ` +
    `(worker share ${entry.workerCpuShare ?? 'n/a'}), worker RSS ${entry.worker.rssPerRunMiB} MiB per cached run ` +
    `(peak ${entry.worker.peakRssMiB} MiB), workflow task p95 ${entry.workflowTaskLatency.p95} ms`
  );
}

/** One line per case, and the ratios of Keel's to the peer's at each size, for the summary. */
export function summarizeConcurrency(result: ConcurrencyResult): string[] {
  const lines = result.cases.map((entry) => `  ${caseLine(entry)}`);
  for (const keel of result.cases.filter((entry) => entry.agent === 'keel')) {
    const peer = result.cases.find((entry) => entry.agent === 'agents' && entry.runs === keel.runs);
    if (peer === undefined) continue;
    lines.push(
      `  ${String(keel.runs).padStart(5)} runs Keel/peer: worker CPU per step ` +
        `${ratio(keel.worker.cpuMsPerStep, peer.worker.cpuMsPerStep)}× (goal ≤ 0.5×), RSS per run ` +
        `${ratio(keel.worker.rssPerRunMiB, peer.worker.rssPerRunMiB)}×, wall ${ratio(keel.wallSeconds, peer.wallSeconds)}×`,
    );
  }
  if (result.agentsUnavailable) lines.push(`  the peer was not measured: ${result.agentsUnavailable}`);
  return lines;
}
