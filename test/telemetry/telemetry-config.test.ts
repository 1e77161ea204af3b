import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
import { DefaultLogger } from '@temporalio/worker';
import { hostedRuntimeOptions, runtimeTelemetryOptions } from '../../src/telemetry/start-telemetry.js';
import { telemetryConfigFromEnvironment } from '../../src/telemetry/telemetry-config.js';

describe('telemetryConfigFromEnvironment', () => {
  it('leaves tracing, content capture and metrics off unless configured', () => {
    expect(telemetryConfigFromEnvironment({})).toEqual({
      tracing: undefined,
      captureContent: false,
      prometheusBindAddress: undefined,
    });
    expect(runtimeTelemetryOptions(telemetryConfigFromEnvironment({}))).toEqual({});
  });

  it('sends traces to the base endpoint with the signal path, or to the traces endpoint as given', () => {
    expect(
      telemetryConfigFromEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing,
    ).toEqual({ tracesUrl: 'http://collector:4318/v1/traces', serviceName: 'keel' });
    expect(
      telemetryConfigFromEnvironment({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp',
        OTEL_SERVICE_NAME: 'agents',
      }).tracing,
    ).toEqual({ tracesUrl: 'https://traces.example/otlp', serviceName: 'agents' });
  });

  it('turns tracing off with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(
      telemetryConfigFromEnvironment({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing,
    ).toBeUndefined();
    expect(
      telemetryConfigFromEnvironment({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).tracing,
    ).toBeUndefined();
  });

  it.each([
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
      /OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      /OTEL_EXPORTER_OTLP_PROTOCOL must be "http\/json".*not "grpc"/,
    ],
    [{ KEEL_OTEL_CAPTURE_CONTENT: 'sometimes' }, /KEEL_OTEL_CAPTURE_CONTENT must be "true" or "false"/],
    [{ KEEL_METRICS_PROMETHEUS: '9464' }, /KEEL_METRICS_PROMETHEUS must be host:port .* not "9464"/],
  ])('refuses %j with a ConfigError naming the setting', (environment, message) => {
    expect(() => telemetryConfigFromEnvironment(environment)).toThrow(ConfigError);
    expect(() => telemetryConfigFromEnvironment(environment)).toThrow(message);
  });

  it('serves Prometheus metrics with the names Prometheus expects (`_total`, seconds)', () => {
    expect(
      runtimeTelemetryOptions(telemetryConfigFromEnvironment({ KEEL_METRICS_PROMETHEUS: '0.0.0.0:9464' })),
    ).toEqual({
      telemetryOptions: {
        metrics: {
          prometheus: {
            bindAddress: '0.0.0.0:9464',
            countersTotalSuffix: true,
            unitSuffix: true,
            useSecondsForDurations: true,
          },
        },
      },
    });
  });

  it("gives a worker hosted behind a terminal UI no shutdown signal and forwards the SDK core's logs to its logger", () => {
    const logger = new DefaultLogger('WARN', () => undefined);
    // The core logs to the console unless forwarded: its warnings would land between the progress lines.
    expect(hostedRuntimeOptions(telemetryConfigFromEnvironment({}), logger)).toEqual({
      shutdownSignals: [],
      logger,
      telemetryOptions: { logging: { forward: {} } },
    });
    const withMetrics = hostedRuntimeOptions(
      telemetryConfigFromEnvironment({ KEEL_METRICS_PROMETHEUS: '0.0.0.0:9464' }),
      logger,
    );
    expect(withMetrics.telemetryOptions).toMatchObject({
      logging: { forward: {} },
      metrics: { prometheus: { bindAddress: '0.0.0.0:9464' } },
    });
  });
});
