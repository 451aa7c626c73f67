// Parity, before any load: the baseline answers what the service answers
// (lookups, unknown ids and tokens, registered users), and Mercurius answers
// the GraphQL lookup as the service does, field for field.
import type { BenchContext } from './context';
import type { Server } from './processes';
import { log } from './progress';
import { GRAPHQL_LOOKUP } from './queries';
import { getJson, request } from './requests';
import type { Target } from './seed';

export interface Parity {
  checked: number;
  mismatches: string[];
}

/** Deep equality of two JSON values, reporting the first difference. */
function difference(a: unknown, b: unknown, at = ''): string | null {
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || (a === null) !== (b === null)) {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify(undefined) is undefined, which its type leaves out
    return `${at || '(root)'}: ${JSON.stringify(a)?.slice(0, 80)} ≠ ${JSON.stringify(b)?.slice(0, 80)}`;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${at || '(root)'}: ${a.length} items ≠ ${b.length} items`;
    for (let i = 0; i < a.length; i++) {
      const d = difference(a[i], b[i], `${at}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (a && typeof a === 'object' && b && typeof b === 'object') {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    if (ka.join() !== kb.join()) return `${at || '(root)'}: keys ${ka.join(',')} ≠ ${kb.join(',')}`;
    for (const key of ka) {
      const d = difference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${at}.${key}`);
      if (d) return d;
    }
    return null;
  }
  return a === b ? null : `${at || '(root)'}: ${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`;
}

export async function checkParity(ctx: BenchContext): Promise<Parity> {
  const { options, servers, withToken } = ctx;
  const parity: Parity = { checked: 0, mismatches: [] };
  const compare = async (label: string, pathAndQuery: string, headers: (kind: Target) => Record<string, string>) => {
    const [a, b] = await Promise.all([
      getJson(`${servers.service.url}${pathAndQuery}`, headers('service')),
      getJson(`${servers.baseline.url}${pathAndQuery}`, headers('baseline')),
    ]);
    parity.checked++;
    const d = a.status !== b.status ? `status ${a.status} ≠ ${b.status}` : difference(a.body, b.body);
    if (d) parity.mismatches.push(`${label}: service vs baseline: ${d}`);
  };
  const someIds = [2, options.users, 3 + Math.floor(Math.random() * (options.users - 2))];
  for (const id of someIds) await compare(`lookup ${id}`, `/users/external/${id}.json`, withToken);
  await compare('lookup unknown id', `/users/external/${options.users + 1}.json`, withToken);
  await compare('lookup without a token', `/users/external/2.json`, () => ({}));
  await compare('lookup with an unknown token', `/users/external/2.json`, () => ({ 'SVC-Token': 'nope' }));
  await compare('registered users compact', '/address_book/registered_users.json?compact=1', withToken);
  await compare('registered users full', '/address_book/registered_users.json?compact=0', withToken);
  await compare('registered users, unknown udid', '/address_book/registered_users.json?udid=none', withToken);
  if (servers.mercurius) await compareGraphql(ctx, servers.mercurius, someIds, parity);
  for (const m of parity.mismatches) ctx.warn(`parity: ${m}`);
  log(`parity: ${parity.checked - parity.mismatches.length}/${parity.checked} answers identical`);
  return parity;
}

/** The peer answers the GraphQL lookup as the service does, field for field. */
async function compareGraphql(ctx: BenchContext, mercurius: Server, ids: number[], parity: Parity): Promise<void> {
  const lookup = async (target: Server, token: string, id: number) => {
    const res = await request(`${target.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'SVC-Token': token },
      body: JSON.stringify({ query: GRAPHQL_LOOKUP, variables: { id } }),
    });
    return { status: res.status, body: (await res.json()) as unknown };
  };
  for (const id of ids) {
    const [a, b] = await Promise.all([lookup(ctx.servers.service, ctx.seeded.serviceToken, id), lookup(mercurius, ctx.seeded.baselineToken, id)]);
    parity.checked++;
    const d = a.status !== b.status ? `status ${a.status} ≠ ${b.status}` : difference(a.body, b.body);
    if (d) parity.mismatches.push(`GraphQL lookup ${id}: service vs mercurius: ${d}`);
  }
}
