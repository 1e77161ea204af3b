// Workflow sandbox code (bundled through workflowInterceptorModules): deterministic, no I/O.
import * as otel from '@opentelemetry/api';
import { proxySinks, workflowInfo } from '@temporalio/workflow';
import type {
  Next,
  SignalInput,
  UpdateInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
} from '@temporalio/workflow';
import { GEN_AI } from './names.js';
import type { KeelMetricsSinks } from './names.js';

/** The updates and signals that decide a waiting approval. */
const DECISIONS = new Set(['approve', 'reject']);

/** Input fields of `agentRun` the run span names (no prompt text: the task is left out). */
interface RunInputShape {
  agent?: unknown;
  model?: unknown;
}

/**
 * Wraps an `agentRun` execution in an `invoke_agent` span (GenAI semantic conventions), inside the
 * `RunWorkflow:agentRun` span of Temporal's interceptor, so turns and tool calls are its children;
 * reports approval decisions to the worker's meter through a sink (sinks are not called on replay).
 */
class RunSpanInterceptor implements WorkflowInboundCallsInterceptor {
  async execute(
    input: WorkflowExecuteInput,
    next: Next<WorkflowInboundCallsInterceptor, 'execute'>,
  ): Promise<unknown> {
    const info = workflowInfo();
    if (info.workflowType !== 'agentRun') return await next(input);
    const runInput = (input.args[0] ?? {}) as RunInputShape;
    const agent = typeof runInput.agent === 'string' ? runInput.agent : undefined;
    const tracer = otel.trace.getTracer('keel');
    return await tracer.startActiveSpan(
      `${GEN_AI.invokeAgent}${agent === undefined ? '' : ` ${agent}`}`,
      {
        kind: otel.SpanKind.INTERNAL,
        attributes: {
          [GEN_AI.operationName]: GEN_AI.invokeAgent,
          [GEN_AI.providerName]: 'openai',
          [GEN_AI.conversationId]: info.workflowId,
          ...(agent === undefined ? {} : { [GEN_AI.agentName]: agent }),
          ...(typeof runInput.model === 'string' ? { [GEN_AI.requestModel]: runInput.model } : {}),
          'keel.run.id': info.workflowId,
        },
      },
      async (span) => {
        try {
          const result = (await next(input)) as
            { status?: unknown; usage?: Record<string, unknown> } | undefined;
          const status = typeof result?.status === 'string' ? result.status : undefined;
          if (status !== undefined) span.setAttribute('keel.run.status', status);
          if (status !== undefined && status !== 'completed') span.setAttribute(GEN_AI.errorType, status);
          const usage = result?.usage;
          if (typeof usage?.inputTokens === 'number')
            span.setAttribute(GEN_AI.inputTokens, usage.inputTokens);
          if (typeof usage?.outputTokens === 'number')
            span.setAttribute(GEN_AI.outputTokens, usage.outputTokens);
          return result;
        } catch (error) {
          // Continue-as-new is how a long run goes on, not a failure.
          if (!(error instanceof Error && error.name === 'ContinueAsNew')) {
            span.setStatus({ code: otel.SpanStatusCode.ERROR });
            span.setAttribute(GEN_AI.errorType, error instanceof Error ? error.name : 'Error');
          }
          throw error;
        } finally {
          span.end();
        }
      },
    );
  }

  async handleUpdate(
    input: UpdateInput,
    next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>,
  ): Promise<unknown> {
    const result = await next(input);
    if (DECISIONS.has(input.name)) decided(input.name);
    return result;
  }

  async handleSignal(
    input: SignalInput,
    next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>,
  ): Promise<void> {
    await next(input);
    if (DECISIONS.has(input.signalName)) decided(input.signalName);
  }
}

function decided(decision: string): void {
  if (workflowInfo().workflowType !== 'agentRun') return;
  proxySinks<KeelMetricsSinks>().keelMetrics.approvalDecided(decision);
}

/** Keel's workflow interceptors: the `invoke_agent` run span. */
export const interceptors = (): WorkflowInterceptors => ({ inbound: [new RunSpanInterceptor()] });
