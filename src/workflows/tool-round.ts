import { condition } from '@temporalio/workflow';
import {
  DEFAULT_TOOL_TIMEOUT_SECONDS,
  TOOL_ACTIVITY_GRACE_SECONDS,
  TOOL_MAX_ATTEMPTS,
} from '../contract/defaults.js';
import type { Observation } from '../contract/observation.js';
import type { RunInput, RunLimits } from '../contract/run-input.js';
import type { RunState } from '../contract/run-state.js';
import type { ToolCall } from '../contract/tool-call.js';
import type { ToolInfo } from '../contract/tool-info.js';
import type { ApprovalRequired, ToolRequest } from '../contract/tool-request.js';
import type { Approvals } from './approvals.js';
import { keelActivities, keelLocalActivities } from './keel-activities.js';
import type { ActivityNames } from './keel-activities.js';
import { ownValue } from './own-value.js';
import { preview, recordApproval, recordObservation } from './progress.js';
import { Diverged } from './replay-calls.js';
import type { ReplayCalls, ReplayDecision } from './replay-calls.js';
import { runSubAgent, startableSubAgentCalls } from './sub-agents.js';
import type { SubAgentRound } from './sub-agents.js';
import { toolCallSummary } from './tool-summary.js';
import { isWorkspaceLost, workspaceLost, workspaceQueue } from './workspace-route.js';
import type { WorkspaceRoute } from './workspace-route.js';

/** What running one turn's calls needs from the loop. */
export interface ToolRound {
  tools: ReadonlyMap<string, ToolInfo>;
  input: RunInput;
  limits: RunLimits;
  state: RunState;
  approvals: Approvals;
  /** The names this execution schedules Keel's activities under. */
  names: ActivityNames;
  /** Where the run's workspace is, when calls must go to the worker holding it. */
  workspace: WorkspaceRoute | undefined;
  outOfTime(): boolean;
  publish(attributes?: { status?: string } | false): void;
  /** Hears each call's observation as soon as it is known (the run's stream). */
  observed?(call: ToolCall, observation: Observation): void;
  /** A replayed run's recorded answers: calls they answer run no activity. */
  replay?: ReplayCalls | undefined;
  /** How sub-agent calls run (see `runSubAgent`), in a run that offers sub-agents. */
  subAgents?: SubAgentRound | undefined;
  /** The agent's tool-call guardrails: the observation of a call they deny, else `undefined`. */
  guard?: ((call: ToolCall) => Promise<Observation | undefined>) | undefined;
}

/**
 * Runs the calls in the order the model emitted them and returns one observation per call, in that
 * order. With parallel calls allowed, consecutive read-only calls run together. A call that needs
 * approval waits for a person's decision first. In a replayed run, every call is decided first (see
 * `ReplayCalls.decide`): one the recording answers runs nothing and asks nobody, and a divergence
 * throws {@link Diverged} before any call of the turn runs.
 */
