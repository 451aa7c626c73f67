// Registered users of the caller's global address book, compact and full:
// rounds alternating which side goes first, on the heavy scenarios'
// connections.
import type { BenchContext } from '../context';
import { type Figures, medianFigures, roundOf } from '../figures';
import { type LoadShape, type RunSpec, measure, roundTag } from '../measure';
import { log } from '../progress';
import { type Scenario, scenarioOf } from './scenario';

export async function runRegistered(ctx: BenchContext): Promise<Scenario[]> {
  const { options, seeded } = ctx;
  const heavy: LoadShape = { duration: options.duration, warmup: options.warmup, connections: options.heavyConnections };
  log(`registered users: ${options.rounds} round(s), ${options.heavyConnections} connections`);
  const scenarios: Scenario[] = [];
  for (const compact of [1, 0] as const) {
    const spec: RunSpec = {
      headers: ctx.withToken,
      setupRequest: () => (req) => ({ ...req, path: `/address_book/registered_users.json?compact=${compact}` }),
    };
    const label = `registered users compact=${compact}`;
    const svc: Figures[] = [];
    const bases: Figures[] = [];
    for (let r = 0; r < options.rounds; r++) {
      const tag = roundTag(r, options.rounds);
      for (const kind of r % 2 === 0 ? (['service', 'baseline'] as const) : (['baseline', 'service'] as const)) {
        (kind === 'service' ? svc : bases).push(await measure(ctx, kind, `${label}${tag}`, spec, heavy));
      }
    }
    scenarios.push(
      scenarioOf(
        `registered_users_${compact ? 'compact' : 'full'}`,
        `GET /address_book/registered_users.json?compact=${compact}: ${options.contacts.toLocaleString('en-US')} contacts, ` +
          `${seeded.contactsMatching.toLocaleString('en-US')} registered, ${options.users.toLocaleString('en-US')} users`,
        'duration',
        options.heavyConnections,
        medianFigures(svc),
        medianFigures(bases),
        undefined,
        svc.map((f, i) => roundOf(f, bases[i]!)),
      ),
    );
  }
  return scenarios;
}
