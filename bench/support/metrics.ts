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

/** Reads the runtime's metrics; an empty snapshot when metrics are not installed. */
export async function scrapeMetrics(): Promise<MetricsSnapshot> {
  const snapshot: MetricsSnapshot = new Map();
  if (metricsUrl === undefined) return snapshot;
  const text = await (await fetch(metricsUrl)).text();
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
 * Mean of histogram `name` (ms) over series whose labels contain every `labels` pair, between two
 * snapshots; the count is how many observations that mean is over.
 */
export function histogramMean(
  before: MetricsSnapshot,
  after: MetricsSnapshot,
  name: string,
  labels: Record<string, string> = {},
): { meanMs: number; count: number } {
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
  return { meanMs: count === 0 ? Number.NaN : round(sum / count), count };
}