export async function runToolCalls(calls: readonly ToolCall[], round: ToolRound): Promise<Observation[]> {
  const { tools: byName, input, limits, state } = round;
  const allowedTools = [...byName.keys()];
  const decisions = new Map<ToolCall, ReplayDecision>();
  if (round.replay !== undefined) {
    for (const call of calls)
      decisions.set(call, round.replay.decide(call, byName, state.turn, input.approvalTools));
    for (const decision of decisions.values()) {
      if (decision.kind === 'diverge') throw new Diverged(decision.reason);
    }
  }
  const settle = (call: ToolCall, observation: Observation): Observation => {
    state.pendingCalls = state.pendingCalls.filter((pending) => pending.callId !== call.callId);
    recordObservation(state, call, observation);
    round.observed?.(call, observation);
    return observation;
  };
  const startable = startableSubAgentCalls(calls, byName);
  const run = async (call: ToolCall): Promise<Observation> => {
    const decision = decisions.get(call);
    if (decision?.kind === 'answer') return settle(call, decision.observation);
    // Checked before anything else: a denied call starts no sub-agent and asks nobody for approval.
    const denied = await round.guard?.(call);
    if (denied !== undefined) return settle(call, denied);
    if (byName.get(call.name)?.subAgent === true && round.subAgents !== undefined)
      return settle(call, await runSubAgent(call, calls.indexOf(call), startable, round.subAgents));
    // The model names the call: `toString` must not find a timeout on Object's prototype. No patch:
    // such a name only ever found a function, whose timeout failed the task, so no history has it.
    const override = input.toolTimeouts === undefined ? undefined : ownValue(input.toolTimeouts, call.name);
    const timeoutSeconds = override ?? byName.get(call.name)?.timeoutSeconds ?? DEFAULT_TOOL_TIMEOUT_SECONDS;
    const mode = approvalMode(call.name, byName, input);
    const retry = {
      // A tool attempt fails only when its worker is lost: once that is known, waiting helps nobody.
      initialInterval: TOOL_FIRST_RETRY,
      backoffCoefficient: 2,
      maximumInterval: '30s',
      maximumAttempts: TOOL_MAX_ATTEMPTS,
    };
    const startToCloseTimeout = `${timeoutSeconds + TOOL_ACTIVITY_GRACE_SECONDS}s` as const;
    const route = round.workspace;
    // A fast read-only tool may run as a local activity: no task round trip, no heartbeats needed.
    // Not where workspaces are pinned: the workflow's worker need not be the one holding it.
    const local = byName.get(call.name)?.local === true && mode === 'never' && route === undefined;
    const queue =
      route === undefined
        ? undefined
        : await workspaceQueue(route, round.names, limits.heartbeatTimeoutSeconds);
    const { executeTool } = local
      ? keelLocalActivities(round.names, {
          startToCloseTimeout,
          retry,
          summary: toolCallSummary(call),
        })
      : keelActivities(round.names, {
          startToCloseTimeout,
          heartbeatTimeout: `${limits.heartbeatTimeoutSeconds}s`,
          retry,
          summary: toolCallSummary(call),
          ...(queue !== undefined && route !== undefined
            ? { taskQueue: queue, scheduleToStartTimeout: `${route.failoverSeconds}s` }
            : {}),
        });
    const execute = (toRun: ToolCall, approval?: ToolRequest['approval']) =>
      executeTool({
        call: toRun,
        allowedTools,
        outputCharLimit: limits.observationCharLimit,
        ...(override !== undefined ? { timeoutSeconds: override } : {}),
        ...(approval !== undefined ? { approval } : {}),
      });
    let observation: Observation;
    try {
      if (mode === 'never') {
        observation = asObservation(await execute(call));
      } else {
        // The worker checks the arguments first (nobody is asked to approve a malformed call) and, for a
        // conditional tool, whether these arguments need approval at all.
        const checked = await execute(call, mode === 'always' ? 'require' : 'check');
        observation = 'approvalRequired' in checked ? await decideAndRun(call, round, execute) : checked;
      }
    } catch (error) {
      // The holder of the workspace is gone: the run goes on, and the model hears what was lost.
      if (route === undefined || queue === undefined || !isWorkspaceLost(error)) throw error;
      observation = workspaceLost(route, queue, call.callId);
    }
    return settle(call, observation);
  };
  const observations: Observation[] = [];
  for (let index = 0; index < calls.length;) {
    const batch = [calls[index] as ToolCall];
    // Read-only calls run side by side, and so do sub-agents, each a run of its own.
    const parallel = (call: ToolCall): boolean =>
      input.parallelToolCalls &&
      (byName.get(call.name)?.readOnly === true || byName.get(call.name)?.subAgent === true);
    if (parallel(batch[0] as ToolCall)) {
      while (index + batch.length < calls.length && parallel(calls[index + batch.length] as ToolCall)) {
        batch.push(calls[index + batch.length] as ToolCall);
      }
    }
    if (batch.some((call) => byName.get(call.name)?.subAgent === true)) {
      // Every child ends before the turn does: a cancelled run waits for all its children's ends.
      const settled = await Promise.allSettled(batch.map(run));
      const failure = settled.find((outcome) => outcome.status === 'rejected');
      if (failure !== undefined) throw failure.reason;
      observations.push(...settled.map((outcome) => (outcome as PromiseFulfilledResult<Observation>).value));
    } else observations.push(...(await Promise.all(batch.map(run))));
    index += batch.length;
  }
  return observations;
}

