import type { RunResult } from '../contract/run-result.js';
import type { RunEvent, RunState } from '../contract/run-state.js';

/** One line per run event, for people. */
export function formatEvent(event: RunEvent): string[] {
  if (event.kind === 'turn') {
    const lines = [
      `▸ turn ${event.turn} · ${event.usage.totalTokens} tokens${event.text ? ` · ${event.text}` : ''}`,
    ];
    for (const call of event.calls) lines.push(`  → ${call.summary}`);
    return lines;
  }
  if (event.kind === 'message') return [`✉ message for turn ${event.turn}: ${event.text}`];
  if (event.kind === 'approval') {
    if (event.decision === 'requested') {
      return [`  ⏸ ${event.name} waits for approval (call ${event.callId}): ${event.detail}`];
    }
    return [
      `  ${event.decision.replace('_', ' ')}: ${event.name}${event.detail ? ` · ${event.detail}` : ''}`,
    ];
  }
  if (event.kind === 'refused') return [`  ⚠ refused signal ${event.signal}: ${event.reason}`];
  const outcome = event.ok ? '✓' : `✗ ${event.error ?? 'error'}`;
  return [`  ${outcome} ${event.name}${event.preview ? `: ${event.preview}` : ''}`];
}

/** A short status block for `keel status`. */
export function formatState(runId: string, state: RunState): string[] {
  const lines = [
    `run ${runId}`,
    `  ${state.result?.status ?? state.phase} · turn ${state.turn} of ${state.maxTurns} · model ${state.model ?? '?'}`,
    `  tokens ${state.usage.totalTokens} (in ${state.usage.inputTokens}, out ${state.usage.outputTokens}) · tool calls ${state.toolCalls}`,
  ];
  if (state.costUsd !== null) lines.push(`  cost $${state.costUsd.toFixed(4)}`);
  const waiting = new Set(state.pendingApprovals.map((pending) => pending.callId));
  const running = state.pendingCalls.filter((call) => !waiting.has(call.callId));
  if (running.length > 0) lines.push(`  running: ${running.map((call) => call.name).join(', ')}`);
  for (const pending of state.pendingApprovals) {
    lines.push(`  waiting for approval: ${pending.name} ${pending.argumentsPreview}`);
    lines.push(
      `    keel approve ${runId} ${pending.callId}   ·   keel reject ${runId} ${pending.callId} --reason "…"`,
    );
  }
  if (state.queuedMessages > 0) lines.push(`  messages waiting for the next turn: ${state.queuedMessages}`);
  if (state.phase === 'idle') lines.push(`  session idle: keel send ${runId} "…"`);
  return lines;
}

/** The end of a run, for people. */
export function formatResult(result: RunResult): string[] {
  const cost = result.costUsd !== undefined ? ` · $${result.costUsd.toFixed(4)}` : '';
  const summary = `${result.turns} turns · ${result.toolCalls} tool calls · ${result.usage.totalTokens} tokens${cost}`;
  const last = (text: string): string[] => (text ? ['', text] : []);
  switch (result.status) {
    case 'completed':
      return [`✔ completed (${summary})`, '', result.finalText];
    case 'max_turns':
      return [`■ stopped at the turn limit (${summary})`, ...last(result.lastText)];
    case 'max_tokens':
      return [`■ stopped: the token budget is spent (${summary})`, ...last(result.lastText)];
    case 'max_time':
      return [`■ stopped: the time budget ran out (${summary})`, ...last(result.lastText)];
    case 'max_cost':
      return [`■ stopped: the cost budget is spent (${summary})`, ...last(result.lastText)];
    case 'incomplete':
      return [`■ the model's answer was cut off: ${result.reason} (${summary})`, '', result.partialText];
    case 'failed':
      return [`✘ failed: ${result.reason} [${result.errorType}] (${summary})`];
  }
}
