// Population stability index between a training distribution and a window of production
// counts over the same bins: Σ (a − e) · ln(a / e). Empty bins are floored at a small share so
// one unseen bin reads as large drift rather than infinity. Rule of thumb in credit risk:
// < 0.1 stable, 0.1–0.25 moderate shift, > 0.25 significant.
export const PSI_FLOOR = 1e-4;

export function populationStabilityIndex(
  expected: readonly number[],
  counts: ArrayLike<number>,
  total: number,
): number {
  let psi = 0;
  for (let i = 0; i < expected.length; i++) {
    const e = Math.max(expected[i]!, PSI_FLOOR);
    const a = Math.max(counts[i]! / total, PSI_FLOOR);
    psi += (a - e) * Math.log(a / e);
  }
  return psi;
}

/** Index of the bin `value` falls in: edges are upper bounds, inclusive; NaN goes to the last bin. */
export function binOf(edges: ArrayLike<number>, value: number): number {
  let lo = 0;
  let hi = edges.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (value <= edges[mid]!) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
