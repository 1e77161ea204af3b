import { Runtime } from '@temporalio/worker';
import type { Logger, RuntimeOptions } from '@temporalio/worker';
import type { TelemetryConfig } from './telemetry-config.js';
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
 * The `Runtime.install` options of a process that hosts a worker behind its own terminal UI
 * (`keel run`, `keel chat`): it answers Ctrl-C itself, so the worker must not shut down on it; the
 * worker's logs go to `logger` (a file), the SDK core's own warnings included, which would
 * otherwise be printed on the terminal between the progress lines (say, "Activity not found on
 * completion" when a cancelled run's model call ends after the run); and the metrics endpoint is
 * served as {@link runtimeTelemetryOptions} says.
 */
export function hostedRuntimeOptions(config: TelemetryConfig, logger: Logger): RuntimeOptions {
  const { telemetryOptions } = runtimeTelemetryOptions(config);
  return {
    shutdownSignals: [],
    logger,
    // The core's default filter (warnings and up), forwarded to `logger` instead of the console.
    telemetryOptions: { ...telemetryOptions, logging: { forward: {} } },
  };
}

/**
 * Starts what `config` turns on, for a worker process: the runtime with a Prometheus endpoint (once
 * per process: before any connection, when `installRuntime` is true) and OTLP tracing, whose
 * modules are loaded only then.
 */
export async function startTelemetry(
  config: TelemetryConfig,
  options: { installRuntime: boolean },
): Promise<WorkerTelemetry> {
  if (options.installRuntime && config.prometheusBindAddress !== undefined) {
    Runtime.install(runtimeTelemetryOptions(config));
  }
  const tracing =
    config.tracing === undefined ? undefined : (await import('./tracing.js')).startTracing(config.tracing);
  return {
    captureContent: config.captureContent,
    ...(tracing ? { tracing } : {}),
    shutdown: async () => await tracing?.shutdown(),
  };
}
