// One measured run of a scenario on one side: the warm-up (excluded), the
// measured run, the statements counted around it, the figures, and the line
// printed for it.
import type autocannon from 'autocannon';
import type { BenchContext } from './context';
import { type Figures, figuresOf } from './figures';
import { fire } from './load';
import type { BenchOptions } from './options';
import type { Server } from './processes';
import { log, timer } from './progress';
import { settledCount, statementCount } from './requests';
import type { Target } from './seed';

/** What a scenario sends: the method, the headers of each side, how each request is built, what each response says. */
export interface RunSpec {
  method?: 'GET' | 'POST' | 'DELETE';
  headers: (kind: Target) => Record<string, string>;
  setupRequest?: (kind: Target, phase: 'warm' | 'measured') => (req: autocannon.Request) => autocannon.Request;
  onResponse?: (status: number, body: string) => void;
}

/** Timed runs (seconds, after a warm-up) or fixed amounts of requests (after a warm-up amount). */
export interface LoadShape {
  duration?: number;
  warmup?: number;
  amount?: number;
  warmAmount?: number;
  connections: number;
}

/** Another server measured in a side's place (the peers, the sweeper's instance). */
export interface Elsewhere {
  target: Server;
  countStatements: boolean;
}

/** The timed runs of the lookups (and of the sweeper scenario). */
export const timedLoad = (options: BenchOptions): LoadShape => ({ duration: options.duration, warmup: options.warmup, connections: options.connections });

/** " [round 2/3]" in labels, when there are rounds. */
export const roundTag = (r: number, rounds: number) => (rounds > 1 ? ` [round ${r + 1}/${rounds}]` : '');

/**
 * Warm-up (excluded), then the measured run, counting statements around
 * it (unless `on` says otherwise: another instance of the service, whose
 * background work never lets the count settle).
 */
export async function measure(ctx: BenchContext, kind: Target, label: string, spec: RunSpec, load: LoadShape, on?: Elsewhere): Promise<Figures> {
  const target = on?.target ?? ctx.servers[kind];
  const counting = on?.countStatements ?? true;
  const base = {
    url: target.url,
    pid: target.pid,
    method: spec.method ?? 'GET',
    headers: spec.headers(kind),
    connections: load.connections,
    pipelining: ctx.options.pipelining,
    ...(spec.onResponse ? { onResponse: spec.onResponse } : {}),
  } as const;
  let peakRss: number | null = null;
  const warmup = load.amount !== undefined ? (load.warmAmount ? { amount: load.warmAmount } : null) : load.warmup ? { duration: load.warmup } : null;
  if (warmup) {
    const w = await fire({ ...base, ...warmup, ...(spec.setupRequest ? { setupRequest: spec.setupRequest(kind, 'warm') } : {}) });
    peakRss = w.peakRss;
  }
  const before = counting ? await statementCount(target, kind) : null;
  const bar = timer(`${label} (${kind})`, load.duration ?? 0);
  const result = await fire({
    ...base,
    ...(load.amount !== undefined ? { amount: load.amount } : { duration: load.duration! }),
    ...(spec.setupRequest ? { setupRequest: spec.setupRequest(kind, 'measured') } : {}),
  }).finally(() => bar.stop());
  // Requests still in flight when a timed run ends are abandoned by the
  // client but still run on the server: wait until its counter settles,
  // then divide by the requests sent (answered or abandoned).
  const after = counting ? await settledCount(target, kind) : null;
  peakRss = Math.max(peakRss ?? 0, result.peakRss ?? 0) || null;
  const f = figuresOf(result, before !== null && after !== null ? after - before : null, peakRss);
  f.sent = result.sent;
  if (f.non2xx > 0 || f.errors > 0) {
    ctx.warn(`${label} (${on?.target.name ?? kind}): ${f.non2xx} non-2xx responses ${JSON.stringify(f.statusCounts)}, ${f.errors} errors`);
  }
  log(
    `  ${label} (${on?.target.name ?? kind}): ${f.reqPerSec} req/s, p50 ${f.p50} ms, p99 ${f.p99} ms, ` +
      `${f.cpuMsPerRequest ?? '?'} ms CPU/request, ${f.statementsPerRequest ?? '?'} statements/request, ${f.requests} requests, RSS ≤ ${f.peakRssMb} MB`,
  );
  return f;
}
