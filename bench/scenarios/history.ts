// A dialog's history (issue 32): a page of 50 messages of a dialog of
// options.historyMessages (1,000,000), read through GraphQL (node(id) { … on
// Dialog { messages(last: 50, before: …) } }, the keyset cursor) and REST
// (GET /chat/Message.json, newest first; its `skip` is an offset, the most it
// takes is MAX_SKIP), each beside the bare keyset query on the same data at
// the same position (the baseline's GET /__history). Pages: the newest (the
// first a screen reads), one in the middle of the history (GraphQL, before a
// cursor), and REST's deepest (skip = MAX_SKIP). Each round measures every
// target back to back, the order reversed every other round.
import { MAX_SKIP } from '../../src/rest/routes/chat';
import { encodePosition, toGlobalId } from '../../src/services/global-id';
import type { BenchContext } from '../context';
import { type Figures, type Spread, medianFigures, ratio, roundOf, spreadOf } from '../figures';
import { type RunSpec, measure, roundTag, timedLoad } from '../measure';
import { log } from '../progress';
import { getJson, request } from '../requests';
import { type HistorySeed, historyMessageId } from '../seed';
import { type Scenario, scenarioOf } from './scenario';

export const HISTORY_PAGE = 50;

/** What a screen reads of a page: the messages and where to page on. */
export const GRAPHQL_HISTORY = `query History($dialog: ID!, $last: Int!, $before: String) {
  node(id: $dialog) {
    ... on Dialog {
      messages(last: $last, before: $before) {
        edges { cursor node { id databaseId body createdAt sender { databaseId } } }
        pageInfo { hasPreviousPage startCursor }
      }
    }
  }
}`;

type Key = 'graphql_first' | 'graphql_deep' | 'rest_first' | 'rest_deep' | 'base_first' | 'base_deep' | 'base_rest_deep';

const DESCRIPTIONS: Record<Key, string> = {
  graphql_first: 'GraphQL, the newest page (last: 50)',
  graphql_deep: 'GraphQL, a page in the middle (last: 50, before: the cursor of message N/2 + 1)',
  rest_first: 'REST, the newest page (sort_desc=date_sent, limit=50)',
  rest_deep: `REST, the deepest page skip allows (skip=${MAX_SKIP})`,
  base_first: 'bare keyset query, the newest page',
  base_deep: 'bare keyset query, before message N/2 + 1',
  base_rest_deep: `bare keyset query, before the ${MAX_SKIP.toLocaleString('en-US')}th newest message`,
};

export interface HistoryComparison {
  messages: number;
  rounds: number;
  order: string[][];
  targets: { name: Key; description: string; figures: Figures; perRound: Figures[] }[];
  /** A deep page over the newest page of the same side, round by round: req/s and p50. */
  deepToFirst: Record<'graphql' | 'rest' | 'baseline', { reqPerSec: Spread; p50: Spread }>;
  /** The pages each side answered, compared before the load (the same ids, in the same order). */
  checks: { name: string; passed: boolean; detail: string }[];
}

export interface History {
  scenarios: Scenario[];
  comparison: HistoryComparison;
}

/** The positions a deep page is read before: message g of the seeded dialog (1 = the oldest). */
function positions(h: HistorySeed) {
  const restSkip = Math.min(MAX_SKIP, h.messages - HISTORY_PAGE);
  const at = (g: number) => ({ at: new Date(h.firstAt + g), id: historyMessageId(g) });
  return {
    deep: at(Math.floor(h.messages / 2) + 1),
    restSkip,
    restDeep: at(h.messages - restSkip + 1),
  };
}

/** A GraphQL page's body must hold edges and no errors. */
const graphqlOk = (status: number, body: string) =>
  status !== 200 || (body.startsWith('{"data":{"node":{"messages":{"edges":[{') && !body.includes('"errors"'));

