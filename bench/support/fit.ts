/** A polynomial `c0 + c1·x + c2·x²`, by coefficient. */
export type Quadratic = [number, number, number];

/** Least-squares quadratic through the points (a line when the points are collinear, c2 ≈ 0). */
export function fitQuadratic(points: ReadonlyArray<readonly [number, number]>): Quadratic {
  // Normal equations: sums of x^k (k = 0..4) and of y·x^k (k = 0..2).
  const power = (k: number): number => points.reduce((sum, [x]) => sum + x ** k, 0);
  const moment = (k: number): number => points.reduce((sum, [x, y]) => sum + y * x ** k, 0);
  const matrix = [
    [power(0), power(1), power(2), moment(0)],
    [power(1), power(2), power(3), moment(1)],
    [power(2), power(3), power(4), moment(2)],
  ];
  for (let column = 0; column < 3; column++) {
    const pivot = matrix[column]![column]!;
    for (let row = 0; row < 3; row++) {
      if (row === column) continue;
      const factor = matrix[row]![column]! / pivot;
      for (let cell = column; cell < 4; cell++) matrix[row]![cell]! -= factor * matrix[column]![cell]!;
    }
  }
  return [0, 1, 2].map((row) => matrix[row]![3]! / matrix[row]![row]!) as Quadratic;
}

/** The first whole x ≥ 1 at which the fitted curve reaches `limit` (searching up to `maximum`). */
export function firstReaching(curve: Quadratic, limit: number, maximum = 1_000_000): number | undefined {
  const value = (x: number): number => curve[0] + curve[1] * x + curve[2] * x * x;
  if (value(maximum) < limit) return undefined;
  let low = 1;
  let high = maximum;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (value(middle) >= limit) high = middle;
    else low = middle + 1;
  }
  return low;
}

/**
 * The growth of a history by turn: the quadratic fit, or a straight line when that bends down. A
 * history never shrinks, so a fit that bends down is noise (a few short turns, workflow tasks that
 * vary with the model's pace) and would never reach any limit.
 */
export function fitGrowth(points: ReadonlyArray<readonly [number, number]>): Quadratic {
  const curve = fitQuadratic(points);
  if (curve[2] >= 0 || points.length < 2) return curve;
  const n = points.length;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const spread = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  const slope =
    spread === 0 ? 0 : points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0) / spread;
  return [meanY - slope * meanX, slope, 0];
}
