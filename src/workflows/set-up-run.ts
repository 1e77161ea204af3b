import { CancellationScope, patched, sleep, workflowInfo } from '@temporalio/workflow';
import { workspaceRoute } from './workspace-route.js';
import {
  DEFAULT_INSTRUCTIONS,
  PAYLOAD_BYTES_LIMIT,
  QUEUED_MESSAGES_BYTES_LIMIT,
} from '../contract/defaults.js';
import { jsonBytes } from '../contract/payload.js';
import { resolveLimits } from '../contract/run-limits.js';
import type { RunBudgets, RunInput } from '../contract/run-input.js';
import type { RunState } from '../contract/run-state.js';
import type { ToolInfo } from '../contract/tool-info.js';
import { emptyUsage } from '../contract/usage-sums.js';
import { applyAgent } from './apply-agent.js';
import { Approvals } from './approvals.js';
import { parseArguments } from './arguments.js';
import { chooseTools } from './choose-tools.js';
import { subAgentTools } from './sub-agents.js';
import { Conversation } from './conversation.js';
import { invalidInput } from './failures.js';
import { setMessageHandlers } from './handlers.js';
import { chooseActivityNames, keelActivities } from './keel-activities.js';
import { ownValue } from './own-value.js';
import { publish, updateCost } from './publish.js';
import { ReplayCalls } from './replay-calls.js';
import type { RunContext, RunFlags } from './run-context.js';
import type { Step } from './steps.js';
import { LIVE_STREAM_PATCH, STREAM_PATCH, StreamLog } from './stream-log.js';
import { anyOf, budgetConditions, turnLimit } from './stop-conditions.js';

/**
 * Marks the executions that check every argument and take signals. Histories from before it replay
 * as they ran: a second argument taken as it was, signals left unhandled.
 */
const STRICT_MESSAGES_PATCH = 'keel-strict-arguments-and-signals';

/**
 * Marks the executions that upsert progress alone (turns, tokens) every `PROGRESS_UPSERT_TURNS`
 * turns rather than after every turn. Histories from before it replay with an upsert per turn.
 */
const LEAN_UPSERTS_PATCH = 'keel-lean-upserts';

/**
 * Marks the executions whose approvals take edited arguments without the tool's optional fields
 * (filled in as `null`) and name each refused field's type. Histories from before it replay as they
 * ran: an approve signal that left a field out stays refused.
 */
export const APPROVAL_ARGUMENTS_PATCH = 'keel-approval-arguments-fill-optionals';

/**
 * Sets up one execution of a run: checks its arguments, sets its message handlers, asks the worker
 * for its profile (tools, defaults, budgets, prices; recorded in history), resolves the run's model,
 * limits and budgets, and starts the time budget's timer. Returns the run and its first step.
 */
