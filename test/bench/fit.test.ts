import { describe, expect, it } from 'vitest';
import { firstReaching, fitGrowth } from '../../bench/support/fit.js';

describe('fitGrowth', () => {
  it('keeps a history that grows faster each turn quadratic', () => {
    const curve = fitGrowth([1, 2, 3, 4, 5].map((x) => [x, 10 + 5 * x + 2 * x * x] as const));
    expect(curve.map((value) => Math.round(value * 1000) / 1000)).toEqual([10, 5, 2]);
    expect(firstReaching(curve, 10 + 5 * 10 + 2 * 100)).toBe(10);
  });

  it('takes a line through noisy growth that would bend down, so the limit is still reached', () => {
    // Per-turn growth of 20, 22, 18, 19: a quadratic through it bends down and never reaches 50,000.
    const points = [
      [1, 100],
      [2, 120],
      [3, 142],
      [4, 160],
      [5, 179],
    ] as const;
    const curve = fitGrowth(points);
    expect(curve[2]).toBe(0);
    expect(curve[1]).toBeCloseTo(19.8, 5);
    const turn = firstReaching(curve, 50_000)!;
    expect(turn).toBeGreaterThan(2_500);
    expect(turn).toBeLessThan(2_600);
  });
});
