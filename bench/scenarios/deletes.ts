// Deletes of messages, for me and for everyone, 1, 100 and 1,000 ids a
// request: fixed request counts, fresh ids for every request (each side and
// scenario has its own seeded pool), the ids reported deleted checked. In
// rounds like the timed scenarios: each round measures both sides back to
// back on its own share of the pool, the order reversed every other round, and
// the ratio is the median of the rounds' (one round of 18 requests, the only
// figure before, measured 0.16 and 0.75 for the same code on two runs).
import type { BenchContext } from '../context';
import { type Figures, medianFigures, roundOf } from '../figures';
import { type RunSpec, measure, roundTag } from '../measure';
import { log } from '../progress';
import { DELETE_SIZES, type DeleteMode, type DeletePlan, type DeletePool, type DeleteSize, type Target } from '../seed';
import { type Scenario, scenarioOf } from './scenario';

/** Ids sent and ids reported deleted in the measured run; bodies that were not JSON, warm-up included. */
interface Tally {
  sent: number;
  deleted: number;
  malformed: number;
}

/** Round r's share of the measured requests (the warm-up belongs to the first round). */
function roundShare<T>(measured: T[], r: number, rounds: number): T[] {
  const per = Math.floor(measured.length / rounds);
  return measured.slice(r * per, (r + 1) * per);
}

function deleteSpec(ctx: BenchContext, pool: DeletePool, measured: string[][], mode: DeleteMode, tally: Tally): RunSpec {
  return {
    method: 'DELETE',
    headers: ctx.withToken,
    setupRequest: (_kind, phase) => {
      const chunks = phase === 'warm' ? pool.warm : measured;
      // Built right before each run: count only the measured run's ids.
      tally.sent = 0;
      tally.deleted = 0;
      let next = 0;
      return (req) => {
        const ids = chunks[next++ % chunks.length]!;
        tally.sent += ids.length;
        return { ...req, path: `/chat/Message/${ids.join(',')}.json?force=${mode === 'everyone' ? 1 : 0}` };
      };
    },
    onResponse: (status, body) => {
      if (status !== 200) return;
      try {
        tally.deleted += (JSON.parse(body) as { SuccessfullyDeleted: { ids: string[] } }).SuccessfullyDeleted.ids.length;
      } catch {
        tally.malformed++;
      }
    },
  };
}

async function measureDeletes(ctx: BenchContext, kind: Target, mode: DeleteMode, size: DeleteSize, step: DeletePlan, r: number): Promise<Figures> {
  const tally: Tally = { sent: 0, deleted: 0, malformed: 0 };
  const { rounds } = ctx.options;
  const pool = ctx.seeded.pools[`${kind}:${mode}:${size}`];
  const measured = roundShare(pool.measured, r, rounds);
  const spec = deleteSpec(ctx, pool, measured, mode, tally);
  const label = `delete ${size} for ${mode}${roundTag(r, rounds)}`;
  const f = await measure(ctx, kind, label, spec, {
    amount: measured.length,
    warmAmount: r === 0 ? step.warm : 0,
    connections: ctx.options.heavyConnections,
  });
  f.idsSent = tally.sent;
  f.idsDeleted = tally.deleted;
  if (tally.deleted !== tally.sent || tally.malformed > 0) {
    ctx.warn(`${label} (${kind}): ${tally.deleted} of ${tally.sent} ids reported deleted${tally.malformed ? `, ${tally.malformed} unreadable bodies` : ''}`);
  }
  return f;
}

export async function runDeletes(ctx: BenchContext, plan: DeletePlan[]): Promise<Scenario[]> {
  const { options } = ctx;
  const { rounds } = options;
  log(`delete scenarios: fixed request counts in ${rounds} round(s), ${options.heavyConnections} connections`);
  const scenarios: Scenario[] = [];
  for (const mode of ['me', 'everyone'] as DeleteMode[]) {
    for (const size of DELETE_SIZES as readonly DeleteSize[]) {
      const step = plan.find((p) => p.size === size)!;
      const perRound = Math.floor(step.measured / rounds);
      if (perRound < 1) throw new Error(`delete ${size} for ${mode}: ${step.measured} requests cannot make ${rounds} rounds (raise --messages)`);
      const results: Record<Target, Figures[]> = { service: [], baseline: [] };
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? (['service', 'baseline'] as const) : (['baseline', 'service'] as const);
        for (const kind of order) results[kind].push(await measureDeletes(ctx, kind, mode, size, step, r));
      }
      scenarios.push(
        scenarioOf(
          `delete_${mode}_${size}`,
          `DELETE /chat/Message/{${size} id${size > 1 ? 's' : ''}}.json?force=${mode === 'everyone' ? 1 : 0} (${mode === 'me' ? 'for me' : 'for everyone'}), ` +
            `${rounds} round(s) of ${perRound} requests, after ${step.warm} warm-up`,
          'amount',
          Math.min(options.heavyConnections, perRound),
          medianFigures(results.service),
          medianFigures(results.baseline),
          undefined,
          results.service.map((f, i) => roundOf(f, results.baseline[i]!)),
        ),
      );
    }
  }
  return scenarios;
}
