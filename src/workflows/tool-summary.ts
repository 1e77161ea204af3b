import { shorten } from '../contract/text.js';
import type { ToolCall } from '../contract/tool-call.js';

const MAX_SUMMARY = 80;

/**
 * A one-line label for a tool call, for the Temporal UI: the tool name and its first short string
 * argument (`read_file src/index.ts`). Pure and deterministic.
 */
export function toolCallSummary(call: ToolCall): string {
  let detail = '';
  try {
    const parsed: unknown = JSON.parse(call.argumentsJson);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const first = Object.values(parsed).find((value): value is string => typeof value === 'string');
      if (first !== undefined) detail = ' ' + first.replace(/\s+/g, ' ');
    }
  } catch {
    detail = ' (invalid arguments)';
  }
  const summary = `${call.name}${detail}`;
  return shorten(summary, MAX_SUMMARY);
}
