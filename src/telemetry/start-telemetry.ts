import { Runtime } from '@temporalio/worker';
import type { RuntimeOptions } from '@temporalio/worker';
import type { TelemetryConfig } from './telemetry-config.js';
import { startTracing } from './tracing.js';
import type { Tracing } from './tracing.js';

/** What a worker process started for telemetry, for `createKeelWorker`, and how to stop it. */
export interface WorkerTelemetry {
  captureContent: boolean;
  tracing?: Tracing;
  /** Flushes the spans still buffered. */
  shutdown(): Promise<void>;
}

/**
 * The `Runtime.install` options that serve the SDK's metrics, and Keel's on its meter, on
 * `KEEL_METRICS_PROMETHEUS`; empty when it is unset. `Runtime.install` runs once per process, so a
 * process that installs its own runtime (`keel run`, `keel chat`) spreads these into its options.
 */
export function runtimeTelemetryOptions(config: TelemetryConfig): Pick<RuntimeOptions, 'telemetryOptions'> {
  if (config.prometheusBindAddress === undefined) return {};
  return {
    telemetryOptions: {
      metrics: {
        // Prometheus's naming rules, which `promtool check metrics` checks: `_total`, base units.
        prometheus: {
          bindAddress: config.prometheusBindAddress,
          countersTotalSuffix: true,
          unitSuffix: true,
          useSecondsForDurations: true,
        },
      },
    },
  };
}

/**
 * Starts what `config` turns on, for a worker process: the runtime with a Prometheus endpoint (once
 * per process: before any connection, when `installRuntime` is true) and OTLP tracing.
 */
export function startTelemetry(
  config: TelemetryConfig,
  options: { installRuntime: boolean },
): WorkerTelemetry {
  if (options.installRuntime && config.prometheusBindAddress !== undefined) {
    Runtime.install(runtimeTelemetryOptions(config));
  }
  const tracing = config.tracing === undefined ? undefined : startTracing(config.tracing);
  return {
    captureContent: config.captureContent,
    ...(tracing ? { tracing } : {}),
    shutdown: async () => await tracing?.shutdown(),
  };
}