function specs(ctx: BenchContext, h: HistorySeed, bad: Record<Key, number>): Record<Key, RunSpec> {
  const p = positions(h);
  const dialog = toGlobalId('Dialog', h.dialogId);
  const graphql = (key: Key, before: string | null): RunSpec => {
    const body = JSON.stringify({ query: GRAPHQL_HISTORY, variables: { dialog, last: HISTORY_PAGE, before } });
    return {
      method: 'POST',
      headers: (kind) => ({ ...ctx.withToken(kind), 'content-type': 'application/json' }),
      setupRequest: () => {
        bad[key] = 0;
        return (req) => ({ ...req, path: '/graphql', body });
      },
      onResponse: (status, text) => {
        if (!graphqlOk(status, text)) bad[key]++;
      },
    };
  };
  const get = (key: Key, path: string): RunSpec => ({
    headers: ctx.withToken,
    setupRequest: () => {
      bad[key] = 0;
      return (req) => ({ ...req, path });
    },
    onResponse: (status, text) => {
      if (status === 200 && !text.includes('"items":[{')) bad[key]++;
    },
  });
  const rest = `/chat/Message.json?chat_dialog_id=${h.dialogId}&limit=${HISTORY_PAGE}&sort_desc=date_sent`;
  const base = `/__history?chat_dialog_id=${h.dialogId}&limit=${HISTORY_PAGE}`;
  const before = (x: { at: Date; id: string }) => `&before_at=${x.at.getTime()}&before_id=${x.id}`;
  return {
    graphql_first: graphql('graphql_first', null),
    graphql_deep: graphql('graphql_deep', encodePosition('m', p.deep)),
    rest_first: get('rest_first', rest),
    rest_deep: get('rest_deep', `${rest}&skip=${p.restSkip}`),
    base_first: get('base_first', base),
    base_deep: get('base_deep', base + before(p.deep)),
    base_rest_deep: get('base_rest_deep', base + before(p.restDeep)),
  };
}

/** Each side's pages answered before the load: the ids the seed put at each position, newest first. */
async function checkPages(ctx: BenchContext, h: HistorySeed): Promise<HistoryComparison['checks']> {
  const p = positions(h);
  const { service, baseline } = ctx.servers;
  const expected = (newest: number) => Array.from({ length: HISTORY_PAGE }, (_, i) => historyMessageId(newest - i));
  const dialog = toGlobalId('Dialog', h.dialogId);
  const viaGraphql = async (before: string | null) => {
    const res = await request(`${service.url}/graphql`, {
      method: 'POST',
      headers: { ...ctx.withToken('service'), 'content-type': 'application/json' },
      body: JSON.stringify({ query: GRAPHQL_HISTORY, variables: { dialog, last: HISTORY_PAGE, before } }),
    });
    const body = (await res.json()) as { data?: { node?: { messages?: { edges: { node: { databaseId: string } }[] } } } };
    // GraphQL pages are oldest first (a connection's order); newest first to compare.
    return (body.data?.node?.messages?.edges ?? []).map((e) => e.node.databaseId).reverse();
  };
  const viaGet = async (url: string, kind: 'service' | 'baseline') => {
    const { body } = await getJson(url, ctx.withToken(kind));
    return ((body as { items?: { _id: string }[] }).items ?? []).map((m) => m._id);
  };
  const rest = `${service.url}/chat/Message.json?chat_dialog_id=${h.dialogId}&limit=${HISTORY_PAGE}&sort_desc=date_sent`;
  const base = `${baseline.url}/__history?chat_dialog_id=${h.dialogId}&limit=${HISTORY_PAGE}`;
  const before = (x: { at: Date; id: string }) => `&before_at=${x.at.getTime()}&before_id=${x.id}`;
  const deepNewest = Math.floor(h.messages / 2);
  const restNewest = h.messages - p.restSkip;
  const cases: [string, () => Promise<string[]>, number][] = [
    ['graphql newest page', () => viaGraphql(null), h.messages],
    ['graphql middle page', () => viaGraphql(encodePosition('m', p.deep)), deepNewest],
    ['rest newest page', () => viaGet(rest, 'service'), h.messages],
    [`rest skip=${p.restSkip}`, () => viaGet(`${rest}&skip=${p.restSkip}`, 'service'), restNewest],
    ['bare newest page', () => viaGet(base, 'baseline'), h.messages],
    ['bare middle page', () => viaGet(base + before(p.deep), 'baseline'), deepNewest],
    [`bare before the skip=${p.restSkip} position`, () => viaGet(base + before(p.restDeep), 'baseline'), restNewest],
  ];
  const checks: HistoryComparison['checks'] = [];
  for (const [name, read, newest] of cases) {
    const got = await read();
    const want = expected(newest);
    const passed = got.length === want.length && got.every((id, i) => id === want[i]);
    checks.push({ name, passed, detail: passed ? 'ok' : `got ${got.length} ids (${got[0] ?? '–'} … ${got.at(-1) ?? '–'}), want ${want[0]} … ${want.at(-1)}` });
    if (!passed) ctx.warn(`history check ${name}: ${checks.at(-1)!.detail}`);
  }
  return checks;
}

