import { ConfigError } from '../config-error.js';
import { flagOr, optionalChoice, optionalText, optionalUrl, readEnvironment, textOr } from '../env.js';

/** Tracing and metrics settings of a worker; everything is off unless configured. */
export interface TelemetryConfig {
  /** Where spans go over OTLP/HTTP; undefined: tracing is off. */
  tracing: { tracesUrl: string; serviceName: string } | undefined;
  /** `KEEL_OTEL_CAPTURE_CONTENT`: prompts, model output, tool arguments and results on spans (default off). */
  captureContent: boolean;
  /** `KEEL_METRICS_PROMETHEUS`: `host:port` where the worker serves Prometheus metrics; undefined: none. */
  prometheusBindAddress: string | undefined;
}

/**
 * The variables telemetry reads: OpenTelemetry's standard ones (the OTLP exporter reads its own
 * `OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT` and so on too) and Keel's.
 */
export const telemetryVariables = {
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrl,
  OTEL_EXPORTER_OTLP_PROTOCOL: optionalText,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: optionalText,
  OTEL_TRACES_EXPORTER: optionalChoice(['otlp', 'none']),
  OTEL_SDK_DISABLED: flagOr(false),
  OTEL_SERVICE_NAME: textOr('keel'),
  KEEL_OTEL_CAPTURE_CONTENT: flagOr(false),
  KEEL_METRICS_PROMETHEUS: optionalText,
};

/** The Keel variables among {@link telemetryVariables} (the OTEL_* ones are OpenTelemetry's, documented there). */
export const keelTelemetryVariables = {
  KEEL_OTEL_CAPTURE_CONTENT: telemetryVariables.KEEL_OTEL_CAPTURE_CONTENT,
  KEEL_METRICS_PROMETHEUS: telemetryVariables.KEEL_METRICS_PROMETHEUS,
};

/** Reads {@link TelemetryConfig}; a malformed setting is a `ConfigError` naming it. */
export function telemetryConfigFromEnvironment(
  environment: NodeJS.ProcessEnv = process.env,
): TelemetryConfig {
  const values = readEnvironment(telemetryVariables, environment);
  const protocol = values.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? values.OTEL_EXPORTER_OTLP_PROTOCOL;
  const protocolName = values.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const off = values.OTEL_SDK_DISABLED || values.OTEL_TRACES_EXPORTER === 'none';
  // The signal-specific endpoint is used as it is; the base one gets the signal's path (the spec's rule).
  const tracesUrl =
    values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (values.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
      ? undefined
      : `${values.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`);
  if (!off && tracesUrl !== undefined && protocol !== undefined && protocol !== 'http/json') {
    throw new ConfigError(
      `${protocolName} must be "http/json" (Keel exports traces as OTLP/HTTP with JSON), not ${JSON.stringify(protocol)}`,
    );
  }
  const bind = values.KEEL_METRICS_PROMETHEUS;
  if (bind !== undefined && !/^[^\s:]+:\d{1,5}$/.test(bind) && !/^\[[0-9a-fA-F:]+\]:\d{1,5}$/.test(bind)) {
    throw new ConfigError(
      `KEEL_METRICS_PROMETHEUS must be host:port where the worker serves Prometheus metrics (e.g. 0.0.0.0:9464), not ${JSON.stringify(bind)}`,
    );
  }
  return {
    tracing:
      off || tracesUrl === undefined ? undefined : { tracesUrl, serviceName: values.OTEL_SERVICE_NAME },
    captureContent: values.KEEL_OTEL_CAPTURE_CONTENT,
    prometheusBindAddress: bind,
  };
}
