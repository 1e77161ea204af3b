import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  setCurrentDetails,
  sleep,
  TimeoutFailure,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  CARRIED_CONVERSATION_BYTES_LIMIT,
  DEFAULT_IDLE_TIMEOUT_SECONDS,
  DEFAULT_INSTRUCTIONS,
  MODEL_MAX_ATTEMPTS,
  PAYLOAD_BYTES_LIMIT,
  QUEUED_MESSAGES_BYTES_LIMIT,
} from '../contract/defaults.js';
import type { ModelInput, ModelRequest } from '../contract/model-request.js';
import type { ModelTurn } from '../contract/model-turn.js';
import type { Observation } from '../contract/observation.js';
import { cutToBytes, fitObservations, jsonBytes } from '../contract/payload.js';
import { resolveLimits } from '../contract/run-input.js';
import type { RunBudgets, RunInput, RunLimits } from '../contract/run-input.js';
import type { RunResult } from '../contract/run-result.js';
import { RUN_EVENTS_KEPT } from '../contract/run-state.js';
import type { RunState } from '../contract/run-state.js';
import type { ToolCall } from '../contract/tool-call.js';
import type { ToolInfo, WorkerProfile } from '../contract/tool-info.js';
import { addUsage, emptyUsage, usageCost } from '../contract/usage.js';
import { Approvals } from './approvals.js';
import { parseArguments } from './arguments.js';
import type { AgentRunArgs } from './arguments.js';
import type { Carried, NextInput } from './carry.js';
import { Conversation } from './conversation.js';
import { asWorkflowFailure, invalidInput } from './failures.js';
import { setMessageHandlers } from './handlers.js';
import { chooseActivityNames, keelActivities } from './keel-activities.js';
import type { ActivityNames } from './keel-activities.js';
import { ownValue } from './own-value.js';
import { runToolCalls } from './tool-round.js';
import { currentDetails, recordMessage, recordObservation, recordTurn } from './progress.js';
import { keelModel, keelStatus, keelTokens, keelTurns } from './search-attributes.js';

/** Distributes `Omit` over the result union, so each variant keeps its own fields. */
type Ending = RunResult extends infer Variant
  ? Variant extends RunResult
    ? Omit<Variant, 'turns' | 'toolCalls' | 'usage' | 'lastResponseId' | 'model' | 'costUsd'>
    : never
  : never;

/**
 * The agent loop: model turn → tool calls → model turn, until the model answers without calls (a
 * session then waits for the next message), a limit or budget is reached, or a fault ends it.
 * Deterministic: every model turn and tool call is an activity, so all the loop knows is in history
 * and a new worker continues where the old one stopped. At a turn boundary the run continues as new
 * when Temporal suggests it (or after `continueAsNewAfterTurns`), carrying everything in `carried`.
 */
export async function agentRun(...args: AgentRunArgs): Promise<RunResult> {
  try {
    return await runAgent(args);
  } catch (error) {
    throw asWorkflowFailure(error, 'agentRun workflow');
  }
}

/**
 * Marks the executions that check every argument and take signals. Histories from before it replay
 * as they ran: a second argument taken as it was, signals left unhandled.
 */
const STRICT_MESSAGES_PATCH = 'keel-strict-arguments-and-signals';

