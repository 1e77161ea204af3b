// Workflow sandbox code (bundled through workflowInterceptorModules): deterministic, no I/O.
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import type {
  Next,
  QueryInput,
  SignalInput,
  UpdateInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
} from '@temporalio/workflow';
import { STREAM_NAMES } from '../contract/stream-names.js';

/** The stream's signal, query and update: transport, many per turn, and sent without a trace context. */
const STREAM_HANDLERS = new Set<string>(Object.values(STREAM_NAMES));

/**
 * Temporal's workflow tracing, less the stream's handlers: a publish batch (every 50 ms of a turn)
 * or a caller's long poll would each be a span with no parent, so a trace of its own beside the run's.
 * No await of its own: an extra microtask before a handler completes reorders commands on replay.
 */
class UntracedStreamInbound extends OpenTelemetryInboundInterceptor {
  override handleSignal(
    input: SignalInput,
    next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>,
  ): Promise<void> {
    if (STREAM_HANDLERS.has(input.signalName)) return next(input);
    return super.handleSignal(input, next);
  }

  override handleUpdate(
    input: UpdateInput,
    next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>,
  ): Promise<unknown> {
    if (STREAM_HANDLERS.has(input.name)) return next(input);
    return super.handleUpdate(input, next);
  }

  override validateUpdate(
    input: UpdateInput,
    next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>,
  ): void {
    if (STREAM_HANDLERS.has(input.name)) return next(input);
    super.validateUpdate(input, next);
  }

  override handleQuery(
    input: QueryInput,
    next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>,
  ): Promise<unknown> {
    if (STREAM_HANDLERS.has(input.queryName)) return next(input);
    return super.handleQuery(input, next);
  }
}

/** Temporal's workflow tracing interceptors, with the stream's handlers left untraced. */
export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new UntracedStreamInbound()],
  outbound: [new OpenTelemetryOutboundInterceptor()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
