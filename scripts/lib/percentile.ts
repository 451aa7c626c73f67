// The percentile of every figure the tooling reports: the benchmarks'
// latencies (bench/), the scale proofs' phases (scripts/scale/) and the
// reliability tests' figures (test/). One definition, so that a p99 means
// the same thing in BENCHMARKS.md, SCALING.md and RELIABILITY.md.

/**
 * The nearest-rank percentile: the smallest value with at least p% of the
 * values at or below it (p = 100: the largest). NaN when there are none: no
 * figure, rather than a 0 that reads as one.
 */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return percentileOfSorted(sorted, p);
}

/** percentile() of values already sorted ascending (a run's latencies, sorted once for every percentile taken). */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}
