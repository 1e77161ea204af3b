import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ActivityCancellationDetails } from '@temporalio/common';
import type OpenAI from 'openai';
import type { ModelRequest } from '../contract/model-request.js';
import type { ModelTurn } from '../contract/model-turn.js';
import { ACTIVITY_NAMES, LEGACY_ACTIVITY_NAMES } from '../contract/activity-names.js';
import type { FailureType } from '../contract/failure-type.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, PAYLOAD_BYTES_LIMIT } from '../contract/defaults.js';
import { fitObservations, jsonBytes } from '../contract/payload.js';
import type { RunBudgets, RunLimits } from '../contract/run-input.js';
import type { ApprovalRequired } from '../contract/tool-request.js';
import type { ModelPrice } from '../contract/usage.js';
import type { Agent } from '../agents/agent.js';
import { toolOwners, visibleTools } from '../agents/agent-tools.js';
import { describeAgents } from '../agents/describe-agents.js';
import { estimateTokens } from '../model/rate-limit.js';
import type { ModelPacer } from '../model/model-pacer.js';
import type { Observation } from '../contract/observation.js';
import type { WorkerProfile } from '../contract/tool-info.js';
import type { ToolRequest } from '../contract/tool-request.js';
import type { Logger } from '../logger.js';
import type { PollSchedule } from '../model/background.js';
import { callResponses, warnOnce } from '../model/call-responses.js';
import { classifyModelError } from '../model/classify-error.js';
import { subAgentTool, toResponsesTools } from '../model/responses-tools.js';
import { streamCutAt } from '../model/stream-events.js';
import type { ModelMode } from '../model/config.js';
import { redactingLogger } from '../safety/redacting-logger.js';
import type { Sanitizer } from '../safety/sanitize.js';
import { executeUnlessApprovalNeeded } from '../tools/executor.js';
import type { IdempotencyStore } from '../tools/idempotency.js';
import type { ToolRegistry } from '../tools/registry.js';
import { withHeartbeats } from './heartbeat.js';
import type { Beat } from './heartbeat.js';
import { sayAttempt } from './say-attempt.js';
import { runIsGone } from './run-is-gone.js';
import { liveTurnPublisher, turnPublisher } from './turn-publisher.js';
import type { LiveHub } from '../stream/live-hub.js';
import type { LiveStream } from '../contract/stream-event.js';
import { runWorkspaceActivities } from './run-workspace-activities.js';
import { outputValidator, withOutputIssues } from '../model/output-check.js';
import { runGuardrails } from '../agents/guardrails.js';
import type { GuardrailRequest, GuardrailVerdict } from '../contract/guardrail.js';

/** What the activities need; tests pass their own (a loopback model server, their own tools). */
export interface ActivityDependencies {
  registry: ToolRegistry;
  /**
   * The registry a run's calls are served from, when each run has its own workspace: its tools bound
   * to that workspace. `registry` (the same tools, described) when absent.
   */
  registryFor?: (workflowId: string) => Promise<ToolRegistry>;
  /**
   * Set when each run's workspace lies on this worker alone: `openWorkspace` makes it and names the
   * worker's own task queue (`ownQueue`, known once that worker polls), where the run sends its calls.
   */
  workspaceAffinity?: { failoverSeconds: number; ownQueue: () => string | undefined };
  openai: OpenAI;
  /** Model used when a run names none. */
  defaultModel: string;
  /** Limits for runs that set none (the operator's `KEEL_MAX_TURNS` and so on). */
  limits?: Partial<RunLimits>;
  /** Whether the namespace has Keel's search attributes, so runs may set them. */
  searchAttributes?: boolean;
  /** How model turns are requested; `background` makes retried turns re-attach instead of paying twice. */
  modelMode: ModelMode;
  /** Background polling; the default suits real models, tests poll faster. */
  pollSchedule?: PollSchedule;
  sanitizer: Sanitizer;
  /** Where tools' `context.once` remembers side effects. */
  idempotencyStore: IdempotencyStore;
  /** Worker-side log for full error details; Temporal's activity logger when absent. */
  logger?: Logger;
  /** Budgets for runs that set none (`KEEL_MAX_TOTAL_TOKENS` and so on). */
  budgets?: Partial<RunBudgets>;
  /** Model prices for cost budgets (`KEEL_MODEL_PRICES`). */
  prices?: Record<string, ModelPrice>;
  /** How runs that name none keep their conversation (`KEEL_CONVERSATION`). */
  conversation?: 'chained' | 'stateless';
  /**
   * Most output tokens a turn may spend when its run sets none (`KEEL_MAX_OUTPUT_TOKENS`); `null`
   * sends no cap. {@link DEFAULT_MAX_OUTPUT_TOKENS} when absent.
   */
  maxOutputTokens?: number | null;
  /** Paces this worker's model calls (`KEEL_MODEL_CONCURRENCY`, `KEEL_MODEL_TOKENS_PER_MINUTE`). */
  modelLimiter?: ModelPacer;
  /** Named agents runs may ask for (`{ agent: "triage" }`); checked against the registry here. */
  agents?: readonly Agent[];
  /**
   * Where model turns stream live to subscribers (`KEEL_STREAM`, on by default); absent, this worker
   * streams nothing and asks the model for whole answers.
   */
  live?: LiveHub;
}

