import * as otel from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Context as ActivityContext } from '@temporalio/activity';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptors, InjectedSink } from '@temporalio/worker';
import type { TelemetryConfig } from './telemetry-config.js';

/**
 * A worker's tracer provider, what exports its spans, and how to flush them at the end. This module
 * holds all of OpenTelemetry's SDK and Temporal's interceptors for it, and is imported only when
 * tracing is on: a worker without it starts without loading them (about 0.15 s of CPU).
 */
export interface Tracing {
  /** Temporal's activity interceptors, which continue the workflow's trace from the task's headers. */
  readonly activityInterceptors: (context: ActivityContext) => ActivityInterceptors;
  /** The sink that exports the workflow's spans. */
  workflowExporter(): InjectedSink<OpenTelemetryWorkflowExporter>;
  /** Sends what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Starts tracing as `config` says: spans batched and sent over OTLP/HTTP (JSON) to the collector, and
 * the provider registered as this process's global one, which Temporal's interceptors and Keel's
 * spans use. A collector that cannot be reached costs spans, never a run: it is said once on `warn`,
 * naming the setting, and again when export works once more.
 */
export function startTracing(
  config: NonNullable<TelemetryConfig['tracing']>,
  warn: (line: string) => void = (line) => void process.stderr.write(line + '\n'),
): Tracing {
  const resource = new Resource({ 'service.name': config.serviceName });
  const exporter = new WarningExporter(
    new OTLPTraceExporter({ url: config.tracesUrl }),
    config.tracesUrl,
    warn,
  );
  const spanProcessor = new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 });
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });
  return {
    activityInterceptors: (context) => ({
      inbound: new OpenTelemetryActivityInboundInterceptor(context),
      outbound: new OpenTelemetryActivityOutboundInterceptor(context),
    }),
    workflowExporter: () => makeWorkflowExporter(spanProcessor, resource),
    async shutdown() {
      // A failed last export was said by the exporter; it must not fail the worker's clean stop.
      await provider.shutdown().catch(() => undefined);
      otel.trace.disable();
      otel.context.disable();
    },
  };
}

/** Passes spans on, and says (once per outage) when the collector refuses or cannot be reached. */
class WarningExporter implements SpanExporter {
  #failing = false;
  constructor(
    private readonly inner: SpanExporter,
    private readonly url: string,
    private readonly warn: (line: string) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS && !this.#failing) {
        this.#failing = true;
        this.warn(
          `Keel could not export ${spans.length} span(s) to ${this.url} (OTEL_EXPORTER_OTLP_ENDPOINT or ` +
            `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): ${result.error?.message ?? 'refused'}. Runs go on; spans are dropped until it answers.`,
        );
      } else if (result.code === ExportResultCode.SUCCESS && this.#failing) {
        this.#failing = false;
        this.warn(`Keel exports spans to ${this.url} again.`);
      }
      done(result);
    });
  }

  async shutdown(): Promise<void> {
    await this.inner.shutdown();
  }

  async forceFlush(): Promise<void> {
    await this.inner.forceFlush?.();
  }
}
