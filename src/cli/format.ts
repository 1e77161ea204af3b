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
  if (state.pendingCalls.length > 0)
    lines.push(`  running: ${state.pendingCalls.map((call) => call.name).join(', ')}`);
  return lines;
}

/** The end of a run, for people. */
export function formatResult(result: RunResult): string[] {
  const summary = `${result.turns} turns · ${result.toolCalls} tool calls · ${result.usage.totalTokens} tokens`;
  switch (result.status) {
    case 'completed':
      return [`✔ completed (${summary})`, '', result.finalText];
    case 'max_turns':
      return [`■ stopped at the turn limit (${summary})`, ...(result.lastText ? ['', result.lastText] : [])];
    case 'incomplete':
      return [`■ the model's answer was cut off: ${result.reason} (${summary})`, '', result.partialText];
    case 'failed':
      return [`✘ failed: ${result.reason} [${result.errorType}] (${summary})`];
  }
}