function approvalMode(
  name: string,
  tools: ReadonlyMap<string, ToolInfo>,
  input: RunInput,
): 'never' | 'always' | 'conditional' {
  if (input.approvalTools?.includes(name) === true) return 'always';
  return tools.get(name)?.approval ?? 'never';
}

/** Waits for a person's decision on `call`, then runs it as approved or answers the refusal. */
async function decideAndRun(
  call: ToolCall,
  round: ToolRound,
  execute: (call: ToolCall, approval: 'granted') => Promise<Observation | ApprovalRequired>,
): Promise<Observation> {
  const { state, input, approvals } = round;
  const argumentsPreview = preview(call.argumentsJson, APPROVAL_PREVIEW);
  recordApproval(state, call, 'requested', argumentsPreview);
  const timeout = input.approvalTimeoutSeconds;
  const decision = await approvals.request(
    { callId: call.callId, name: call.name, argumentsPreview, turn: state.turn },
    (decided) => {
      state.phase = 'awaiting_approval';
      round.publish({ status: 'awaiting_approval' });
      return timeout === undefined
        ? condition(() => decided() || round.outOfTime()).then(() => true)
        : condition(() => decided() || round.outOfTime(), `${timeout}s`);
    },
  );
  if (state.pendingApprovals.length === 0) {
    state.phase = 'acting';
    round.publish({ status: 'running' });
  }
  if (decision === undefined) {
    const message = round.outOfTime()
      ? "The run's time budget ran out while this call waited for approval, so it was not run."
      : `Nobody approved this call within ${timeout} seconds, so it was not run.`;
    recordApproval(state, call, 'timed_out', message);
    return { callId: call.callId, ok: false, error: 'approval_timeout', message };
  }
  if (!decision.approved) {
    recordApproval(state, call, 'rejected', decision.reason ?? '');
    return {
      callId: call.callId,
      ok: false,
      error: 'rejected',
      message:
        `A person reviewed this call and rejected it, so it was not run.` +
        (decision.reason !== undefined ? ` Their reason: ${decision.reason}` : ''),
    };
  }
  const edited = decision.argumentsJson;
  recordApproval(state, call, edited !== undefined ? 'edited' : 'approved', decision.note ?? '');
  const approvedCall = edited !== undefined ? { ...call, argumentsJson: edited } : call;
  const observation = asObservation(await execute(approvedCall, 'granted'));
  if (edited === undefined) return observation;
  const note =
    `A person approved this call with edited arguments: ${decision.argumentsJson}` +
    (decision.note !== undefined ? ` (${decision.note})` : '');
  return observation.ok
    ? { ...observation, output: `[${note}]\n${observation.output}` }
    : { ...observation, message: `[${note}] ${observation.message}` };
}

const APPROVAL_PREVIEW = 500;

/** Wait before a lost tool call's first retry. */
const TOOL_FIRST_RETRY = '200ms';

/** An `executeTool` answer that cannot ask for approval (none was asked about, or it was granted). */
function asObservation(result: Observation | ApprovalRequired): Observation {
  if (!('approvalRequired' in result)) return result;
  return {
    callId: result.callId,
    ok: false,
    error: 'tool_error',
    message: 'The worker asked for approval of a call that needs none or was approved; it was not run.',
  };
}