export async function runHistory(ctx: BenchContext): Promise<History> {
  const { options } = ctx;
  const h = ctx.seeded.history;
  if (!h) throw new Error('history: the dialog was not seeded');
  log(
    `history: pages of ${HISTORY_PAGE} of a dialog of ${h.messages.toLocaleString('en-US')} messages, ${options.rounds} round(s), ` +
      `${options.duration} s each after ${options.warmup} s of warm-up, ${options.connections} connections`,
  );
  const checks = await checkPages(ctx, h);
  const bad = {} as Record<Key, number>;
  const spec = specs(ctx, h, bad);
  const timed = timedLoad(options);
  const keys = Object.keys(DESCRIPTIONS) as Key[];
  const measured = Object.fromEntries(keys.map((k) => [k, [] as Figures[]])) as Record<Key, Figures[]>;
  const order: string[][] = [];
  for (let r = 0; r < options.rounds; r++) {
    const sequence = r % 2 === 0 ? keys : [...keys].reverse();
    order.push(sequence);
    for (const key of sequence) {
      const kind = key.startsWith('base_') ? 'baseline' : 'service';
      const f = await measure(ctx, kind, `history ${key}${roundTag(r, options.rounds)}`, spec[key], timed);
      f.badBodies = bad[key];
      if (bad[key] > 0) ctx.warn(`history ${key}${roundTag(r, options.rounds)}: ${bad[key]} answers without the page`);
      measured[key].push(f);
    }
  }
  const scenario = (name: string, description: string, svc: Key, base: Key) =>
    scenarioOf(
      name,
      description,
      'duration',
      options.connections,
      medianFigures(measured[svc]),
      medianFigures(measured[base]),
      undefined,
      measured[svc].map((f, i) => roundOf(f, measured[base][i]!)),
    );
  const n = h.messages.toLocaleString('en-US');
  const p = positions(h);
  const scenarios = [
    scenario(
      'graphql_history_first',
      `POST /graphql Dialog.messages(last: 50), the newest page of ${n}, beside the bare keyset query`,
      'graphql_first',
      'base_first',
    ),
    scenario(
      'graphql_history_deep',
      `POST /graphql Dialog.messages(last: 50, before: cursor), the page before message ${(Math.floor(h.messages / 2) + 1).toLocaleString('en-US')} of ${n}, beside the bare keyset query there`,
      'graphql_deep',
      'base_deep',
    ),
    scenario(
      'rest_history_first',
      `GET /chat/Message.json?limit=50&sort_desc=date_sent, the newest page of ${n}, beside the bare keyset query`,
      'rest_first',
      'base_first',
    ),
    scenario(
      'rest_history_deep_skip',
      `GET /chat/Message.json?limit=50&sort_desc=date_sent&skip=${p.restSkip} (an offset), beside the bare keyset query at the same position`,
      'rest_deep',
      'base_rest_deep',
    ),
  ];
  const perRound = (a: Key, b: Key, pick: (f: Figures) => number) => spreadOf(measured[a].map((f, i) => ratio(pick(f), pick(measured[b][i]!))));
  const deepToFirst = (deep: Key, first: Key) => ({ reqPerSec: perRound(deep, first, (f) => f.reqPerSec), p50: perRound(deep, first, (f) => f.p50) });
  return {
    scenarios,
    comparison: {
      messages: h.messages,
      rounds: options.rounds,
      order,
      targets: keys.map((k) => ({ name: k, description: DESCRIPTIONS[k], figures: medianFigures(measured[k]), perRound: measured[k] })),
      deepToFirst: {
        graphql: deepToFirst('graphql_deep', 'graphql_first'),
        rest: deepToFirst('rest_deep', 'rest_first'),
        baseline: deepToFirst('base_deep', 'base_first'),
      },
      checks,
    },
  };
}