export async function setUpRun(args: readonly unknown[]): Promise<{ run: RunContext; first: Step }> {
  const strict = patched(STRICT_MESSAGES_PATCH);
  const names = chooseActivityNames();
  const { input: given, carried } = parseArguments(args, strict);
  const state: RunState = {
    phase: 'starting',
    turn: carried?.turn ?? 0,
    maxTurns: resolveLimits(given).maxTurns,
    model: given.model ?? null,
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
  const flags: RunFlags = {
    ending: carried?.ending ?? false,
    outOfTime: false,
    lastText: carried?.lastText ?? '',
    outputRetries: carried?.outputRetries ?? 0,
  };
  const toolsByName = new Map<string, ToolInfo>();
  const approvals = new Approvals(state, toolsByName, patched(APPROVAL_ARGUMENTS_PATCH));
  // Set before the first await, so messages that arrive with the first workflow task find them.
  const endSession = (): void => {
    flags.ending = true;
  };
  setMessageHandlers({ state, input: given, approvals, queue, endSession }, strict);
  const stream = patched(STREAM_PATCH)
    ? new StreamLog(carried?.stream, patched(LIVE_STREAM_PATCH))
    : undefined;
  stream?.listen();

  const { describeWorker } = keelActivities(names, {
    startToCloseTimeout: '30s',
    retry: { maximumAttempts: 5 },
    summary: 'load tools',
  });
  // Without an agent, asked as before: the activity's input stays what older histories hold.
  const profile = await (given.agent === undefined
    ? describeWorker()
    : describeWorker({ agent: given.agent }));
  const { input, agent } = applyAgent(given, profile);
  // The run's own choice, else the worker's (KEEL_CONVERSATION), else chained; pinned for the whole
  // run: continue-as-new carries it, so a worker restarted with another setting cannot switch it.
  const conversation = input.conversation ?? profile.conversation ?? 'chained';
  if (agent !== undefined) state.agent = agent;
  const limits = resolveLimits(input, profile.limits);
  state.maxTurns = limits.maxTurns;
  const tools = chooseTools(input, profile, subAgentTools(profile.agent, input), given.tools !== undefined);
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
  const budgetsSpent = anyOf(budgetConditions(budgets));
  const run: RunContext = {
    input,
    givenInput: given.conversation === undefined ? { ...given, conversation } : given,
    agent,
    guardrails: agent === undefined ? undefined : profile.agent?.guardrails,
    state,
    strict,
    names,
    queue,
    tools,
    toolsByName,
    approvals,
    model,
    limits,
    budgets,
    price,
    stopBeforeStep: budgetsSpent,
    // Budgets and the turn limit count model turns: calls the last allowed turn asks for are not run.
    stopBeforeTools: anyOf([budgetsSpent, turnLimit(limits.maxTurns)]),
    // The first execution's start: later executions carry it, so the time budget spans the whole run.
    startedAtMs: carried?.startedAtMs ?? workflowInfo().runStartTime.getTime(),
    turnAtStart: state.turn,
    conversation: conversation === 'stateless' ? new Conversation(carried?.conversation) : null,
    searchAttributes: profile.searchAttributes === true,
    leanUpserts: patched(LEAN_UPSERTS_PATCH),
    observationBudget:
      PAYLOAD_BYTES_LIMIT -
      jsonBytes(input.instructions ?? DEFAULT_INSTRUCTIONS) -
      QUEUED_MESSAGES_BYTES_LIMIT,
    flags,
    workspace: workspaceRoute(profile, carried?.workspaceQueue),
    stream,
    replay: input.replay === undefined ? undefined : new ReplayCalls(input.replay, carried?.replayUses),
  };
  updateCost(run);
  startTimeBudget(run);
  publish(run, { status: 'running' });
  return { run, first: carried?.next ?? { kind: 'task' } };
}

/** A budget the run sets wins over the worker's. */
function resolveBudgets(input: RunInput, worker: Partial<RunBudgets> = {}): Partial<RunBudgets> {
  const budgets: Partial<RunBudgets> = {};
  for (const key of ['maxTotalTokens', 'maxDurationSeconds', 'maxCostUsd'] as const) {
    // A sub-agent's run has what its parent had left, and the worker's budget where it is tighter.
    const given = input[key];
    const own = worker[key];
    const value =
      input.subAgentDepth !== undefined && given !== undefined && own !== undefined
        ? Math.min(given, own)
        : (given ?? own);
    if (value !== undefined) budgets[key] = value;
  }
  return budgets;
}

/** Sets `flags.outOfTime` when the run's time budget (counted from its first execution) runs out. */
function startTimeBudget(run: RunContext): void {
  const seconds = run.budgets.maxDurationSeconds;
  if (seconds === undefined) return;
  const leftMs = seconds * 1000 - (workflowInfo().runStartTime.getTime() - run.startedAtMs);
  if (leftMs <= 0) {
    run.flags.outOfTime = true;
    return;
  }
  // Not cancellable: a cancelled run ends anyway, and the timer must not turn into an unhandled failure.
  CancellationScope.nonCancellable(() => sleep(leftMs, { summary: 'time budget' })).then(
    () => {
      run.flags.outOfTime = true;
    },
    () => undefined,
  );
}