async function runAgent(args: readonly unknown[]): Promise<RunResult> {
  const strict = patched(STRICT_MESSAGES_PATCH);
  const names = chooseActivityNames();
  const { input, carried } = parseArguments(args, strict);
  const state: RunState = {
    phase: 'starting',
    turn: carried?.turn ?? 0,
    maxTurns: resolveLimits(input).maxTurns,
    model: input.model ?? null,
    pendingCalls: [],
    toolCalls: carried?.toolCalls ?? 0,
    usage: carried?.usage ?? emptyUsage,
    usageByTurn: carried?.usageByTurn ?? [],
    costUsd: null,
    pendingApprovals: [],
    queuedMessages: carried?.queue.length ?? 0,
    lastAnswer: carried?.lastAnswer ?? null,
    answers: carried?.answers ?? 0,
    continuedAsNew: carried?.continuedAsNew ?? 0,
    lastResponseId: carried?.lastResponseId ?? null,
    events: carried?.events ?? [],
    result: null,
  };
  const queue: string[] = [...(carried?.queue ?? [])];
  let ending = carried?.ending ?? false;
  const toolsByName = new Map<string, ToolInfo>();
  const approvals = new Approvals(state, toolsByName);
  const endSession = (): void => {
    ending = true;
  };
  setMessageHandlers({ state, input, approvals, queue, endSession }, strict);

  const { describeWorker } = keelActivities(names, {
    startToCloseTimeout: '30s',
    retry: { maximumAttempts: 5 },
    summary: 'load tools',
  });
  const profile = await describeWorker();
  const limits = resolveLimits(input, profile.limits);
  state.maxTurns = limits.maxTurns;
  const tools = chooseTools(input, profile);
  for (const tool of tools) toolsByName.set(tool.name, tool);
  const model = input.model ?? profile.defaultModel;
  state.model = model;
  const budgets = resolveBudgets(input, profile.budgets);
  // Own keys only: a model named `constructor` must not find Object's.
  const price =
    strict && profile.prices !== undefined ? ownValue(profile.prices, model) : profile.prices?.[model];
  if (budgets.maxCostUsd !== undefined && price === undefined) {
    throw invalidInput(
      `maxCostUsd: the worker has no price for model ${model}; add it to the worker's KEEL_MODEL_PRICES`,
    );
  }
  const updateCost = (): void => {
    state.costUsd = price === undefined ? null : usageCost(state.usage, price);
  };
  updateCost();
  // The first execution's start: later executions carry it, so the time budget spans the whole run.
  const startedAtMs = carried?.startedAtMs ?? workflowInfo().runStartTime.getTime();
  let outOfTime = false;
  if (budgets.maxDurationSeconds !== undefined) {
    const leftMs = budgets.maxDurationSeconds * 1000 - (workflowInfo().runStartTime.getTime() - startedAtMs);
    if (leftMs <= 0) outOfTime = true;
    else {
      // Not cancellable: a cancelled run ends anyway, and the timer must not turn into an unhandled failure.
      CancellationScope.nonCancellable(() => sleep(leftMs, { summary: 'time budget' })).then(
        () => {
          outOfTime = true;
        },
        () => undefined,
      );
    }
  }
  const conversation = input.conversation === 'stateless' ? new Conversation(carried?.conversation) : null;
  const turnAtStart = state.turn;

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
      ...(state.costUsd !== null ? { costUsd: state.costUsd } : {}),
    };
    state.phase = 'finished';
    state.pendingCalls = [];
    state.result = result;
    publish({ status: result.status });
    log.info('Run finished', { status: result.status, turns: result.turns });
    return result;
  };

  /** The budget that is spent, if one is. */
  const spentBudget = (): Ending | undefined => {
    if (outOfTime) return { status: 'max_time', lastText };
    if (budgets.maxTotalTokens !== undefined && state.usage.totalTokens >= budgets.maxTotalTokens) {
      return { status: 'max_tokens', lastText };
    }
    if (budgets.maxCostUsd !== undefined && (state.costUsd ?? 0) >= budgets.maxCostUsd) {
      return { status: 'max_cost', lastText };
    }
    return undefined;
  };

  /** Budget for the observations of one turn, so the model request stays within Temporal's payload limit. */
  const observationBudget =
    PAYLOAD_BYTES_LIMIT - jsonBytes(input.instructions ?? DEFAULT_INSTRUCTIONS) - QUEUED_MESSAGES_BYTES_LIMIT;

  /** The model input of the next turn, with the messages that arrived meanwhile. */
  const modelInputFor = (next: Exclude<NextInput, { kind: 'idle' }>): ModelInput => {
    const messages = queue.splice(0);
    state.queuedMessages = 0;
    for (const text of messages) recordMessage(state, text);
    const withMessages = messages.length > 0 ? { messages } : {};
    if (conversation !== null) {
      if (next.kind === 'task') conversation.addUserMessage(input.task);
      if (next.kind === 'observations') conversation.addObservations(next.observations);
      for (const text of messages) conversation.addUserMessage(text);
      return { kind: 'items', items: conversation.items(observationBudget) };
    }
    switch (next.kind) {
      case 'task':
        return { kind: 'task', task: input.task, ...withMessages };
      case 'observations':
        return { ...next, ...withMessages };
      case 'messages':
        if (next.previousResponseId === null) return { kind: 'task', task: input.task, messages };
        return { kind: 'messages', previousResponseId: next.previousResponseId, messages };
    }
  };

  const continueAsNewDue = (): boolean =>
    workflowInfo().continueAsNewSuggested ||
    (input.continueAsNewAfterTurns !== undefined &&
      state.turn - turnAtStart >= input.continueAsNewAfterTurns);

  const continueAsNewNow = async (next: NextInput): Promise<never> => {
    // Updates that are mid-way must finish here: the next execution would not know them.
    await condition(allHandlersFinished);
    log.info('Continuing as new', { turn: state.turn, historyLength: workflowInfo().historyLength });
    const carry: Carried = {
      turn: state.turn,
      toolCalls: state.toolCalls,
      usage: state.usage,
      usageByTurn: state.usageByTurn.slice(-RUN_EVENTS_KEPT),
      lastResponseId: state.lastResponseId,
      lastText: cutToBytes(lastText, CARRIED_TEXT_BYTES),
      lastAnswer: state.lastAnswer === null ? null : cutToBytes(state.lastAnswer, CARRIED_TEXT_BYTES),
      answers: state.answers,
      events: state.events,
      continuedAsNew: state.continuedAsNew + 1,
      startedAtMs,
      next,
      queue: queue.splice(0),
      ending,
      ...(conversation !== null
        ? { conversation: conversation.snapshot(CARRIED_CONVERSATION_BYTES_LIMIT) }
        : {}),
    };
    return continueAsNew<typeof agentRun>(input, carry);
  };

  const answered = (text: string): void => {
    state.lastAnswer = text;
    state.answers += 1;
  };

  let next: NextInput = carried?.next ?? { kind: 'task' };
  let lastText = carried?.lastText ?? '';
  for (;;) {
    const spent = spentBudget();
    if (spent !== undefined) return finish(spent);
    if (next.kind === 'idle') {
      if (queue.length === 0 && !ending) {
        state.phase = 'idle';
        publish({ status: 'idle' });
        let woke: boolean;
        try {
          woke = await condition(
            () => queue.length > 0 || ending || outOfTime || workflowInfo().continueAsNewSuggested,
            `${input.idleTimeoutSeconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS}s`,
          );
        } catch (error) {
          rethrowIfCancelled(error, () => publish({ status: 'cancelled' }));
          throw error;
        }
        if (!woke) return finish({ status: 'completed', finalText: state.lastAnswer ?? '' });
        if (outOfTime) continue;
        if (queue.length === 0 && !ending) await continueAsNewNow(next);
        publish({ status: 'running' });
      }
      if (queue.length === 0) return finish({ status: 'completed', finalText: state.lastAnswer ?? '' });
      next = { kind: 'messages', previousResponseId: state.lastResponseId };
    }
    if (state.turn > turnAtStart && continueAsNewDue()) await continueAsNewNow(next);

    state.turn += 1;
    state.phase = 'thinking';
    publish();
    const request: ModelRequest = {
      model,
      instructions: input.instructions ?? DEFAULT_INSTRUCTIONS,
      turn: state.turn,
      input: modelInputFor(next),
      tools: tools.map((tool) => tool.name),
      parallelToolCalls: input.parallelToolCalls,
      ...(input.maxOutputTokens !== undefined ? { maxOutputTokens: input.maxOutputTokens } : {}),
      ...(input.reasoningEffort !== undefined ? { reasoningEffort: input.reasoningEffort } : {}),
    };
    // The last line of defence: Temporal would refuse the command and retry the workflow task forever.
    const requestBytes = jsonBytes(request);
    if (requestBytes > PAYLOAD_BYTES_LIMIT) {
      return finish({
        status: 'failed',
        errorType: 'KeelError.PayloadTooLarge',
        reason:
          `The model request for turn ${state.turn} would be ${requestBytes} bytes, more than the ` +
          `${PAYLOAD_BYTES_LIMIT} bytes Keel lets through one Temporal payload. Shorten the instructions, task or messages.`,
      });
    }
    let turn: ModelTurn;
    try {
      turn = await callModel(names, limits, request);
    } catch (error) {
      rethrowIfCancelled(error, () => publish({ status: 'cancelled' }));
      return finish(failure('model turn', error));
    }
    state.usage = addUsage(state.usage, turn.usage);
    state.usageByTurn.push(turn.usage);
    if (state.usageByTurn.length > RUN_EVENTS_KEPT) state.usageByTurn.shift();
    updateCost();
    state.lastResponseId = turn.responseId;
    conversation?.addTurnOutput(turn.outputItems ?? []);
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
      answered(turn.text);
      if (queue.length > 0 && !ending) {
        // Messages that came while the model answered are answered next, in or out of a session.
        next = { kind: 'messages', previousResponseId: turn.responseId };
        continue;
      }
      if (input.session && !ending) {
        next = { kind: 'idle' };
        continue;
      }
      return finish({ status: 'completed', finalText: turn.text });
    }
    // Budgets and the turn limit count model turns: calls the last allowed turn asks for are not run.
    const spentNow = spentBudget();
    if (spentNow !== undefined) return finish(spentNow);
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
        observations = await runToolCalls(turn.toolCalls, {
          tools: toolsByName,
          input,
          limits,
          state,
          approvals,
          names,
          outOfTime: () => outOfTime,
          publish,
        });
      } catch (error) {
        rethrowIfCancelled(error, () => publish({ status: 'cancelled' }));
        return finish(failure('tool call', error));
      }
    }
    state.toolCalls += observations.length;
    next = {
      kind: 'observations',
      previousResponseId: turn.responseId,
      observations: fitObservations(observations, observationBudget),
    };
  }
}

