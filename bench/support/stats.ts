/** Summary statistics of a sample, in the sample's unit. */
export interface Distribution {
  count: number;
  median: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
}

/** The value at percentile `p` (0–100) of an ascending sample, by linear interpolation. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = ((sorted.length - 1) * p) / 100;
  const below = Math.floor(position);
  const above = Math.min(sorted.length - 1, below + 1);
  const lower = sorted[below] ?? Number.NaN;
  const upper = sorted[above] ?? Number.NaN;
  return lower + (upper - lower) * (position - below);
}

/** Median, p95, mean and range of `values`, rounded to `digits` decimals. */
export function distribution(values: readonly number[], digits = 2): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    count: sorted.length,
    median: round(percentile(sorted, 50), digits),
    p95: round(percentile(sorted, 95), digits),
    mean: round(sorted.length === 0 ? Number.NaN : sum / sorted.length, digits),
    min: round(sorted[0] ?? Number.NaN, digits),
    max: round(sorted[sorted.length - 1] ?? Number.NaN, digits),
  };
}

/** `value` rounded to `digits` decimals. */
export function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** `numerator / denominator`, rounded; NaN when the denominator is 0. */
export function ratio(numerator: number, denominator: number, digits = 2): number {
  return denominator === 0 ? Number.NaN : round(numerator / denominator, digits);
}
