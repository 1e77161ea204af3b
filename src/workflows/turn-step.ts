import { DEFAULT_INSTRUCTIONS, MODEL_MAX_ATTEMPTS, PAYLOAD_BYTES_LIMIT } from '../contract/defaults.js';
import type { ModelRequest } from '../contract/model-request.js';
import type { ModelTurn } from '../contract/model-turn.js';
import type { Observation } from '../contract/observation.js';
import { fitObservations, jsonBytes } from '../contract/payload.js';
import { RUN_EVENTS_KEPT } from '../contract/defaults.js';
import type { ToolCall } from '../contract/tool-call.js';
import { addUsage } from '../contract/usage-sums.js';
import { rethrowIfCancelled } from './cancellation.js';
import type { NextInput } from './schemas.js';
import { continueAsNewDue, continueAsNewNow } from './continue-as-new.js';
import { keelActivities } from './keel-activities.js';
import { guardOutput, guardToolCall } from './guardrails.js';
import { modelInputFor } from './model-input.js';
import { completedEnding, judgeAnswer, requestedOutput } from './output.js';
import { preview, recordObservation, recordTurn } from './progress.js';
import { publish, updateCost } from './publish.js';
import { Diverged } from './replay-calls.js';
import type { RunContext } from './run-context.js';
import { stepFailure } from './step-failure.js';
import { finishStep } from './steps.js';
import type { Step } from './steps.js';
import type { SubAgentRound } from './sub-agents.js';
import { runToolCalls } from './tool-round.js';

/**
 * One model turn and the tool calls it asks for. Returns the next step: the observations for the
 * next turn, waiting for a message (a session that answered), or the run's ending. At the boundary
 * before the turn the run may continue as new instead.
 */
export async function turnStep(run: RunContext, next: Exclude<NextInput, { kind: 'idle' }>): Promise<Step> {
  const { state, input } = run;
  if (state.turn > run.turnAtStart && continueAsNewDue(run)) await continueAsNewNow(run, next);

  state.turn += 1;
  state.phase = 'thinking';
  run.stream?.openTurn(state.turn, input.stream !== false);
  publish(run);
  const request: ModelRequest = {
    model: run.model,
    instructions: input.instructions ?? DEFAULT_INSTRUCTIONS,
    turn: state.turn,
    input: modelInputFor(run, next),
    tools: run.tools.filter((tool) => tool.subAgent !== true).map((tool) => tool.name),
    ...agentTools(run),
    parallelToolCalls: input.parallelToolCalls,
    ...(input.maxOutputTokens !== undefined ? { maxOutputTokens: input.maxOutputTokens } : {}),
    ...(input.reasoningEffort !== undefined ? { reasoningEffort: input.reasoningEffort } : {}),
    ...(run.agent !== undefined ? { agent: run.agent } : {}),
    ...requestedOutput(run),
    ...truncationOf(run),
    sayRetries: true,
    ...(run.stream === undefined || input.stream === false
      ? {}
      : run.stream.live
        ? { live: true }
        : { stream: true }),
  };
  // The last line of defence: Temporal would refuse the command and retry the workflow task forever.
  const requestBytes = jsonBytes(request);
  if (requestBytes > PAYLOAD_BYTES_LIMIT) {
    return finishStep({
      status: 'failed',
      errorType: 'KeelError.PayloadTooLarge',
      reason:
        `The model request for turn ${state.turn} would be ${requestBytes} bytes, more than the ` +
        `${PAYLOAD_BYTES_LIMIT} bytes Keel lets through one Temporal payload. Shorten the instructions, task or messages.`,
    });
  }
  let turn: ModelTurn;
  try {
    turn = await callModel(run, request);
  } catch (error) {
    delete state.modelAttempt;
    run.stream?.failTurn(state.turn);
    rethrowIfCancelled(error, () => publish(run, { status: 'cancelled' }));
    return finishStep(stepFailure('model turn', error));
  }
  delete state.modelAttempt;
  recordModelTurn(run, turn);

  if (turn.toolCalls.length === 0) return await answeredStep(run, turn);
  const stop = run.stopBeforeTools({ state, outOfTime: run.flags.outOfTime });
  if (stop !== undefined) return finishStep({ status: stop, lastText: run.flags.lastText });

  state.phase = 'acting';
  state.pendingCalls = turn.toolCalls.map(({ callId, name }) => ({ callId, name }));
  publish(run);
  let observations: Observation[];
  if (turn.status === 'incomplete') {
    // The output was cut off, so the last call's arguments may be truncated: run none of them.
    observations = turn.toolCalls.map((call) => notExecuted(call, turn.incompleteReason));
    turn.toolCalls.forEach((call, index) => {
      recordObservation(state, call, observations[index]!);
      streamObservation(run, call, observations[index]!);
    });
    state.pendingCalls = [];
  } else {
    try {
      observations = await runToolCalls(turn.toolCalls, {
        tools: run.toolsByName,
        input,
        limits: run.limits,
        state,
        approvals: run.approvals,
        names: run.names,
        workspace: run.workspace,
        outOfTime: () => run.flags.outOfTime,
        publish: (attributes) => publish(run, attributes),
        observed: (call, observation) => streamObservation(run, call, observation),
        replay: run.replay,
        subAgents: run.tools.some((tool) => tool.subAgent === true) ? subAgentRound(run) : undefined,
        guard: run.guardrails?.toolCalls === undefined ? undefined : (call) => guardToolCall(run, call),
      });
    } catch (error) {
      if (error instanceof Diverged) {
        state.pendingCalls = [];
        return finishStep({ status: 'failed', errorType: 'KeelError.Diverged', reason: error.message });
      }
      rethrowIfCancelled(error, () => publish(run, { status: 'cancelled' }));
      return finishStep(stepFailure('tool call', error));
    }
  }
  state.toolCalls += observations.length;
  return {
    kind: 'observations',
    previousResponseId: turn.responseId,
    observations: fitObservations(observations, run.observationBudget),
  };
}

