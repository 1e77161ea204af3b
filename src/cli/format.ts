import type { RunResult } from '../contract/run-result.js';
import type { RunEvent, RunState } from '../contract/run-state.js';
import { plural, printable } from './terminal-text.js';

// Every string below that the model or a tool wrote goes through `printable`/`line` first: they are
// attacker-written and must not reach the terminal as escape sequences.
const line = (text: string): string => printable(text, { singleLine: true });

/** One line per run event, for people. */
export function formatEvent(event: RunEvent): string[] {
  if (event.kind === 'turn') {
    const lines = [
      `▸ turn ${event.turn} · ${plural(event.usage.totalTokens, 'token')}${event.text ? ` · ${line(event.text)}` : ''}`,
    ];
    for (const call of event.calls) lines.push(`  → ${line(call.summary)}`);
    return lines;
  }
  if (event.kind === 'message') return [`✉ message for turn ${event.turn}: ${line(event.text)}`];
  if (event.kind === 'approval') {
    if (event.decision === 'requested') {
      return [
        `  ⏸ ${line(event.name)} waits for approval (call ${line(event.callId)}): ${line(event.detail)}`,
      ];
    }
    return [
      `  ${event.decision.replace('_', ' ')}: ${line(event.name)}${event.detail ? ` · ${line(event.detail)}` : ''}`,
    ];
  }
  if (event.kind === 'refused') return [`  ⚠ refused signal ${line(event.signal)}: ${line(event.reason)}`];
  const outcome = event.ok ? '✓' : `✗ ${event.error ?? 'error'}`;
  return [`  ${outcome} ${line(event.name)}${event.preview ? `: ${line(event.preview)}` : ''}`];
}

/** A short status block for `keel status`. */
export function formatState(runId: string, state: RunState): string[] {
  const lines = [
    `run ${runId}`,
    `  ${state.result?.status ?? state.phase} · turn ${state.turn} of ${state.maxTurns} · model ${state.model ?? '?'}`,
    `  ${plural(state.usage.totalTokens, 'token')} (in ${state.usage.inputTokens}, out ${state.usage.outputTokens}) · ${plural(state.toolCalls, 'tool call')}`,
  ];
  if (state.costUsd !== null) lines.push(`  cost $${state.costUsd.toFixed(4)}`);
  const waiting = new Set(state.pendingApprovals.map((pending) => pending.callId));
  const running = state.pendingCalls.filter((call) => !waiting.has(call.callId));
  if (running.length > 0) lines.push(`  running: ${running.map((call) => line(call.name)).join(', ')}`);
  for (const pending of state.pendingApprovals) {
    lines.push(`  waiting for approval: ${line(pending.name)} ${line(pending.argumentsPreview)}`);
    lines.push(
      `    keel approve ${runId} ${line(pending.callId)}   ·   keel reject ${runId} ${line(pending.callId)} --reason "…"`,
    );
  }
  if (state.queuedMessages > 0) lines.push(`  messages waiting for the next turn: ${state.queuedMessages}`);
  if (state.phase === 'idle') lines.push(`  session idle: keel send ${runId} "…"`);
  return lines;
}

/** The end of a run, for people. */
export function formatResult(result: RunResult): string[] {
  const cost = result.costUsd !== undefined ? ` · $${result.costUsd.toFixed(4)}` : '';
  const summary = `${plural(result.turns, 'turn')} · ${plural(result.toolCalls, 'tool call')} · ${plural(result.usage.totalTokens, 'token')}${cost}`;
  const last = (text: string): string[] => (text ? ['', printable(text)] : []);
  switch (result.status) {
    case 'completed':
      return [`✔ completed (${summary})`, '', printable(result.finalText)];
    case 'max_turns':
      return [`■ stopped at the turn limit (${summary})`, ...last(result.lastText)];
    case 'max_tokens':
      return [`■ stopped: the token budget is spent (${summary})`, ...last(result.lastText)];
    case 'max_time':
      return [`■ stopped: the time budget ran out (${summary})`, ...last(result.lastText)];
    case 'max_cost':
      return [`■ stopped: the cost budget is spent (${summary})`, ...last(result.lastText)];
    case 'incomplete':
      return [
        `■ the model's answer was cut off: ${line(result.reason)} (${summary})`,
        '',
        printable(result.partialText),
      ];
    case 'failed':
      return [`✘ failed: ${line(result.reason)} [${result.errorType}] (${summary})`];
  }
}
