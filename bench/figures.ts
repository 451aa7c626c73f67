// The figures of a measured run and how they combine: one run's figures from
// its load result, the median over rounds, ratios between two sides, and the
// spread of a ratio over rounds. Pure functions, no I/O.
import type { LoadResult } from './load';

/** A measured window's figures: the load's own (responses, latencies, statuses) and what the harness adds. */
export interface Figures extends Pick<
  LoadResult,
  'requests' | 'seconds' | 'reqPerSec' | 'p50' | 'p99' | 'mean' | 'max' | 'non2xx' | 'errors' | 'statusCounts'
> {
  /** Requests sent (statements per request divide by these). */
  sent?: number;
  /** SQL statements per request in the measured window (null: the target does not count them). */
  statementsPerRequest: number | null;
  /** Highest resident set sampled during the scenario (warm-up included), MB. */
  peakRssMb: number | null;
  /** Deletes: ids sent, and ids the responses list as SuccessfullyDeleted. */
  idsSent?: number;
  idsDeleted?: number;
  /** GraphQL: 200 responses carrying errors instead of the user. */
  badBodies?: number;
  /** The target's CPU time (user + system, /proc) per response in the measured window, ms. */
  cpuMsPerRequest: number | null;
}

export interface Round {
  service: Pick<Figures, 'reqPerSec' | 'p50' | 'p99' | 'cpuMsPerRequest'>;
  baseline: Pick<Figures, 'reqPerSec' | 'p50' | 'p99' | 'cpuMsPerRequest'>;
  ratios: { reqPerSec: number; p50: number; p99: number };
}

/** A ratio over rounds: the median of the rounds' ratios, and the lowest and highest. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  rounds: number[];
}

/** The median of the finite values (NaN when there are none). */
export const median = (values: number[]): number => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
export const round2 = (n: number) => Math.round(n * 100) / 100;
const finiteOrNull = (n: number) => (Number.isFinite(n) ? n : null);
export const mb = (bytes: number | null | undefined) => (bytes == null || Number.isNaN(bytes) ? null : Math.round((bytes / 1048576) * 10) / 10);
export const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? Math.round((a / b) * 1000) / 1000 : NaN);

export const spreadOf = (values: number[]): Spread => {
  const finite = values.filter((v) => Number.isFinite(v));
  return {
    median: Math.round(median(finite) * 1000) / 1000,
    min: finite.length ? Math.min(...finite) : NaN,
    max: finite.length ? Math.max(...finite) : NaN,
    rounds: values,
  };
};

/** One run's figures: statements (null: not counted) and the peak RSS (bytes) measured around it. */
export const figuresOf = (result: LoadResult, statements: number | null, peakRss: number | null): Figures => ({
  requests: result.requests,
  seconds: result.seconds,
  reqPerSec: result.reqPerSec,
  p50: result.p50,
  p99: result.p99,
  mean: result.mean,
  max: result.max,
  statementsPerRequest: statements === null || result.sent === 0 ? null : Math.round((statements / result.sent) * 1000) / 1000,
  non2xx: result.non2xx,
  errors: result.errors,
  statusCounts: result.statusCounts,
  peakRssMb: mb(peakRss),
  cpuMsPerRequest: result.cpuMs === null || result.requests === 0 ? null : Math.round((result.cpuMs / result.requests) * 10000) / 10000,
});

/**
 * One figure from several rounds: the median of each rate and latency, the
 * sums of what was counted, the highest RSS.
 */
export function medianFigures(all: Figures[]): Figures {
  if (all.length === 1) return all[0]!;
  const sum = (pick: (f: Figures) => number | undefined) => all.reduce((n, f) => n + (pick(f) ?? 0), 0);
  const statusCounts: Record<string, number> = {};
  for (const f of all) for (const [k, v] of Object.entries(f.statusCounts)) statusCounts[k] = (statusCounts[k] ?? 0) + v;
  const spr = all.map((f) => f.statementsPerRequest).filter((v): v is number => v !== null);
  const rss = all.map((f) => f.peakRssMb).filter((v): v is number => v !== null);
  return {
    requests: sum((f) => f.requests),
    sent: sum((f) => f.sent),
    seconds: round2(sum((f) => f.seconds)),
    reqPerSec: round2(median(all.map((f) => f.reqPerSec))),
    p50: median(all.map((f) => f.p50)),
    p99: median(all.map((f) => f.p99)),
    mean: round2(median(all.map((f) => f.mean))),
    max: Math.max(...all.map((f) => f.max)),
    statementsPerRequest: spr.length === all.length ? median(spr) : null,
    non2xx: sum((f) => f.non2xx),
    errors: sum((f) => f.errors),
    statusCounts,
    peakRssMb: rss.length > 0 ? Math.max(...rss) : null,
    cpuMsPerRequest: finiteOrNull(median(all.map((f) => f.cpuMsPerRequest ?? NaN))),
    ...(all.some((f) => f.badBodies !== undefined) ? { badBodies: sum((f) => f.badBodies) } : {}),
  };
}

/** A round: both sides measured back to back, and their ratios. */
export const roundOf = (svc: Figures, base: Figures): Round => ({
  service: { reqPerSec: svc.reqPerSec, p50: svc.p50, p99: svc.p99, cpuMsPerRequest: svc.cpuMsPerRequest },
  baseline: { reqPerSec: base.reqPerSec, p50: base.p50, p99: base.p99, cpuMsPerRequest: base.cpuMsPerRequest },
  ratios: { reqPerSec: ratio(svc.reqPerSec, base.reqPerSec), p50: ratio(svc.p50, base.p50), p99: ratio(svc.p99, base.p99) },
});
