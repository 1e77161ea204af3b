import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  isCancellation,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  TimeoutFailure,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { KeelActivities } from '../activities/create-activities.js';
import {
  DEFAULT_INSTRUCTIONS,
  DEFAULT_TOOL_TIMEOUT_SECONDS,
  MODEL_MAX_ATTEMPTS,
  TOOL_ACTIVITY_GRACE_SECONDS,
  TOOL_MAX_ATTEMPTS,
} from '../contract/defaults.js';
import { formatIssues } from '../contract/format-issues.js';
import type { ModelInput, ModelRequest } from '../contract/model-request.js';
import type { ModelTurn } from '../contract/model-turn.js';
import type { Observation } from '../contract/observation.js';
import { resolveLimits, RunInput } from '../contract/run-input.js';
import type { RunInputArgs, RunLimits } from '../contract/run-input.js';
import type { RunResult } from '../contract/run-result.js';
import type { RunState } from '../contract/run-state.js';
import type { ToolCall } from '../contract/tool-call.js';
import type { ToolInfo, WorkerProfile } from '../contract/tool-info.js';
import { addUsage, emptyUsage } from '../contract/usage.js';
import { stateQuery } from './messages.js';
import { currentDetails, recordObservation, recordTurn } from './progress.js';
import { keelModel, keelStatus, keelTokens, keelTurns } from './search-attributes.js';
import { toolCallSummary } from './tool-summary.js';

/** Distributes `Omit` over the result union, so each variant keeps its own fields. */
type Ending = RunResult extends infer Variant
  ? Variant extends RunResult
    ? Omit<Variant, 'turns' | 'toolCalls' | 'usage' | 'lastResponseId' | 'model'>
    : never
  : never;

/**
 * The agent loop: model turn → tool calls → model turn, until the model answers without calls, the
 * turn limit is reached, or a fault ends it. Deterministic: every model turn and tool call is an
 * activity, so all the loop knows is in history and a new worker continues where the old one stopped.
 */
