// Sums and costs of token usage, apart from the zod schemas in usage.ts so that workflow code keeps
// totals without zod.
import type { ModelPrice, Usage } from './usage.js';

/** Usage of nothing: the starting point for totals. */
export const emptyUsage: Usage = Object.freeze({
  inputTokens: 0,
  cachedInputTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  totalTokens: 0,
});

/** Sum of two usages. Pure, so the workflow can keep totals deterministically. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

/** What `usage` cost at `price`, in US dollars. Reasoning tokens are billed as output tokens, which include them. */
export function usageCost(usage: Usage, price: ModelPrice): number {
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const dollars =
    (usage.inputTokens - cached) * price.input +
    cached * (price.cachedInput ?? price.input) +
    usage.outputTokens * price.output;
  return dollars / 1_000_000;
}
