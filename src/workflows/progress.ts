import type { AgentStamp } from '../contract/agent-profile.js';
import type { Observation } from '../contract/observation.js';
import { shorten } from '../contract/text.js';
import { RUN_EVENTS_KEPT } from '../contract/defaults.js';
import type { RunEvent, RunState } from '../contract/run-state.js';
import type { ModelTurn } from '../contract/model-turn.js';
import type { ToolCall } from '../contract/tool-call.js';
import { toolCallSummary } from './tool-summary.js';

const PREVIEW = 160;

/** Text shortened to one line of at most `length` characters. */
export function preview(text: string, length = PREVIEW): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return shorten(line, length);
}

/** Appends an event (numbered after the last one) and forgets the oldest beyond the kept number. */
function append(
  state: RunState,
  event: RunEvent extends infer E ? (E extends RunEvent ? Omit<E, 'seq'> : never) : never,
): void {
  const seq = (state.events.at(-1)?.seq ?? -1) + 1;
  state.events.push({ ...event, seq });
  if (state.events.length > RUN_EVENTS_KEPT) state.events.splice(0, state.events.length - RUN_EVENTS_KEPT);
}

/** Records a finished model turn. */
export function recordTurn(state: RunState, turn: ModelTurn, agent?: AgentStamp): void {
  append(state, {
    kind: 'turn',
    turn: state.turn,
    usage: turn.usage,
    text: preview(turn.text),
    calls: turn.toolCalls.map((call: ToolCall) => ({
      callId: call.callId,
      name: call.name,
      summary: toolCallSummary(call),
    })),
    ...(agent !== undefined ? { agent } : {}),
  });
}

/** Records the observation of one call. */
export function recordObservation(state: RunState, call: ToolCall, observation: Observation): void {
  append(state, {
    kind: 'observation',
    turn: state.turn,
    callId: call.callId,
    name: call.name,
    ok: observation.ok,
    ...(observation.ok ? {} : { error: observation.error }),
    preview: preview(observation.ok ? observation.output : observation.message),
  });
}

/** Records a user message as the model receives it, in the turn that is starting. */
export function recordMessage(state: RunState, text: string): void {
  append(state, { kind: 'message', turn: state.turn, text: preview(text) });
}

/** Records that a call waits for approval, or how it was decided. */
export function recordApproval(
  state: RunState,
  call: ToolCall,
  decision: 'requested' | 'approved' | 'edited' | 'rejected' | 'timed_out',
  detail: string,
): void {
  append(state, {
    kind: 'approval',
    turn: state.turn,
    callId: call.callId,
    name: call.name,
    decision,
    detail: preview(detail, 500),
  });
}

/** Records a signal the run refused, so it does not vanish: the sender finds the reason in the state. */
export function recordRefusal(state: RunState, signal: string, reason: string): void {
  append(state, {
    kind: 'refused',
    turn: state.turn,
    signal: preview(signal, 100),
    reason: preview(reason, 500),
  });
}

/** Characters of the task the current details show: its first line, as a summary would. */
const TASK_PREVIEW = 200;

/**
 * What the Temporal UI shows as the run's current details (markdown): phase, turn, what the run was
 * asked to do (so a run that another client started without a summary still says it), the last tool
 * call and its outcome, tokens. Built from the state and the task only, so it is deterministic.
 */
export function currentDetails(state: RunState, task: string): string {
  const lines = [
    `**${phaseLabel(state)}** · turn ${state.turn} of ${state.maxTurns} · model ${state.model ?? '…'}` +
      (state.agent !== undefined ? ` · agent ${state.agent.name} (version ${state.agent.version})` : ''),
    `Task: ${preview(task.trim().split('\n', 1)[0] ?? '', TASK_PREVIEW)}`,
  ];
  if (state.modelAttempt !== undefined) {
    const { turn, attempt, maxAttempts, reason } = state.modelAttempt;
    const of = maxAttempts !== null ? ` of ${maxAttempts}` : '';
    lines.push(`**Trying turn ${turn} again** (attempt ${attempt}${of}): the last attempt ${reason}`);
  }
  const lastCall = lastEvent(state.events, 'observation');
  if (lastCall !== undefined) {
    lines.push(`Last tool: \`${lastCall.name}\` → ${lastCall.ok ? 'ok' : (lastCall.error ?? 'error')}`);
  }
  const lastRefused = lastEvent(state.events, 'refused');
  // Only while it is news: the state keeps every refusal, the details the one of this turn.
  if (lastRefused !== undefined && lastRefused.turn === state.turn) {
    lines.push(`Last refused signal: \`${lastRefused.signal}\` (${lastRefused.reason})`);
  }
  for (const pending of state.pendingApprovals) {
    lines.push(
      `**Waiting for approval:** \`${pending.name}\` ${pending.argumentsPreview}\n` +
        `call \`${pending.callId}\` · \`keel approve <run> ${pending.callId}\` or \`keel reject <run> ${pending.callId}\``,
    );
  }
  const waiting = new Set(state.pendingApprovals.map((pending) => pending.callId));
  const running = state.pendingCalls.filter((call) => !waiting.has(call.callId));
  if (running.length > 0) lines.push(`Running: ${running.map((call) => `\`${call.name}\``).join(', ')}`);
  if (state.phase === 'idle') lines.push('Idle: waiting for a message (`keel send <run> "…"`)');
  if (state.queuedMessages > 0) lines.push(`Messages waiting for the next turn: ${state.queuedMessages}`);
  const { totalTokens, inputTokens, outputTokens } = state.usage;
  const cost = state.costUsd !== null ? ` · cost $${state.costUsd.toFixed(4)}` : '';
  lines.push(
    `Tokens: ${totalTokens} (in ${inputTokens}, out ${outputTokens}) · tool calls: ${state.toolCalls}${cost}`,
  );
  return lines.join('\n\n');
}

// Searched from the end without copying: the details are rebuilt several times a turn, over up to
// RUN_EVENTS_KEPT events.
function lastEvent<K extends RunEvent['kind']>(
  events: readonly RunEvent[],
  kind: K,
): Extract<RunEvent, { kind: K }> | undefined {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!;
    if (event.kind === kind) return event as Extract<RunEvent, { kind: K }>;
  }
  return undefined;
}

function phaseLabel(state: RunState): string {
  if (state.result !== null) return state.result.status.replace('_', ' ');
  return state.phase.replace('_', ' ');
}
