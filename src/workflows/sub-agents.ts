import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentProfile } from '../contract/agent-profile.js';
import {
  AGENT_RUN_WORKFLOW,
  MAX_SUB_AGENT_CALLS_PER_TURN,
  MAX_SUB_AGENT_DEPTH,
  MAX_SUB_AGENT_TASK_CHARS,
} from '../contract/defaults.js';
import type { Observation, ObservationError } from '../contract/observation.js';
import type { RunInput, RunInputArgs } from '../contract/run-input.js';
import { shorten } from '../contract/text.js';
import type { ToolCall } from '../contract/tool-call.js';
import type { ToolInfo } from '../contract/tool-info.js';
import type { Usage } from '../contract/usage.js';
import { check } from './check.js';
import { CHILD_ENDING } from './input-plans.js';
import type { ChildEnding } from './schemas.js';

/**
 * The sub-agents a run offers as tools: its agent's, unless the run is nested as deep as allowed.
 * Their calls never reach a worker's executor: the run starts each as a child run.
 */
export function subAgentTools(agent: AgentProfile | undefined, input: RunInput): ToolInfo[] {
  if ((input.subAgentDepth ?? 0) >= MAX_SUB_AGENT_DEPTH) return [];
  return (agent?.subAgents ?? []).map(({ name, description }) => ({
    name,
    description,
    // Not read-only: its agent's tools may write (an eval's replay must not run it as harmless).
    // With parallel calls, sub-agent calls of a turn run side by side all the same (`tool-round`).
    readOnly: false,
    timeoutSeconds: 0,
    subAgent: true,
  }));
}

/** What running sub-agents needs from the run. */
export interface SubAgentRound {
  input: RunInput;
  turn: number;
  /** Characters of the answer the model sees, as for any tool's output. */
  outputCharLimit: number;
  /** Tokens the run may still spend, when it has a token budget: the turn's children share them. */
  tokensLeft(): number | undefined;
  /** The run keeps its conversation itself (`stateless`, zero data retention): so do its children. */
  stateless: boolean;
  /** Adds what a child spent to the run's totals (and so to its budgets). */
  spent(usage: Usage, costUsd: number | undefined): void;
}

/**
 * The sub-agent calls of a turn that may start: the first {@link MAX_SUB_AGENT_CALLS_PER_TURN}. The
 * others are answered with an observation that says so.
 */
export function startableSubAgentCalls(
  calls: readonly ToolCall[],
  tools: ReadonlyMap<string, ToolInfo>,
): ReadonlySet<ToolCall> {
  return new Set(
    calls.filter((call) => tools.get(call.name)?.subAgent === true).slice(0, MAX_SUB_AGENT_CALLS_PER_TURN),
  );
}

/**
 * Runs one sub-agent call: the agent as a child `agentRun` (id `<run id>.<turn>.<agent>.<n>`,
 * cancelled with this run, its usage added to this run's), with the task the model gave. Its answer
 * (the output when it declares one) is the observation; a run that did not complete is a failed one.
 */
export async function runSubAgent(
  call: ToolCall,
  index: number,
  startable: ReadonlySet<ToolCall>,
  round: SubAgentRound,
): Promise<Observation> {
  const failed = (error: ObservationError, message: string): Observation => ({
    callId: call.callId,
    ok: false,
    error,
    message,
  });
  if (!startable.has(call))
    return failed(
      'not_executed',
      `At most ${MAX_SUB_AGENT_CALLS_PER_TURN} sub-agents start in one turn; this call was not run. Call it again next turn.`,
    );
  const task = taskOf(call.argumentsJson);
  if (task === undefined)
    return failed(
      'invalid_arguments',
      `A sub-agent takes {"task": "<what to do>"}, a non-empty task of at most ${MAX_SUB_AGENT_TASK_CHARS} characters.`,
    );
  // The turn's children share what is left: none may spend it all while its siblings spend too.
  const left = round.tokensLeft();
  const tokens = left === undefined ? undefined : Math.floor(left / startable.size);
  if (tokens !== undefined && tokens < 1)
    return failed('not_executed', "The run's token budget is spent; the sub-agent was not started.");
  // The child's own budgets still apply where they are tighter (see `applyAgent`).
  const input: RunInputArgs = {
    agent: call.name,
    task,
    subAgentDepth: (round.input.subAgentDepth ?? 0) + 1,
    ...(tokens !== undefined ? { maxTotalTokens: tokens } : {}),
    ...(round.stateless ? { conversation: 'stateless' as const } : {}),
  };
  const parent = workflowInfo().workflowId;
  let ending: ChildEnding | undefined;
  let failure: string | undefined;
  try {
    const result: unknown = await executeChild(AGENT_RUN_WORKFLOW, {
      workflowId: `${parent}.${round.turn}.${call.name}.${index + 1}`,
      args: [input],
      // Cancelled with this run, and this run waits until it has ended; never outlives it.
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      parentClosePolicy: ParentClosePolicy.TERMINATE,
      staticSummary: shorten(`sub-agent ${call.name} of ${parent}: ${task.split('\n')[0]!}`, 200),
    });
    ending = readEnding(result);
  } catch (error) {
    // This run was cancelled: so were its children. A child cancelled alone is its parent's news.
    if (isCancellation(error) && CancellationScope.current().consideredCancelled) throw error;
    if (isCancellation(error))
      return failed('tool_error', `Sub-agent ${call.name} was cancelled before it answered.`);
    const cause = error instanceof ChildWorkflowFailure ? error.cause : error;
    ending = cause instanceof ApplicationFailure ? readEnding(cause.details?.[0]) : undefined;
    if (ending === undefined)
      failure = cause instanceof Error ? `${cause.name}: ${cause.message}` : 'it failed without a result';
  }
  if (ending === undefined)
    return failed('tool_error', `Sub-agent ${call.name} failed: ${shorten(failure ?? 'no result', 2000)}`);
  round.spent(ending.usage, ending.costUsd);
  if (ending.status !== 'completed')
    return failed(
      'tool_error',
      `Sub-agent ${call.name} ended ${ending.status}` +
        (ending.reason !== undefined ? `: ${shorten(ending.reason, 2000)}` : '') +
        (ending.lastText ? `. Its last words: ${shorten(ending.lastText, 2000)}` : ''),
    );
  const answer = ending.output !== undefined ? JSON.stringify(ending.output) : (ending.finalText ?? '');
  return {
    callId: call.callId,
    ok: true,
    output:
      answer.length > round.outputCharLimit
        ? `${answer.slice(0, round.outputCharLimit)}\n[… the sub-agent's answer was cut at ${round.outputCharLimit} of ${answer.length} characters]`
        : answer,
  };
}

function readEnding(value: unknown): ChildEnding | undefined {
  const parsed = check<ChildEnding>(CHILD_ENDING, value);
  return parsed.success ? parsed.data : undefined;
}

/** The task of a sub-agent call's arguments, when they are `{"task": "<non-empty>"}`. */
function taskOf(argumentsJson: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(argumentsJson);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { task } = parsed as { task?: unknown };
  if (typeof task !== 'string' || task.trim() === '' || task.length > MAX_SUB_AGENT_TASK_CHARS)
    return undefined;
  return task;
}
