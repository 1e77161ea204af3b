import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { benchConcurrency, summarizeConcurrency } from './concurrency.js';
import type { ConcurrencyOptions, ConcurrencyResult } from './concurrency.js';
import { benchHistory, summarizeHistory } from './history.js';
import type { HistoryOptions, HistoryResult } from './history.js';
import { benchPerStep, summarizePerStep } from './per-step.js';
import type { PerStepOptions, PerStepResult } from './per-step.js';
import { benchRecovery, summarizeRecovery } from './recovery.js';
import type { RecoveryOptions, RecoveryResult } from './recovery.js';
import type { BenchEnvironment } from './support/environment.js';

/** The four benchmarks, by the name of their results file. */
export const BENCHMARKS = ['per-step', 'concurrency', 'history', 'recovery'] as const;
export type BenchmarkName = (typeof BENCHMARKS)[number];

/** How big each benchmark runs. */
export interface SuiteSize {
  'per-step': PerStepOptions;
  concurrency: ConcurrencyOptions;
  history: HistoryOptions;
  recovery: RecoveryOptions;
}

/**
 * Named sizes: `quick` is what CI runs once (seconds, every row once); `default` is what `npm run
 * bench` runs (100 and 500 concurrent runs); `full` adds 1,000 concurrent runs and more samples.
 */
export const SIZES: Record<'quick' | 'default' | 'full', SuiteSize> = {
  quick: {
    'per-step': {
      turns: 4,
      repetitions: 1,
      loopRuns: 1,
      agents: true,
      stockServer: true,
      agentsOnStockServer: false,
      localTool: false,
      eagerServer: false,
      inProcess: false,
    },
    concurrency: {
      cases: [
        { runs: 5, agent: 'keel' },
        { runs: 5, agent: 'agents' },
      ],
      turns: 3,
      modelLatencyMs: 100,
    },
    history: { turns: 4, observationSizes: [100, 12_000] },
    recovery: { kills: 1, cancels: 1, heartbeatTimeouts: [1] },
  },
  default: {
    'per-step': {
      turns: 20,
      repetitions: 5,
      loopRuns: 20,
      agents: true,
      stockServer: true,
      agentsOnStockServer: true,
      localTool: true,
      eagerServer: false,
      inProcess: true,
    },
    concurrency: {
      cases: concurrencyCases([100, 500]),
      turns: 10,
      modelLatencyMs: 500,
    },
    history: { turns: 12, observationSizes: [100, 12_000] },
    recovery: { kills: 3, cancels: 5, heartbeatTimeouts: [2, 5] },
  },
  full: {
    'per-step': {
      turns: 20,
      repetitions: 10,
      loopRuns: 40,
      agents: true,
      stockServer: true,
      agentsOnStockServer: true,
      localTool: true,
      eagerServer: true,
      inProcess: true,
    },
    concurrency: {
      // The peer stops at 500: there it took 512 s (102× ideal) and 4 GiB; 1,000 would take the
      // better part of an hour on 2 cores.
      cases: concurrencyCases([100, 500, 1000], [100, 500]),
      turns: 10,
      modelLatencyMs: 500,
    },
    history: { turns: 30, observationSizes: [100, 12_000] },
    recovery: { kills: 5, cancels: 10, heartbeatTimeouts: [2, 5] },
  },
};

/** Keel's case and the peer's at each size, one after the other. */
function concurrencyCases(
  sizes: readonly number[],
  peerSizes: readonly number[] = sizes,
): ConcurrencyOptions['cases'] {
  return sizes.flatMap((runs) => [
    { runs, agent: 'keel' as const },
    ...(peerSizes.includes(runs) ? [{ runs, agent: 'agents' as const }] : []),
  ]);
}

/** Everything one invocation measured. */
export interface SuiteReport {
  /** The command line that produced the report. */
  command: string;
  size: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  /** The Temporal server the benchmarks ran on: a dev server they started, or `--address`. */
  server: { address: string; namespace: string; version: string; startedByBench: boolean };
  startedAt: string;
  wallSeconds: number;
  results: {
    'per-step'?: PerStepResult;
    concurrency?: ConcurrencyResult;
    history?: HistoryResult;
    recovery?: RecoveryResult;
  };
}

/** Runs the chosen benchmarks in order on one environment, writing `<name>.json` into `outputDirectory`. */
export async function runSuite(options: {
  environment: BenchEnvironment;
  size: keyof typeof SIZES;
  only?: readonly BenchmarkName[];
  outputDirectory: string;
  command: string;
  say?: (line: string) => void;
}): Promise<SuiteReport> {
  const say = options.say ?? ((line: string) => console.error(line));
  const size = SIZES[options.size];
  const chosen = options.only ?? BENCHMARKS;
  const started = performance.now();
  const report: SuiteReport = {
    command: options.command,
    size: options.size,
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
    },
    server: {
      address: options.environment.address,
      namespace: options.environment.namespace,
      version: options.environment.serverVersion,
      startedByBench: options.environment.serverPid !== undefined,
    },
    startedAt: new Date().toISOString(),
    wallSeconds: 0,
    results: {},
  };
  await mkdir(options.outputDirectory, { recursive: true });
  const save = async (name: BenchmarkName, result: unknown): Promise<void> =>
    writeFile(
      path.join(options.outputDirectory, `${name}.json`),
      `${JSON.stringify({ command: options.command, size: options.size, machine: report.machine, result }, null, 2)}\n`,
    );
  const { environment } = options;
  if (chosen.includes('per-step')) {
    report.results['per-step'] = await benchPerStep(environment, size['per-step'], say);
    await save('per-step', report.results['per-step']);
  }
  if (chosen.includes('concurrency')) {
    report.results.concurrency = await benchConcurrency(environment, size.concurrency, say);
    await save('concurrency', report.results.concurrency);
  }
  if (chosen.includes('history')) {
    report.results.history = await benchHistory(environment, size.history, say);
    await save('history', report.results.history);
  }
  if (chosen.includes('recovery')) {
    report.results.recovery = await benchRecovery(environment, size.recovery, say);
    await save('recovery', report.results.recovery);
  }
  report.wallSeconds = Math.round((performance.now() - started) / 100) / 10;
  return report;
}

/** The report as the lines `npm run bench` prints. */
export function summarize(report: SuiteReport): string[] {
  const { results } = report;
  return [
    `Keel benchmarks (${report.size}), ${report.machine.cpus} × ${report.machine.cpuModel}, node ${report.machine.node}`,
    `command: ${report.command}`,
    `server: ${report.server.startedByBench ? 'a dev server the bench started' : 'an existing server'} at ` +
      `${report.server.address} (namespace ${report.server.namespace}), Temporal ${report.server.version}` +
      (report.server.startedByBench ? '' : '; server CPU: n/a'),
    ...(results['per-step'] ? ['1. per-step overhead', ...summarizePerStep(results['per-step'])] : []),
    ...(results.concurrency ? ['2. concurrency', ...summarizeConcurrency(results.concurrency)] : []),
    ...(results.history ? ['3. history economy', ...summarizeHistory(results.history)] : []),
    ...(results.recovery ? ['4. recovery and cancellation', ...summarizeRecovery(results.recovery)] : []),
    `all benchmarks: ${report.wallSeconds} s`,
  ];
}
