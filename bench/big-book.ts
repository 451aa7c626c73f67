// Correctness of the 100,000-contact address book (more contacts than
// PostgreSQL has bind parameters): both sides answer every registered user,
// compact and full; and the service's statements per request for it.
import type { BenchContext } from './context';
import { log } from './progress';
import { getJson, settledCount, statementCount } from './requests';

export interface Correctness {
  name: string;
  passed: boolean;
  detail: string;
}

export interface BigBook {
  correctness: Correctness[];
  /** Statements per request of the service for the big book (null: not counted). */
  statementsPerRequest: number | null;
}

export async function checkBigBook(ctx: BenchContext): Promise<BigBook> {
  const { options, seeded, servers } = ctx;
  const correctness: Correctness[] = [];
  const bigBefore = await statementCount(servers.service, 'service');
  let bigRequests = 0;
  for (const kind of ['service', 'baseline'] as const) {
    for (const compact of [1, 0]) {
      const res = await getJson(`${servers[kind].url}/address_book/registered_users.json?udid=big&compact=${compact}`, ctx.withToken(kind));
      if (kind === 'service') bigRequests++;
      const items = (res.body as { items?: unknown[] } | null)?.items;
      const got = Array.isArray(items) ? items.length : null;
      const passed = res.status === 200 && got === seeded.bigMatching;
      correctness.push({
        name: `${kind}: registered_users udid=big compact=${compact} (${options.bigContacts.toLocaleString('en-US')} contacts)`,
        passed,
        detail: passed
          ? `200, ${got} users as expected`
          : `status ${res.status}, ${got ?? 'no'} items (expected ${seeded.bigMatching}): ${JSON.stringify(res.body).slice(0, 200)}`,
      });
    }
  }
  const bigAfter = await settledCount(servers.service, 'service');
  const statementsPerRequest = bigBefore !== null && bigAfter !== null ? Math.round(((bigAfter - bigBefore) / bigRequests) * 100) / 100 : null;
  for (const c of correctness) log(`correctness: ${c.passed ? 'ok' : 'FAILED'} ${c.name}: ${c.detail}`);
  return { correctness, statementsPerRequest };
}
