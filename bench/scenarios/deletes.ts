// Deletes of messages, for me and for everyone, 1, 100 and 1,000 ids a
// request: fixed request counts, fresh ids for every request (each side and
// scenario has its own seeded pool), the ids reported deleted checked.
import type { BenchContext } from '../context';
import type { Figures } from '../figures';
import { type RunSpec, measure } from '../measure';
import { log } from '../progress';
import { DELETE_SIZES, type DeleteMode, type DeletePlan, type DeletePool, type DeleteSize, type Target } from '../seed';
import { type Scenario, scenarioOf } from './scenario';

/** Ids sent and ids reported deleted in the measured run; bodies that were not JSON, warm-up included. */
interface Tally {
  sent: number;
  deleted: number;
  malformed: number;
}

function deleteSpec(ctx: BenchContext, pool: DeletePool, mode: DeleteMode, tally: Tally): RunSpec {
  return {
    method: 'DELETE',
    headers: ctx.withToken,
    setupRequest: (_kind, phase) => {
      const chunks = phase === 'warm' ? pool.warm : pool.measured;
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

async function measureDeletes(ctx: BenchContext, kind: Target, mode: DeleteMode, size: DeleteSize, step: DeletePlan): Promise<Figures> {
  const tally: Tally = { sent: 0, deleted: 0, malformed: 0 };
  const spec = deleteSpec(ctx, ctx.seeded.pools[`${kind}:${mode}:${size}`], mode, tally);
  const label = `delete ${size} for ${mode}`;
  const f = await measure(ctx, kind, label, spec, {
    amount: step.measured,
    warmAmount: step.warm,
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
  log(`delete scenarios: fixed request counts, ${options.heavyConnections} connections`);
  const scenarios: Scenario[] = [];
  for (const mode of ['me', 'everyone'] as DeleteMode[]) {
    for (const size of DELETE_SIZES as readonly DeleteSize[]) {
      const step = plan.find((p) => p.size === size)!;
      const results = {} as Record<Target, Figures>;
      for (const kind of ['service', 'baseline'] as const) results[kind] = await measureDeletes(ctx, kind, mode, size, step);
      scenarios.push(
        scenarioOf(
          `delete_${mode}_${size}`,
          `DELETE /chat/Message/{${size} id${size > 1 ? 's' : ''}}.json?force=${mode === 'everyone' ? 1 : 0} (${mode === 'me' ? 'for me' : 'for everyone'}), ` +
            `${step.measured} requests after ${step.warm} warm-up`,
          'amount',
          Math.min(options.heavyConnections, step.measured),
          results.service,
          results.baseline,
        ),
      );
    }
  }
  return scenarios;
}