/** Characters of the last text and answer carried across continue-as-new. */
const CARRIED_TEXT_BYTES = 200_000;

function resolveBudgets(input: RunInput, worker: Partial<RunBudgets> = {}): Partial<RunBudgets> {
  const budgets: Partial<RunBudgets> = {};
  for (const key of ['maxTotalTokens', 'maxDurationSeconds', 'maxCostUsd'] as const) {
    const value = input[key] ?? worker[key];
    if (value !== undefined) budgets[key] = value;
  }
  return budgets;
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

function chooseTools(input: RunInput, profile: WorkerProfile): ToolInfo[] {
  const byName = new Map(profile.tools.map((tool) => [tool.name, tool]));
  const refuse = (field: string, names: string[]): never => {
    const available = profile.tools.map((tool) => tool.name).join(', ') || 'no tools';
    throw invalidInput(`${field}: unknown tool(s) ${names.join(', ')}; this worker has ${available}`);
  };
  const missing = (input.tools ?? []).filter((name) => !byName.has(name));
  if (missing.length > 0) refuse('tools', missing);
  const chosen =
    input.tools === undefined ? profile.tools : input.tools.map((name) => byName.get(name) as ToolInfo);
  // Per-tool settings may only name tools the run offers.
  const settings = {
    toolTimeouts: Object.keys(input.toolTimeouts ?? {}),
    approvalTools: input.approvalTools ?? [],
  };
  for (const [field, names] of Object.entries(settings)) {
    const unknown = names.filter((name) => !chosen.some((tool) => tool.name === name));
    if (unknown.length > 0) refuse(field, unknown);
  }
  return chosen;
}

async function callModel(names: ActivityNames, limits: RunLimits, request: ModelRequest): Promise<ModelTurn> {
  const activities = keelActivities(names, {
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