export async function agentRun(rawInput: RunInputArgs): Promise<RunResult> {
  const input = parseInput(rawInput);
  const state: RunState = {
    phase: 'starting',
    turn: 0,
    maxTurns: resolveLimits(input).maxTurns,
    model: input.model ?? null,
    pendingCalls: [],
    toolCalls: 0,
    usage: emptyUsage,
    usageByTurn: [],
    lastResponseId: null,
    events: [],
    result: null,
  };
  setHandler(stateQuery, () => state);

  const { describeWorker } = proxyActivities<KeelActivities>({
    startToCloseTimeout: '30s',
    retry: { maximumAttempts: 5 },
    summary: 'load tools',
  });
  const profile = await describeWorker();
  const limits = resolveLimits(input, profile.limits);
  state.maxTurns = limits.maxTurns;
  const tools = chooseTools(input, profile);
  const model = input.model ?? profile.defaultModel;
  state.model = model;
  // Only where the namespace has them registered: setting an unknown one would fail every task.
  const searchAttributes = profile.searchAttributes === true;
  /**
   * Shows progress in the UI: the current details always; the search attributes (each upsert is an
   * event in history) only when asked, at the start, after each model turn and at the end.
   */
  const publish = (attributes: { status?: string } | false = false): void => {
    setCurrentDetails(currentDetails(state));
    if (!searchAttributes || attributes === false) return;
    upsertSearchAttributes([
      ...(attributes.status !== undefined ? [{ key: keelStatus, value: attributes.status }] : []),
      ...(state.turn === 0 ? [{ key: keelModel, value: model }] : []),
      { key: keelTurns, value: state.turn },
      { key: keelTokens, value: state.usage.totalTokens },
    ]);
  };
  publish({ status: 'running' });

  const finish = (ending: Ending): RunResult => {
    const result = {
      ...ending,
      turns: state.turn,
      toolCalls: state.toolCalls,
      usage: state.usage,
      lastResponseId: state.lastResponseId,
      model,
    };
    state.phase = 'finished';
    state.pendingCalls = [];
    state.result = result;
    publish({ status: result.status });
    log.info('Run finished', { status: result.status, turns: result.turns });
    return result;
  };

  let modelInput: ModelInput = { kind: 'task', task: input.task };
  let lastText = '';
  for (;;) {
    state.turn += 1;
    state.phase = 'thinking';
    publish();
    let turn: ModelTurn;
    try {
      turn = await callModel(limits, {
        model,
        instructions: input.instructions ?? DEFAULT_INSTRUCTIONS,
        turn: state.turn,
        input: modelInput,
        tools: tools.map((tool) => tool.name),
        parallelToolCalls: input.parallelToolCalls,
        ...(input.maxOutputTokens !== undefined ? { maxOutputTokens: input.maxOutputTokens } : {}),
        ...(input.reasoningEffort !== undefined ? { reasoningEffort: input.reasoningEffort } : {}),
      });
    } catch (error) {
      rethrowIfCancelled(error, () => publish({ status: 'cancelled' }));
      return finish(failure('model turn', error));
    }
    state.usage = addUsage(state.usage, turn.usage);
    state.usageByTurn.push(turn.usage);
    state.lastResponseId = turn.responseId;
    recordTurn(state, turn);
    publish({});
    if (turn.text !== '') lastText = turn.text;

    if (turn.toolCalls.length === 0) {
      if (turn.status === 'incomplete') {
        return finish({
          status: 'incomplete',
          reason: turn.incompleteReason ?? 'unknown',
          partialText: turn.text,
        });
      }
      return finish({ status: 'completed', finalText: turn.text });
    }
    // The turn limit counts model turns: calls the last allowed turn asks for are not run.
    if (state.turn >= limits.maxTurns) return finish({ status: 'max_turns', lastText });

    state.phase = 'acting';
    state.pendingCalls = turn.toolCalls.map(({ callId, name }) => ({ callId, name }));
    publish();
    let observations: Observation[];
    if (turn.status === 'incomplete') {
      // The output was cut off, so the last call's arguments may be truncated: run none of them.
      observations = turn.toolCalls.map((call) => notExecuted(call, turn.incompleteReason));
      turn.toolCalls.forEach((call, index) => recordObservation(state, call, observations[index]!));
      state.pendingCalls = [];
    } else {
      try {
        observations = await runToolCalls(turn.toolCalls, tools, input, limits, state);
      } catch (error) {
        rethrowIfCancelled(error, () => publish({ status: 'cancelled' }));
        return finish(failure('tool call', error));
      }
    }
    state.toolCalls += observations.length;
    modelInput = { kind: 'observations', previousResponseId: turn.responseId, observations };
  }
}

/**
 * Cancellation ends the run as Canceled, never as a `failed` result: once the run is cancelled, the
 * step's failure (a cancelled activity, or one that timed out on a hung worker that could not hear
 * the cancel) is reported as the cancellation it comes from.
 */
function rethrowIfCancelled(error: unknown, onCancelled: () => void): void {
  const cancelled = isCancellation(error) || CancellationScope.current().consideredCancelled;
  if (!cancelled) return;
  onCancelled();
  if (isCancellation(error)) throw error;
  throw new CancelledFailure('The run was cancelled', [], error instanceof Error ? error : undefined);
}

function parseInput(rawInput: unknown): RunInput {
  const parsed = RunInput.safeParse(rawInput);
  if (parsed.success) return parsed.data;
  // A non-retryable failure ends the run at once; a plain Error would retry the workflow task forever.
  throw ApplicationFailure.create({
    type: 'KeelError.InvalidInput',
    message: `Invalid run input:\n${formatIssues(parsed.error).join('\n')}`,
    nonRetryable: true,
  });
}

function chooseTools(input: RunInput, profile: WorkerProfile): ToolInfo[] {
  const byName = new Map(profile.tools.map((tool) => [tool.name, tool]));
  const refuse = (field: string, names: string[]): never => {
    throw ApplicationFailure.create({
      type: 'KeelError.InvalidInput',
      message: `Invalid run input:\n${field}: unknown tool(s) ${names.join(', ')}; this worker has ${
        profile.tools.map((tool) => tool.name).join(', ') || 'no tools'
      }`,
      nonRetryable: true,
    });
  };
  const missing = (input.tools ?? []).filter((name) => !byName.has(name));
  if (missing.length > 0) refuse('tools', missing);
  const chosen =
    input.tools === undefined ? profile.tools : input.tools.map((name) => byName.get(name) as ToolInfo);
  const unknownTimeouts = Object.keys(input.toolTimeouts ?? {}).filter(
    (name) => !chosen.some((tool) => tool.name === name),
  );
  if (unknownTimeouts.length > 0) refuse('toolTimeouts', unknownTimeouts);
  return chosen;
}

