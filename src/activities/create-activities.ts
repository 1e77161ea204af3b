import { ApplicationFailure, Context } from '@temporalio/activity';
import type OpenAI from 'openai';
import type { ModelRequest } from '../contract/model-request.js';
import type { ModelTurn } from '../contract/model-turn.js';
import type { Observation } from '../contract/observation.js';
import type { WorkerProfile } from '../contract/tool-info.js';
import type { ToolRequest } from '../contract/tool-request.js';
import type { Logger } from '../logger.js';
import { callResponses } from '../model/call-responses.js';
import { classifyModelError } from '../model/classify-error.js';
import type { Sanitizer } from '../safety/sanitize.js';
import { executeToolCall } from '../tools/executor.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { Workspace } from '../tools/workspace.js';
import { withHeartbeats } from './heartbeat.js';

/** What the activities need; tests pass their own (a loopback model server, a temporary workspace). */
export interface ActivityDependencies {
  registry: ToolRegistry;
  workspace: Workspace;
  openai: OpenAI;
  /** Model used when a run names none. */
  defaultModel: string;
  sanitizer: Sanitizer;
  /** Worker-side log for full error details; Temporal's activity logger when absent. */
  logger?: Logger;
}

/** Builds Keel's activities around their dependencies. */
export function createActivities(dependencies: ActivityDependencies) {
  const { registry, workspace, openai, sanitizer } = dependencies;
  const logger = (): Logger => dependencies.logger ?? Context.current().log;
  const host = safeHost(openai.baseURL);

  return {
    /** Tells a run which tools this worker has and which model it defaults to. */
    describeWorker(): Promise<WorkerProfile> {
      return Promise.resolve({ tools: registry.describe(), defaultModel: dependencies.defaultModel });
    },

    /** One model turn. Heartbeats while the request is in flight; a cancel aborts the HTTP request. */
    async callModel(request: ModelRequest): Promise<ModelTurn> {
      const context = Context.current();
      const signal = context.cancellationSignal;
      const missing = request.tools.filter((name) => registry.get(name) === undefined);
      if (missing.length > 0) {
        // A worker without the run's tools (a deploy removed them) cannot serve it; retrying here won't help.
        throw ApplicationFailure.create({
          type: 'KeelError.ToolUnavailable',
          message: `This worker does not have the tool(s) ${missing.join(', ')} that the run offers to the model`,
          nonRetryable: true,
        });
      }
      const tools = registry.toResponsesTools(request.tools);
      try {
        return await withHeartbeats(() => callResponses(openai, request, tools, { signal }));
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const failure = classifyModelError(error, {
          model: request.model,
          host,
          clean: (text) => sanitizer.message(text),
        });
        logger().warn(`Model turn ${request.turn} failed: ${failure.type}`, {
          error,
          retryable: failure.retryable,
        });
        throw ApplicationFailure.create({
          message: failure.message,
          type: failure.type,
          nonRetryable: !failure.retryable,
          ...(failure.retryAfterMs !== undefined ? { nextRetryDelay: failure.retryAfterMs } : {}),
        });
      }
    },

    /** One tool call through the executor: always an observation, unless the run is cancelled. */
    async executeTool(request: ToolRequest): Promise<Observation> {
      const context = Context.current();
      const workflowId = context.info.workflowExecution?.workflowId ?? 'standalone';
      return withHeartbeats((heartbeat) =>
        executeToolCall(
          {
            call: request.call,
            allowedTools: request.allowedTools,
            idempotencyKey: `${workflowId}:${request.call.callId}`,
            outputCharLimit: request.outputCharLimit,
            signal: context.cancellationSignal,
            heartbeat,
          },
          { registry, workspace, sanitizer, logger: logger() },
        ),
      );
    },
  };
}

/** The activities' type, for `proxyActivities<KeelActivities>` in the workflow. */
export type KeelActivities = ReturnType<typeof createActivities>;

function safeHost(baseURL: string): string {
  try {
    return new URL(baseURL).host;
  } catch {
    return 'the model server';
  }
}
