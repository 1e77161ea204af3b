import * as otel from '@opentelemetry/api';
import type { Context as ActivityContext } from '@temporalio/activity';
import { noopMetricMeter } from '@temporalio/common';
import type { MetricMeter, MetricUpDownCounter } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { ACTIVITY_NAMES, LEGACY_ACTIVITY_NAMES } from '../contract/activity-names.js';
import type { ModelRequest } from '../contract/model-request.js';
import type { ModelTurn } from '../contract/model-turn.js';
import type { Observation } from '../contract/observation.js';
import type { ApprovalRequired, ToolRequest } from '../contract/tool-request.js';
import { usageCost } from '../contract/usage-sums.js';
import type { ModelPrice } from '../contract/usage.js';
import { GEN_AI, KEEL_METRICS } from './names.js';

/** What Keel's spans and metrics need from the worker's configuration. */
export interface KeelTelemetryOptions {
  /** Put prompts, instructions, model output and tool arguments and results on spans (`KEEL_OTEL_CAPTURE_CONTENT`). */
  captureContent: boolean;
  /** Prices by model, for `keel_model_cost_micro_usd_total` (`KEEL_MODEL_PRICES`). */
  prices?: Record<string, ModelPrice>;
}

const MODEL_ACTIVITIES = new Set<string>([ACTIVITY_NAMES.callModel, LEGACY_ACTIVITY_NAMES.callModel]);
const TOOL_ACTIVITIES = new Set<string>([ACTIVITY_NAMES.executeTool, LEGACY_ACTIVITY_NAMES.executeTool]);

/**
 * Keel's spans and metrics around its model turn and tool call activities: a `chat {model}` or
 * `execute_tool {tool}` span (GenAI semantic conventions) inside Temporal's `RunActivity` span, and the
 * tokens, cost, latency and tool outcome counted on the activity's metric meter. Content (prompts,
 * output, arguments, results) stays out of spans unless `captureContent` is on.
 */
export class KeelActivityTelemetry implements ActivityInboundCallsInterceptor {
  readonly #context: ActivityContext;
  readonly #options: KeelTelemetryOptions;
  readonly #tracer: otel.Tracer;

  constructor(context: ActivityContext, options: KeelTelemetryOptions) {
    this.#context = context;
    this.#options = options;
    this.#tracer = otel.trace.getTracer('keel');
  }

  async execute(
    input: ActivityExecuteInput,
    next: Next<ActivityInboundCallsInterceptor, 'execute'>,
  ): Promise<unknown> {
    const type = this.#context.info.activityType;
    if (MODEL_ACTIVITIES.has(type))
      return await this.#modelTurn(input.args[0] as ModelRequest, () => next(input));
    if (TOOL_ACTIVITIES.has(type))
      return await this.#toolCall(input.args[0] as ToolRequest, () => next(input));
    return await next(input);
  }