async function callModel(limits: RunLimits, request: ModelRequest): Promise<ModelTurn> {
  const activities = proxyActivities<KeelActivities>({
    startToCloseTimeout: `${limits.modelTimeoutSeconds}s`,
    heartbeatTimeout: `${limits.heartbeatTimeoutSeconds}s`,
    retry: {
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '1m',
      maximumAttempts: MODEL_MAX_ATTEMPTS,
    },
    summary: `model turn ${request.turn}`,
  });
  return activities.callModel(request);
}

/**
 * Runs the calls in the order the model emitted them and returns one observation per call, in that
 * order. With parallel calls allowed, consecutive read-only calls run together.
 */
async function runToolCalls(
  calls: readonly ToolCall[],
  tools: readonly ToolInfo[],
  input: RunInput,
  limits: RunLimits,
  state: RunState,
): Promise<Observation[]> {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const allowedTools = tools.map((tool) => tool.name);
  const run = async (call: ToolCall): Promise<Observation> => {
    const override = input.toolTimeouts?.[call.name];
    const timeoutSeconds = override ?? byName.get(call.name)?.timeoutSeconds ?? DEFAULT_TOOL_TIMEOUT_SECONDS;
    const activities = proxyActivities<KeelActivities>({
      startToCloseTimeout: `${timeoutSeconds + TOOL_ACTIVITY_GRACE_SECONDS}s`,
      heartbeatTimeout: `${limits.heartbeatTimeoutSeconds}s`,
      retry: {
        initialInterval: '1s',
        backoffCoefficient: 2,
        maximumInterval: '30s',
        maximumAttempts: TOOL_MAX_ATTEMPTS,
      },
      summary: toolCallSummary(call),
    });
    const observation = await activities.executeTool({
      call,
      allowedTools,
      outputCharLimit: limits.observationCharLimit,
      ...(override !== undefined ? { timeoutSeconds: override } : {}),
    });
    state.pendingCalls = state.pendingCalls.filter((pending) => pending.callId !== call.callId);
    recordObservation(state, call, observation);
    return observation;
  };
  const observations: Observation[] = [];
  for (let index = 0; index < calls.length;) {
    const batch = [calls[index] as ToolCall];
    const parallel = (call: ToolCall): boolean =>
      input.parallelToolCalls && byName.get(call.name)?.readOnly === true;
    if (parallel(batch[0] as ToolCall)) {
      while (index + batch.length < calls.length && parallel(calls[index + batch.length] as ToolCall)) {
        batch.push(calls[index + batch.length] as ToolCall);
      }
    }
    observations.push(...(await Promise.all(batch.map(run))));
    index += batch.length;
  }
  return observations;
}

function notExecuted(call: ToolCall, reason: string | null): Observation {
  return {
    callId: call.callId,
    ok: false,
    error: 'not_executed',
    message:
      `Your response was cut off (${reason ?? 'incomplete'}) before it was finished, so this call was not run: ` +
      'its arguments may be truncated. Make the call again, with shorter arguments if they were long.',
  };
}

/** Turns an activity's final failure into a `failed` result with a readable reason. */
function failure(step: string, error: unknown): Ending {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    return { status: 'failed', reason: cause.message, errorType: cause.type ?? 'ApplicationFailure' };
  }
  if (cause instanceof TimeoutFailure) {
    return {
      status: 'failed',
      reason: `The ${step} timed out (${cause.timeoutType}) on every attempt`,
      errorType: 'KeelError.Timeout',
    };
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return { status: 'failed', reason: `The ${step} failed: ${message}`, errorType: 'KeelError.Unexpected' };
}