/** What a run asks `describeWorker` about: the agent it was started with, if any. */
export interface DescribeWorkerRequest {
  agent?: string;
}

/**
 * Builds Keel's activities around their dependencies, keyed by their `keel.` names and by the
 * unprefixed names of runs recorded before those (see `ACTIVITY_NAMES`).
 */
export function createActivities(dependencies: ActivityDependencies) {
  const { registry, openai, sanitizer } = dependencies;
  const outputCap =
    dependencies.maxOutputTokens === undefined ? DEFAULT_MAX_OUTPUT_TOKENS : dependencies.maxOutputTokens;
  // The worker log gets full errors, but not the secrets inside them.
  const logger = (): Logger => redactingLogger(dependencies.logger ?? Context.current().log, sanitizer);
  const host = safeHost(openai.baseURL);
  // A server that answers a streamed request with whole answers is said once per worker, not per turn.
  const streamFallback = warnOnce((detail) => logger().warn(`${detail} (model server ${host})`));
  // Every real request has input tokens: none at all means the server does not report usage.
  const noUsage = warnOnce<void>(() =>
    logger().warn(
      `The model server ${host} reports no token usage: runs' token counts stay 0 there, so token and ` +
        'cost budgets (maxTotalTokens, maxCostUsd, KEEL_MAX_TOTAL_TOKENS, KEEL_MAX_COST_USD) cannot stop a run',
    ),
  );
  const liveFailure = warnOnce<unknown>((error) =>
    logger().warn('Model turns are not streamed live: this worker cannot serve them', { error }),
  );
  const agents = describeAgents(dependencies.agents ?? [], registry);
  const definitions = new Map((dependencies.agents ?? []).map((agent) => [agent.name, agent]));
  const ownerOf = toolOwners(dependencies.agents ?? []);
  const { runRegistry, openWorkspace } = runWorkspaceActivities(dependencies, logger);

  const activities = {
    /**
     * Tells a run which tools this worker has and which model it defaults to, and, when it asks for
     * an agent the worker has, that agent's definition and version.
     */
    describeWorker: async (request?: DescribeWorkerRequest): Promise<WorkerProfile> => {
      // MCP servers are listed again for each run, and what they offer now is recorded in its history.
      await registry.refresh();
      // An agent's version covers its tools as listed now; a tool gone since start keeps the start's.
      let current = agents;
      try {
        current = describeAgents(dependencies.agents ?? [], registry);
      } catch (error) {
        logger().warn(`Agents are described as at start: ${(error as Error).message}`);
      }
      // The name comes from the run input: only the worker's own agents are found (no prototype keys).
      const agent = request?.agent === undefined ? undefined : current.get(request.agent);
      // A run sees the worker's tools and, when it is one agent's, that agent's own MCP servers' tools.
      const visible = new Set(
        visibleTools(registry.names(), ownerOf, agent === undefined ? undefined : request?.agent),
      );
      const profile: WorkerProfile = {
        tools: registry.describe().filter((tool) => visible.has(tool.name)),
        defaultModel: dependencies.defaultModel,
        limits: dependencies.limits ?? {},
        searchAttributes: dependencies.searchAttributes ?? false,
        ...(dependencies.budgets !== undefined ? { budgets: dependencies.budgets } : {}),
        ...(dependencies.prices !== undefined ? { prices: dependencies.prices } : {}),
        ...(dependencies.conversation !== undefined ? { conversation: dependencies.conversation } : {}),
        ...(agents.size > 0 ? { agents: [...agents.keys()] } : {}),
        ...(agent !== undefined ? { agent } : {}),
        ...(dependencies.workspaceAffinity !== undefined
          ? { workspaceAffinity: { failoverSeconds: dependencies.workspaceAffinity.failoverSeconds } }
          : {}),
      };
      // An MCP server writes its own descriptions and schemas: a list too big for one payload must
      // fail the run's start clearly, not wedge it on a refused activity result.
      const bytes = jsonBytes(profile);
      if (bytes > PAYLOAD_BYTES_LIMIT) {
        const largest = profile.tools
          .map((tool) => ({ name: tool.name, bytes: jsonBytes(tool) }))
          .sort((a, b) => b.bytes - a.bytes)
          .slice(0, 3)
          .map((tool) => `${tool.name} (${tool.bytes} bytes)`);
        throw ApplicationFailure.create({
          type: 'KeelError.PayloadTooLarge' satisfies FailureType,
          message:
            `This worker's tools take ${bytes} bytes to describe, more than the ${PAYLOAD_BYTES_LIMIT} bytes of one ` +
            `Temporal payload; the largest are ${largest.join(', ')}. Offer fewer (an MCP server's allowTools, KEEL_TOOLS).`,
          nonRetryable: true,
        });
      }
      return profile;
    },

    /** One model turn. Heartbeats while the request is in flight; a cancel aborts the HTTP request. */
    callModel: async (asked: ModelRequest): Promise<ModelTurn> => {
      // The worker's cap on output, for a run that set none (and so on a runaway answer).
      const request =
        asked.maxOutputTokens !== undefined || outputCap === null
          ? asked
          : { ...asked, maxOutputTokens: outputCap };
      const context = Context.current();
      const startedAtMs = Date.now();
      const signal = context.cancellationSignal;
      const unknown = () => request.tools.filter((name) => registry.get(name) === undefined);
      // A tool another worker listed (a newer MCP listing) may be found by listing again here.
      if (unknown().length > 0) await registry.refresh();
      const missing = unknown();
      if (missing.length > 0) {
        // A worker without the run's tools (a deploy removed them) cannot serve it; retrying here won't help.
        throw ApplicationFailure.create({
          type: 'KeelError.ToolUnavailable' satisfies FailureType,
          message: `This worker does not have the tool(s) ${missing.join(', ')} that the run offers to the model`,
          nonRetryable: true,
        });
      }
      const tools = [
        ...toResponsesTools(request.tools.flatMap((name) => registry.get(name) ?? [])),
        ...(request.agentTools ?? []).map(subAgentTool),
      ];
      // A schema no answer could be checked against fails the run before the model is paid.
      if (request.output !== undefined) outputValidator(request.output.schema);
      const resumeResponseId = (context.info.heartbeatDetails as ModelHeartbeat | undefined)?.responseId;
      // Background mode needs stored responses: a stateless turn is always a foreground request.
      const background = dependencies.modelMode === 'background' && request.input.kind !== 'items';
      let responseId: string | undefined;
      // A run from before live streaming publishes through signals; a live one through this worker's hub.
      const publisher =
        request.stream === true ? turnPublisher(context, request.turn, sanitizer, logger) : undefined;
      // Streaming is best effort: a hub that cannot listen costs the turn its live text, never the turn.
      const liveTurn =
        request.live === true && dependencies.live !== undefined
          ? await dependencies.live.open(request.turn).catch((error: unknown) => {
              liveFailure(error);
              return undefined;
            })
          : undefined;
      const live = liveTurn === undefined ? undefined : liveTurnPublisher(liveTurn, sanitizer);
      // Kept in every beat: a later attempt re-attaches to the response even after this one died too.
      const details: ModelHeartbeat = {
        ...(resumeResponseId !== undefined && { responseId: resumeResponseId }),
        ...(live !== undefined && { live: live.stream }),
      };
      // A turn that re-attaches to its response spends nothing new, so only a new request waits its turn.
      const permit =
        dependencies.modelLimiter !== undefined && resumeResponseId === undefined
          ? await dependencies.modelLimiter
              .acquire(estimateTokens(JSON.stringify(request)), {
                signal,
                onWait: () => context.heartbeat(details),
              })
              .catch((error: unknown) => {
                live?.end('failed');
                throw error;
              })
          : undefined;
      let spent: number | undefined;
      let outcome: 'completed' | 'failed' = 'failed';
      let told: Promise<void> | undefined;
      try {
        // A retry says so to its run while the model works (a run from before it listened is not told).
        if (request.sayRetries === true)
          // (It logs its own failure and never rejects; the handler is a belt for the braces.)
          told = sayAttempt(context, request.turn, (text) => sanitizer.message(text), logger).catch(
            () => undefined,
          );
        // Heartbeats from the start, the background create included: a server slow to accept must not
        // look like a dead worker, or every attempt would time out and pay for another generation.
        const turn = await withHeartbeats((beat) => {
          // Subscribers find a live turn in its heartbeat. The first beat goes out at once and the next
          // ones are throttled, so a new background response waits to beat with its id, which must
          // not be held back (a retry re-attaches to it).
          if (live !== undefined && (!background || resumeResponseId !== undefined)) beat(details);
          const sink = publisher ?? live;
          const called = callResponses(openai, request, tools, {
            signal,
            // The SDK's own 10-minute default would cut a longer turn the run allows short.
            timeoutMs: context.info.startToCloseTimeoutMs,
            // A model still writing when the attempt's time is nearly up keeps what it wrote.
            cutAtMs: streamCutAt(startedAtMs, context.info.startToCloseTimeoutMs ?? 0),
            ...(sink !== undefined && { sink, onStreamFallback: streamFallback }),
            ...(background && {
              background: {
                ...(resumeResponseId !== undefined && { resumeResponseId }),
                ...(dependencies.pollSchedule && { schedule: dependencies.pollSchedule }),
                onResponseId: (id: string) => {
                  responseId = id;
                  beat(Object.assign(details, { responseId: id }));
                },
              },
            }),
          });
          // The retry's word to its run is waited for here, while heartbeats still go out: a turn
          // that answered at once must not time out waiting for Temporal to take the signal.
          return called.finally(() => told);
        });
        spent = turn.usage.totalTokens;
        if (turn.usage.inputTokens === 0 && turn.usage.totalTokens === 0) noUsage();
        // The stream's events reach history before the turn's result does.
        await publisher?.close();
        // The model may echo a secret (decoded from a tool's output, say): redact it before history keeps it.
        const checked = checkTurnSize(withOutputIssues(sanitizer.value(turn), request), request);
        outcome = 'completed';
        return checked;
      } catch (error) {
        if (error instanceof ApplicationFailure) throw error;
        if (signal.aborted) {
          const stopped = stoppedBecause(context.cancellationDetails);
          // Said as it happens: an attempt that timed out is otherwise silent until the retry answers.
          if (stopped !== undefined)
            logger().warn(
              `Model turn ${request.turn}, attempt ${context.info.attempt}: stopped, ${stopped}; Temporal tries the turn again while attempts remain`,
            );
          if (responseId !== undefined && (await runIsGone(context, logger())))
            await cancelRemote(openai, responseId, logger());
          throw signal.reason;
        }
        const failure = classifyModelError(error, {
          model: request.model,
          host,
          clean: (text) => sanitizer.message(text),
        });
        logger().warn(
          `Model turn ${request.turn}, attempt ${context.info.attempt} failed: ${failure.type}: ${failure.message}`,
          {
            error,
            retryable: failure.retryable,
          },
        );
        throw ApplicationFailure.create({
          message: failure.message,
          type: failure.type,
          nonRetryable: !failure.retryable,
          ...(failure.retryAfterMs !== undefined ? { nextRetryDelay: failure.retryAfterMs } : {}),
        });
      } finally {
        await publisher?.close();
        live?.end(outcome);
        await permit?.release(spent);
        await told;
      }
    },

    /**
     * Runs an agent's guardrails of one stage on a run's task, answer or tool call (see
     * `runGuardrails`). A check that throws trips, and its error goes to the worker log.
     */
    checkGuardrails: async (request: GuardrailRequest): Promise<GuardrailVerdict> => {
      const context = Context.current();
      const agent = definitions.get(request.agent);
      if (agent === undefined)
        throw ApplicationFailure.create({
          type: 'KeelError.InvalidInput' satisfies FailureType,
          message: `This worker has no agent ${request.agent} whose guardrails the run asks for`,
          nonRetryable: true,
        });
      const verdict = await runGuardrails(
        agent.guardrails,
        request,
        { agent: request.agent, runId: context.info.workflowExecution?.workflowId ?? 'standalone' },
        (name, error) =>
          logger().error(`Guardrail ${name} of agent ${request.agent} failed; it trips`, { error }),
      );
      // What a check says goes into history and to the caller: no secret in it.
      return sanitizer.value(verdict);
    },

    /**
     * One tool call through the executor: always an observation, unless the run is cancelled, or
     * (with `approval`) `approvalRequired` when a person must approve it first.
     */
    executeTool: async (request: ToolRequest): Promise<Observation | ApprovalRequired> => {
      const context = Context.current();
      const workflowId = context.info.workflowExecution?.workflowId ?? 'standalone';
      const approval = request.approval === 'granted' ? undefined : request.approval;
      // A local activity (a `local` tool) cannot heartbeat: its workflow task keeps it alive instead.
      const run = context.info.isLocal
        ? (work: (beat: Beat) => Promise<Observation | ApprovalRequired>) => work(() => undefined)
        : withHeartbeats;
      const result = await run(async (heartbeat) =>
        executeUnlessApprovalNeeded(
          {
            call: request.call,
            allowedTools: request.allowedTools,
            idempotencyKey: `${workflowId}:${request.call.callId}`,
            outputCharLimit: request.outputCharLimit,
            ...(request.timeoutSeconds !== undefined ? { timeoutSeconds: request.timeoutSeconds } : {}),
            signal: context.cancellationSignal,
            heartbeat,
          },
          {
            // Inside the heartbeats: a run's first call may copy a seed or clone a repository first.
            registry: await runRegistry(workflowId),
            sanitizer,
            logger: logger(),
            idempotencyStore: dependencies.idempotencyStore,
          },
          approval,
        ),
      );
      // Characters are capped by the executor; bytes (multi-byte text) are capped here, below Temporal's limit.
      return 'approvalRequired' in result ? result : fitObservations([result], PAYLOAD_BYTES_LIMIT)[0]!;
    },
  };
  // Registered under both names: new runs schedule the prefixed ones, runs recorded before them the
  // unprefixed ones, and both must find their activity on a worker of this version.
  return {
    [ACTIVITY_NAMES.describeWorker]: activities.describeWorker,
    [ACTIVITY_NAMES.callModel]: activities.callModel,
    [ACTIVITY_NAMES.executeTool]: activities.executeTool,
    [ACTIVITY_NAMES.openWorkspace]: openWorkspace,
    [ACTIVITY_NAMES.checkGuardrails]: activities.checkGuardrails,
    [LEGACY_ACTIVITY_NAMES.describeWorker]: activities.describeWorker,
    [LEGACY_ACTIVITY_NAMES.callModel]: activities.callModel,
    [LEGACY_ACTIVITY_NAMES.executeTool]: activities.executeTool,
  };
}