  async #modelTurn(request: ModelRequest, run: () => Promise<unknown>): Promise<unknown> {
    const meter = keelMeter(this.#context);
    const started = performance.now();
    return await this.#tracer.startActiveSpan(
      `${GEN_AI.chat} ${request.model}`,
      {
        kind: otel.SpanKind.CLIENT,
        attributes: {
          [GEN_AI.operationName]: GEN_AI.chat,
          [GEN_AI.providerName]: 'openai',
          [GEN_AI.requestModel]: request.model,
          ...(this.#options.captureContent
            ? {
                [GEN_AI.systemInstructions]: request.instructions,
                [GEN_AI.inputMessages]: JSON.stringify(request.input),
              }
            : {}),
        },
      },
      async (span) => {
        let outcome = 'ok';
        try {
          const turn = (await run()) as ModelTurn;
          span.setAttributes({
            [GEN_AI.responseModel]: turn.model,
            [GEN_AI.responseId]: turn.responseId,
            [GEN_AI.finishReasons]: [finishReason(turn)],
            [GEN_AI.inputTokens]: turn.usage.inputTokens,
            [GEN_AI.outputTokens]: turn.usage.outputTokens,
            ...(this.#options.captureContent
              ? { [GEN_AI.outputMessages]: JSON.stringify({ text: turn.text, toolCalls: turn.toolCalls }) }
              : {}),
          });
          const tokens = meter.createCounter(KEEL_METRICS.tokens.name, '', KEEL_METRICS.tokens.description);
          tokens.add(turn.usage.inputTokens, { model: turn.model, type: 'input' });
          tokens.add(turn.usage.outputTokens, { model: turn.model, type: 'output' });
          const price = this.#options.prices?.[turn.model];
          if (price !== undefined) {
            meter
              .createCounter(KEEL_METRICS.costMicroUsd.name, '', KEEL_METRICS.costMicroUsd.description)
              .add(Math.round(usageCost(turn.usage, price) * 1_000_000), { model: turn.model });
          }
          return turn;
        } catch (error) {
          outcome = failureType(error);
          span.setStatus({ code: otel.SpanStatusCode.ERROR });
          span.setAttribute(GEN_AI.errorType, outcome);
          throw error;
        } finally {
          meter
            .createHistogram(
              KEEL_METRICS.turnLatency.name,
              'float',
              'seconds',
              KEEL_METRICS.turnLatency.description,
            )
            .record((performance.now() - started) / 1000, { model: request.model, outcome });
          span.end();
        }
      },
    );
  }

  async #toolCall(request: ToolRequest, run: () => Promise<unknown>): Promise<unknown> {
    const meter = keelMeter(this.#context);
    const { call } = request;
    return await this.#tracer.startActiveSpan(
      `${GEN_AI.executeTool} ${call.name}`,
      {
        kind: otel.SpanKind.INTERNAL,
        attributes: {
          [GEN_AI.operationName]: GEN_AI.executeTool,
          [GEN_AI.toolName]: call.name,
          [GEN_AI.toolCallId]: call.callId,
          [GEN_AI.toolType]: 'function',
          ...(this.#options.captureContent ? { [GEN_AI.toolArguments]: call.argumentsJson } : {}),
        },
      },
      async (span) => {
        try {
          const result = (await run()) as Observation | ApprovalRequired;
          const outcome =
            'approvalRequired' in result ? 'approval_required' : result.ok ? 'ok' : result.error;
          span.setAttribute('keel.tool.outcome', outcome);
          if (outcome !== 'ok' && outcome !== 'approval_required')
            span.setAttribute(GEN_AI.errorType, outcome);
          if (this.#options.captureContent && 'ok' in result) {
            span.setAttribute(GEN_AI.toolResult, result.ok ? result.output : result.message);
          }
          if (outcome === 'approval_required') {
            approvalsWaiting(this.#context.info.taskQueue).add(1);
          } else {
            meter
              .createCounter(KEEL_METRICS.toolCalls.name, '', KEEL_METRICS.toolCalls.description)
              .add(1, { tool: call.name, outcome });
          }
          return result;
        } catch (error) {
          span.setStatus({ code: otel.SpanStatusCode.ERROR });
          span.setAttribute(GEN_AI.errorType, failureType(error));
          throw error;
        } finally {
          span.end();
        }
      },
    );
  }
}

/**
 * The runtime's meter with the task queue as a tag: the activity's own meter would add camelCase
 * tags (`activityType`, `taskQueue`), which Prometheus's naming rules (and `promtool`) refuse.
 */
export function keelMeter(context: Pick<ActivityContext, 'info'>): MetricMeter {
  return Runtime.instance().metricMeter.withTags({ task_queue: context.info.taskQueue });
}

/** The `keel_approvals_waiting` gauge of this worker's task queue: up on a request, down on a decision. */
export function approvalsWaiting(taskQueue: string): MetricUpDownCounter {
  const { name, description } = KEEL_METRICS.approvalsWaiting;
  // The runtime's meter has up-down counters; the interface leaves them optional for other meters.
  const meter = Runtime.instance().metricMeter;
  const counter =
    meter.createUpDownCounter?.(name, '', description) ?? noopMetricMeter.createUpDownCounter(name);
  return counter.withTags({ task_queue: taskQueue });
}

/** The Responses API's reason a turn ended, in the conventions' words. */
function finishReason(turn: ModelTurn): string {
  if (turn.status === 'incomplete') return turn.incompleteReason ?? 'incomplete';
  return turn.toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

/** A failure's dotted type (`ModelError.RateLimit`), never its message (which may quote the model). */
function failureType(error: unknown): string {
  const type = (error as { type?: unknown } | undefined)?.type;
  if (typeof type === 'string') return type;
  return error instanceof Error ? error.name : 'Error';
}
