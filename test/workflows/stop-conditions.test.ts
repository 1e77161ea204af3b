import { describe, expect, it } from 'vitest';
import type { RunState } from '../../src/contract/run-state.js';
import { emptyUsage } from '../../src/contract/usage.js';
import {
  anyOf,
  budgetConditions,
  costBudget,
  timeBudget,
  tokenBudget,
  turnLimit,
} from '../../src/workflows/stop-conditions.js';

function state(overrides: Partial<RunState>): RunState {
  return {
    phase: 'thinking',
    turn: 1,
    maxTurns: 10,
    model: 'm',
    pendingCalls: [],
    toolCalls: 0,
    usage: emptyUsage,
    usageByTurn: [],
    costUsd: null,
    pendingApprovals: [],
    queuedMessages: 0,
    lastAnswer: null,
    answers: 0,
    continuedAsNew: 0,
    lastResponseId: null,
    events: [],
    result: null,
    ...overrides,
  };
}

const tokens = (totalTokens: number) => ({ ...emptyUsage, totalTokens });

describe('stop conditions', () => {
  it('each stop at their limit, not before', () => {
    expect(turnLimit(3)({ state: state({ turn: 2 }), outOfTime: false })).toBeUndefined();
    expect(turnLimit(3)({ state: state({ turn: 3 }), outOfTime: false })).toBe('max_turns');
    expect(tokenBudget(100)({ state: state({ usage: tokens(99) }), outOfTime: false })).toBeUndefined();
    expect(tokenBudget(100)({ state: state({ usage: tokens(100) }), outOfTime: false })).toBe('max_tokens');
    expect(costBudget(0.5)({ state: state({ costUsd: null }), outOfTime: false })).toBeUndefined();
    expect(costBudget(0.5)({ state: state({ costUsd: 0.5 }), outOfTime: false })).toBe('max_cost');
    expect(timeBudget({ state: state({}), outOfTime: false })).toBeUndefined();
    expect(timeBudget({ state: state({}), outOfTime: true })).toBe('max_time');
  });

  it('compose: the first that stops decides the status, so time beats tokens beats cost beats turns', () => {
    const budgets = budgetConditions({ maxTotalTokens: 10, maxDurationSeconds: 60, maxCostUsd: 1 });
    const stop = anyOf([anyOf(budgets), turnLimit(1)]);
    const spent = state({ turn: 1, usage: tokens(10), costUsd: 2 });
    expect(stop({ state: spent, outOfTime: true })).toBe('max_time');
    expect(stop({ state: spent, outOfTime: false })).toBe('max_tokens');
    expect(stop({ state: { ...spent, usage: tokens(1) }, outOfTime: false })).toBe('max_cost');
    expect(stop({ state: { ...spent, usage: tokens(1), costUsd: 0 }, outOfTime: false })).toBe('max_turns');
    expect(anyOf([])({ state: spent, outOfTime: true })).toBeUndefined();
  });

  it('check only the budgets a run has', () => {
    const none = anyOf(budgetConditions({}));
    expect(none({ state: state({ usage: tokens(1e9), costUsd: 1e9 }), outOfTime: true })).toBeUndefined();
  });
});