/**
 * The turn, if it fits in a payload Temporal accepts. A larger one would fail the activity's
 * completion again on every retry, so it fails the run now, clearly and for good.
 */
function checkTurnSize(turn: ModelTurn, request: ModelRequest): ModelTurn {
  const bytes = jsonBytes(turn);
  if (bytes <= PAYLOAD_BYTES_LIMIT) return turn;
  throw ApplicationFailure.create({
    type: 'KeelError.PayloadTooLarge' satisfies FailureType,
    message:
      `The model's output for turn ${request.turn} is ${bytes} bytes, more than the ${PAYLOAD_BYTES_LIMIT} bytes ` +
      'Keel lets through one Temporal payload. Lower maxOutputTokens or ask for shorter tool arguments.',
    nonRetryable: true,
  });
}

/**
 * What a model turn records in its heartbeat: the background response to re-attach to after a crash,
 * and where its text streams live.
 */
interface ModelHeartbeat {
  responseId?: string;
  live?: LiveStream;
}

/** Cancels a background response on the server, so a cancelled run stops paying for it. Best effort. */
async function cancelRemote(openai: OpenAI, responseId: string, logger: Logger): Promise<void> {
  try {
    await openai.responses.cancel(responseId, { timeout: 10_000, maxRetries: 0 });
  } catch (error) {
    logger.warn(`Could not cancel model response ${responseId}`, { error });
  }
}

/** The activities' type, for `proxyActivities<KeelActivities>` in the workflow (see `keel-activities.ts`). */
export type KeelActivities = ReturnType<typeof createActivities>;

function safeHost(baseURL: string): string {
  try {
    return new URL(baseURL).host;
  } catch {
    return 'the model server';
  }
}

/**
 * Why Temporal stopped an attempt, when that is worth a warning: it timed out or the server no
 * longer knows it (its timeout passed while this worker was unreachable). A cancelled run or a
 * worker shutting down is said elsewhere.
 */
function stoppedBecause(details: ActivityCancellationDetails | undefined): string | undefined {
  if (details?.timedOut) return "it timed out (the run's modelTimeoutSeconds or heartbeat timeout)";
  if (details?.notFound)
    return 'the server no longer knows the attempt (it timed out while this worker could not be reached)';
  return undefined;
}
