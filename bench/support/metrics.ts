import { DefaultLogger, Runtime } from '@temporalio/worker';
import { freePort } from '../../test/support/free-port.js';
import { round } from './stats.js';

/** Where this process's Temporal runtime serves its Prometheus metrics, once installed. */
let metricsUrl: string | undefined;

/**
 * Installs the Temporal runtime of this process with Prometheus metrics on a free loopback port, so
 * the benchmarks can read the SDK's own timings (workflow task execution, RPC latencies). Once per process.
 */
export async function installBenchRuntime(logLevel: 'WARN' | 'ERROR' = 'ERROR'): Promise<void> {
  if (metricsUrl !== undefined) return;
  const port = await freePort();
  Runtime.install({
    logger: new DefaultLogger(logLevel),
    telemetryOptions: {
      // Core warns about every heartbeat of a local activity (the what-if loop); errors are enough here.
      logging: { filter: { core: logLevel, other: logLevel }, forward: {} },
      metrics: { prometheus: { bindAddress: `127.0.0.1:${port}` } },
    },
  });
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
}

/** One histogram's total and count, summed over the series that match. */
export interface HistogramTotal {
  sum: number;
  count: number;
}

/** The runtime's histograms, as scraped: `name{labels}` → sum and count. */
export type MetricsSnapshot = Map<string, HistogramTotal>;

/**
 * Reads the histograms of a Prometheus endpoint: this process's runtime when no `url` is given (an
 * empty snapshot when its metrics are not installed), or the dev server's (`--metrics-port`).
 */
export async function scrapeMetrics(url: string | undefined = metricsUrl): Promise<MetricsSnapshot> {
  const snapshot: MetricsSnapshot = new Map();
  if (url === undefined) return snapshot;
  const text = await (await fetch(url)).text();
  for (const line of text.split('\n')) {
    const match = /^(\w+)_(sum|count)(\{[^}]*\})? ([\d.e+-]+)$/.exec(line);
    if (match === null) continue;
    const key = `${match[1]}${match[3] ?? ''}`;
    const total = snapshot.get(key) ?? { sum: 0, count: 0 };
    if (match[2] === 'sum') total.sum += Number(match[4]);
    else total.count += Number(match[4]);
    snapshot.set(key, total);
  }
  return snapshot;
}

/**
 * Sum and count of histogram `name` over series whose labels contain every `labels` pair, grown
 * between two snapshots.
 */
export function histogramTotal(
  before: MetricsSnapshot,
  after: MetricsSnapshot,
  name: string,
  labels: Record<string, string> = {},
): HistogramTotal {
  const matches = (key: string): boolean =>
    key.startsWith(`${name}{`) &&
    Object.entries(labels).every(([label, value]) => key.includes(`${label}="${value}"`));
  let sum = 0;
  let count = 0;
  for (const [key, total] of after) {
    if (!matches(key) && key !== name) continue;
    sum += total.sum - (before.get(key)?.sum ?? 0);
    count += total.count - (before.get(key)?.count ?? 0);
  }
  return { sum, count };
}

/**
 * Mean of histogram `name` (ms) over series whose labels contain every `labels` pair, between two
 * snapshots; the count is how many observations that mean is over.
 */
export function histogramMean(
  before: MetricsSnapshot,
  after: MetricsSnapshot,
  name: string,
  labels: Record<string, string> = {},
): { meanMs: number; count: number } {
  const { sum, count } = histogramTotal(before, after, name, labels);
  return { meanMs: count === 0 ? Number.NaN : round(sum / count), count };
}

/** The Temporal server's `task_latency_load` operations the benchmarks report, by what they load. */
export const SERVER_LOAD_OPERATIONS = {
  workflowTask: 'TransferActiveTaskWorkflowTask',
  activityTask: 'TransferActiveTaskActivityTask',
} as const;

/** A task kind's `task_latency_load` and `task_latency_queue` totals (ms), added up over runs. */
interface LoadTotal {
  load: HistogramTotal;
  queue: HistogramTotal;
}

/** The server's transfer-queue latencies per task kind, added up over runs. */
export type ServerLoadTotals = Record<keyof typeof SERVER_LOAD_OPERATIONS, LoadTotal>;

/** The means of one task kind's latencies (ms), and how many tasks they are over. */
export interface ServerLoadMean {
  /** `task_latency_load`: from the task's creation until its queue's reader loaded it. */
  meanMs: number;
  count: number;
  /** `task_latency_queue`: from the task's creation until it was processed (the load included). */
  queueMeanMs: number;
}

/** No load latencies yet. */
export function emptyServerLoad(): ServerLoadTotals {
  const empty = (): LoadTotal => ({ load: { sum: 0, count: 0 }, queue: { sum: 0, count: 0 } });
  return { workflowTask: empty(), activityTask: empty() };
}

/**
 * Adds to `totals` what the server's `task_latency_load` and `task_latency_queue` (seconds in its
 * Prometheus output) grew between two snapshots of the server's metrics.
 */
export function addServerLoad(
  totals: ServerLoadTotals,
  before: MetricsSnapshot,
  after: MetricsSnapshot,
): void {
  for (const [kind, operation] of Object.entries(SERVER_LOAD_OPERATIONS)) {
    const total = totals[kind as keyof ServerLoadTotals];
    for (const [metric, into] of [
      ['task_latency_load', total.load],
      ['task_latency_queue', total.queue],
    ] as const) {
      const grown = histogramTotal(before, after, metric, { operation });
      into.sum += grown.sum * 1000;
      into.count += grown.count;
    }
  }
}

/** The means of each task kind's latencies, ms. */
export function serverLoadMeans(
  totals: ServerLoadTotals,
): Record<keyof typeof SERVER_LOAD_OPERATIONS, ServerLoadMean> {
  const mean = ({ sum, count }: HistogramTotal): number => (count === 0 ? Number.NaN : round(sum / count));
  const means = ({ load, queue }: LoadTotal): ServerLoadMean => ({
    meanMs: mean(load),
    count: load.count,
    queueMeanMs: mean(queue),
  });
  return { workflowTask: means(totals.workflowTask), activityTask: means(totals.activityTask) };
}