/** Adds a finished turn to the run's totals, events and conversation. */
function recordModelTurn(run: RunContext, turn: ModelTurn): void {
  const { state } = run;
  state.usage = addUsage(state.usage, turn.usage);
  state.usageByTurn.push(turn.usage);
  if (state.usageByTurn.length > RUN_EVENTS_KEPT) state.usageByTurn.shift();
  updateCost(run);
  state.lastResponseId = turn.responseId;
  run.conversation?.addTurnOutput(turn.outputItems ?? []);
  recordTurn(state, turn, run.agent);
  run.stream?.endTurn(state.turn, { text: turn.text, calls: turn.toolCalls });
  publish(run, {});
  if (turn.text !== '') run.flags.lastText = turn.text;
}

/** After a turn without calls: the model answered (or was cut off before it could). */
async function answeredStep(run: RunContext, turn: ModelTurn): Promise<Step> {
  const { state, flags } = run;
  if (turn.status === 'incomplete') {
    return finishStep({
      status: 'incomplete',
      reason: turn.incompleteReason ?? 'unknown',
      partialText: turn.text,
    });
  }
  const judged = judgeAnswer(run, turn);
  if (judged.kind === 'fail') return finishStep(judged.ending);
  if (judged.kind === 'retry') {
    // Sent back first, before any message that came meanwhile, which the next answer then covers too.
    run.queue.unshift(judged.message);
    return { kind: 'messages', previousResponseId: turn.responseId };
  }
  const guarded = await guardOutput(run, turn.text);
  if ('ending' in guarded) return finishStep(guarded.ending);
  const text = guarded.text;
  state.lastAnswer = text;
  state.answers += 1;
  // Messages that came while the model answered are answered next, in or out of a session.
  if (run.queue.length > 0 && !flags.ending) return { kind: 'messages', previousResponseId: turn.responseId };
  if (run.input.session && !flags.ending) return { kind: 'idle' };
  return finishStep(completedEnding(run, text));
}

async function callModel(run: RunContext, request: ModelRequest): Promise<ModelTurn> {
  const { limits } = run;
  const activities = keelActivities(run.names, {
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

/** Tells the stream's subscribers how a call went. */
function streamObservation(run: RunContext, call: ToolCall, observation: Observation): void {
  run.stream?.append({
    type: 'observation',
    turn: run.state.turn,
    callId: call.callId,
    name: call.name,
    ok: observation.ok,
    ...(observation.ok ? {} : { error: observation.error }),
    preview: preview(observation.ok ? observation.output : observation.message),
  });
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

/** The sub-agents the turn offers, for a run that offers any. */
function agentTools(run: RunContext): Pick<ModelRequest, 'agentTools'> {
  const agents = run.tools.filter((tool) => tool.subAgent === true);
  return agents.length === 0
    ? {}
    : { agentTools: agents.map(({ name, description }) => ({ name, description })) };
}

/** What a sub-agent call needs from the run: its input, its token budget left, and its totals. */
function subAgentRound(run: RunContext): SubAgentRound {
  const { state } = run;
  return {
    input: run.input,
    turn: state.turn,
    outputCharLimit: run.limits.observationCharLimit,
    stateless: run.conversation !== null,
    tokensLeft: () =>
      run.budgets.maxTotalTokens === undefined
        ? undefined
        : run.budgets.maxTotalTokens - state.usage.totalTokens,
    spent: (usage) => {
      state.usage = addUsage(state.usage, usage);
      updateCost(run);
    },
  };
}

/**
 * The run's `truncation`: its own, else `auto` in a session, whose conversation grows with every
 * message (a run that keeps none sends none: the server's default applies).
 */
function truncationOf(run: RunContext): Pick<ModelRequest, 'truncation'> {
  const truncation = run.input.truncation ?? (run.input.session ? 'auto' : undefined);
  return truncation === undefined ? {} : { truncation };
}
