// The soak: the REST lookup at a share (default 70%) of its measured peak for
// --soak seconds, sampling the service's resident memory, to show whether it
// grows after the first minute.
import type { BenchContext } from './context';
import { mb } from './figures';
import { type LoadResult, fire } from './load';
import { log, timer } from './progress';
import { restLookupSpec } from './scenarios/lookups';
import type { Scenario } from './scenarios/scenario';

export interface Soak {
  seconds: number;
  /** Requested rate: soakShare of the REST lookup's measured req/s. */
  rate: number;
  achieved: LoadResult;
  /** The sample taken as "minute 1": at 60 s, or at a fifth of a shorter soak. */
  referenceAtS: number;
  /** When the reference sample was actually taken. */
  referenceSampleAtS: number;
  rssAtReferenceMb: number;
  rssAtEndMb: number;
  maxRssMb: number;
  growthPct: number;
  samples: { t: number; rssMb: number }[];
}

/** `rest`: the REST lookup scenario, whose service req/s sets the rate. */
export async function runSoak(ctx: BenchContext, rest: Scenario): Promise<Soak> {
  const { options } = ctx;
  const service = ctx.servers.service;
  const rate = Math.max(1, Math.round(rest.service.reqPerSec * options.soakShare));
  const sampleMs = Math.min(5_000, Math.max(250, (options.soak * 1000) / 10));
  const referenceAtS = Math.min(60, options.soak / 5);
  log(`soak: REST lookup at ${rate} req/s (${options.soakShare * 100}% of ${rest.service.reqPerSec}) for ${options.soak} s, RSS every ${sampleMs / 1000} s`);
  const samples: { t: number; rssMb: number }[] = [];
  const bar = timer('soak', options.soak);
  const achieved = await fire({
    url: service.url,
    pid: service.pid,
    headers: ctx.withToken('service'),
    connections: options.connections,
    pipelining: options.pipelining,
    duration: options.soak,
    overallRate: rate,
    setupRequest: restLookupSpec(ctx).setupRequest!('service', 'measured'),
    sampleMs,
    onSample: (elapsed, rss) => samples.push({ t: Math.round(elapsed * 10) / 10, rssMb: mb(rss)! }),
  }).finally(() => bar.stop());
  const reference = samples.find((s) => s.t >= referenceAtS) ?? samples[0]!;
  const end = samples[samples.length - 1]!;
  const maxRssMb = Math.max(...samples.map((s) => s.rssMb));
  const soak: Soak = {
    seconds: options.soak,
    rate,
    achieved,
    referenceAtS,
    referenceSampleAtS: reference.t,
    rssAtReferenceMb: reference.rssMb,
    rssAtEndMb: end.rssMb,
    maxRssMb,
    growthPct: Math.round(((end.rssMb - reference.rssMb) / reference.rssMb) * 1000) / 10,
    samples,
  };
  if (achieved.non2xx > 0 || achieved.errors > 0) ctx.warn(`soak: ${achieved.non2xx} non-2xx responses, ${achieved.errors} errors`);
  log(
    `soak: ${achieved.reqPerSec} req/s achieved, p50 ${achieved.p50} ms, p99 ${achieved.p99} ms; ` +
      `RSS ${soak.rssAtReferenceMb} MB at ${reference.t} s → ${soak.rssAtEndMb} MB at ${end.t} s (${soak.growthPct}%), max ${maxRssMb} MB`,
  );
  return soak;
}
