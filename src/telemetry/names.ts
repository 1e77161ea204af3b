import type { Sinks } from '@temporalio/workflow';

/**
 * Attribute and operation names of OpenTelemetry's GenAI semantic conventions that Keel's spans use
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/), in one place.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  conversationId: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  systemInstructions: 'gen_ai.system_instructions',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  errorType: 'error.type',
  invokeAgent: 'invoke_agent',
  chat: 'chat',
  executeTool: 'execute_tool',
} as const;

/**
 * Keel's own metrics, on the Temporal runtime's meter, so the worker's one Prometheus endpoint serves
 * them beside the SDK's. Counters get `_total` and histograms their unit when exported.
 */
export const KEEL_METRICS = {
  tokens: {
    name: 'keel_model_tokens',
    description: 'Tokens used by model turns, by model and type (input, output)',
  },
  costMicroUsd: {
    name: 'keel_model_cost_micro_usd',
    description: 'Cost of model turns in millionths of a US dollar, by model (priced by KEEL_MODEL_PRICES)',
  },
  turnLatency: {
    name: 'keel_model_turn_latency',
    description: 'Duration of model turn attempts, by model and outcome',
  },
  toolCalls: {
    name: 'keel_tool_calls',
    description: 'Tool calls, by tool and outcome (ok or the observation error code)',
  },
  approvalsWaiting: {
    name: 'keel_approvals_waiting',
    description: 'Tool calls waiting for a decision; sum over workers (a decision may reach another worker)',
  },
  approvalsDecided: {
    name: 'keel_approvals_decided',
    description: 'Approval decisions received, by decision',
  },
} as const;

/** The sink Keel's workflow interceptor reports approval decisions through (never called on replay). */
export interface KeelMetricsSinks extends Sinks {
  keelMetrics: { approvalDecided(decision: string): void };
}
