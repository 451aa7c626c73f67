// The lookups (issue 18): the service's REST and GraphQL lookups, the bare
// baseline and, with --peers, Mercurius and Apollo Server alone doing the
// same GraphQL lookup and Apollo Server's `{ __typename }`, each round measuring all of them back to
// back, the order reversed every other round. Gives the two lookup scenarios
// and the comparison of every target with the same round's baseline.
import type { BenchContext } from '../context';
import { type Figures, type Spread, medianFigures, ratio, roundOf, spreadOf } from '../figures';
import { type Elsewhere, type RunSpec, measure, roundTag, timedLoad } from '../measure';
import { log } from '../progress';
import { GRAPHQL_LOOKUP, GRAPHQL_TYPENAME } from '../queries';
import { type Scenario, scenarioOf } from './scenario';

export interface LookupComparison {
  rounds: number;
  /** Each round's order of measurement. */
  order: string[][];
  targets: {
    name: 'rest' | 'graphql' | 'baseline' | 'mercurius' | 'apollo_lookup' | 'apollo_floor';
    description: string;
    /** Medians over the rounds. */
    figures: Figures;
    perRound: Figures[];
    /** req/s over the same round's baseline. */
    toBaseline: Spread;
  }[];
  /** The service's GraphQL lookup over Mercurius's, req/s, round by round (null: peers skipped). */
  graphqlToMercurius: Spread | null;
  /** Apollo Server alone doing the lookup over Mercurius, req/s: what "still Apollo Server 5" allows (null: peers skipped). */
  apolloLookupToMercurius: Spread | null;
  /** The service's GraphQL lookup over Apollo Server alone doing it, req/s: the service's own share (null: peers skipped). */
  graphqlToApolloLookup: Spread | null;
  /** The service's CPU per GraphQL lookup over its CPU per REST lookup, round by round. */
  graphqlCpuToRest: Spread | null;
}

export interface Lookups {
  /** rest_user_lookup and graphql_user_lookup. */
  scenarios: Scenario[];
  /** rest_user_lookup: the soak's rate is a share of its req/s. */
  rest: Scenario;
  comparison: LookupComparison;
}

type Key = LookupComparison['targets'][number]['name'];
type Runner = [Key, () => Promise<Figures>];

const DESCRIPTIONS: Record<Key, string> = {
  rest: 'this service, REST lookup (session token)',
  graphql: 'this service, GraphQL lookup (session token)',
  baseline: 'bare node:http + pg, the same credential check',
  mercurius: "Mercurius + graphql-jit + pg, the full lookup, the baseline's credential check",
  apollo_lookup: "Apollo Server 5 on Fastify alone, compiled queries, Mercurius's lookup and statement",
  apollo_floor: 'Apollo Server 5 on Fastify, { __typename } (no database)',
};

/** Answers of 200 that are not what was asked, in the measured run. */
interface BadBodies {
  count: number;
}

/** The REST lookup by external id, random existing ids: measured here, on the sweeper's instance, and the soak's load. */
export const restLookupSpec = (ctx: BenchContext): RunSpec => ({
  headers: ctx.withToken,
  setupRequest: () => (req) => ({ ...req, path: `/users/external/${ctx.randomId()}.json` }),
});

/** GraphQL userByExternalId, the same ids as the REST lookup. */
export const graphqlSpec = (ctx: BenchContext, bad: BadBodies): RunSpec => ({
  method: 'POST',
  headers: (kind) => ({ ...ctx.withToken(kind), 'content-type': 'application/json' }),
  setupRequest: () => {
    bad.count = 0; // built right before each run: count the measured run's only
    return (req) => ({
      ...req,
      path: '/graphql',
      body: JSON.stringify({ query: GRAPHQL_LOOKUP, variables: { id: ctx.randomId() } }),
    });
  },
  // A GraphQL failure answers 200 with "errors": count those too.
  onResponse: (status, body) => {
    if (status === 200 && (!body.startsWith('{"data":{"userByExternalId":{') || body.includes('"errors"'))) bad.count++;
  },
});

/** Apollo's floor: `{ __typename }`, answered without a resolver. */
const floorSpec = (bad: BadBodies): RunSpec => ({
  method: 'POST',
  headers: () => ({ 'content-type': 'application/json' }),
  setupRequest: () => {
    bad.count = 0;
    const body = JSON.stringify({ query: GRAPHQL_TYPENAME });
    return (req) => ({ ...req, path: '/graphql', body });
  },
  onResponse: (status, body) => {
    if (status === 200 && !body.startsWith('{"data":{"__typename":"Query"}}')) bad.count++;
  },
});

/** Each target's run, in an even round's order; `round.current` is the round the labels name. */
function runnersOf(ctx: BenchContext, round: { current: number }): Runner[] {
  const { options, servers } = ctx;
  const timed = timedLoad(options);
  const lookupSpec = restLookupSpec(ctx);
  const graphqlBad: BadBodies = { count: 0 };
  const graphql = graphqlSpec(ctx, graphqlBad);
  const floorBad: BadBodies = { count: 0 };
  const floor = floorSpec(floorBad);
  const tagOf = () => roundTag(round.current, options.rounds);
  const graphqlRun = (on?: Elsewhere) => async () => {
    const f = await measure(ctx, on ? 'baseline' : 'service', `GraphQL lookup${tagOf()}`, graphql, timed, on);
    f.badBodies = graphqlBad.count;
    if (graphqlBad.count > 0)
      ctx.warn(`GraphQL lookup (${on?.target.name ?? 'service'})${tagOf()}: ${graphqlBad.count} responses with errors or without the user`);
    return f;
  };
  const runners: Runner[] = [
    ['rest', () => measure(ctx, 'service', `REST lookup${tagOf()}`, lookupSpec, timed)],
    ['baseline', () => measure(ctx, 'baseline', `REST lookup${tagOf()}`, lookupSpec, timed)],
    ['graphql', graphqlRun()],
  ];
  const { mercurius, apolloLookup, apolloFloor } = servers;
  if (mercurius && apolloLookup && apolloFloor) {
    // Peers have no statement counter worth reading against the service's: not counted.
    runners.push(['mercurius', graphqlRun({ target: mercurius, countStatements: false })]);
    runners.push(['apollo_lookup', graphqlRun({ target: apolloLookup, countStatements: false })]);
    runners.push([
      'apollo_floor',
      async () => {
        const f = await measure(ctx, 'baseline', `{ __typename }${tagOf()}`, floor, timed, { target: apolloFloor, countStatements: false });
        f.badBodies = floorBad.count;
        if (floorBad.count > 0) ctx.warn(`{ __typename } (apollo-floor)${tagOf()}: ${floorBad.count} unexpected answers`);
        return f;
      },
    ]);
  }
  return runners;
}

/**
 * REST beside the baseline, the service's GraphQL beside Mercurius; the
 * order reversed every other round, so that a machine slowing down or
 * speeding up during the run weighs on every side alike.
 */
async function measureRounds(rounds: number, runners: Runner[], round: { current: number }) {
  const measured: Record<Key, Figures[]> = { rest: [], graphql: [], baseline: [], mercurius: [], apollo_lookup: [], apollo_floor: [] };
  const order: string[][] = [];
  for (let r = 0; r < rounds; r++) {
    round.current = r;
    const sequence = r % 2 === 0 ? runners : [...runners].reverse();
    order.push(sequence.map(([key]) => key));
    for (const [key, run] of sequence) measured[key].push(await run());
  }
  return { measured, order };
}

/** The REST and GraphQL lookup scenarios, both against the REST lookup's baseline. */
function lookupScenarios(ctx: BenchContext, measured: Record<Key, Figures[]>): [Scenario, Scenario] {
  const base = medianFigures(measured.baseline);
  const rest = scenarioOf(
    'rest_user_lookup',
    'GET /users/external/{id}.json, random existing ids',
    'duration',
    ctx.options.connections,
    medianFigures(measured.rest),
    base,
    undefined,
    measured.rest.map((f, i) => roundOf(f, measured.baseline[i]!)),
  );
  const graphql = scenarioOf(
    'graphql_user_lookup',
    'POST /graphql userByExternalId (all 19 fields), random existing ids',
    'duration',
    ctx.options.connections,
    medianFigures(measured.graphql),
    base,
    'rest_user_lookup',
    measured.graphql.map((f, i) => roundOf(f, measured.baseline[i]!)),
  );
  return [rest, graphql];
}

const perRoundRatio = (a: Figures[], b: Figures[], pick: (f: Figures) => number | null) =>
  a.map((f, i) => {
    const x = pick(f);
    const y = b[i] ? pick(b[i]) : null;
    return x === null || y === null ? NaN : ratio(x, y);
  });

/** a's req/s over b's, round by round; null when b was not measured (peers skipped). */
const peerRatio = (a: Figures[], b: Figures[]): Spread | null => (b.length > 0 ? spreadOf(perRoundRatio(a, b, (f) => f.reqPerSec)) : null);

function comparisonOf(rounds: number, measured: Record<Key, Figures[]>, order: string[][]): LookupComparison {
  return {
    rounds,
    order,
    targets: (Object.keys(measured) as Key[])
      .filter((key) => measured[key].length > 0)
      .map((key) => ({
        name: key,
        description: DESCRIPTIONS[key],
        figures: medianFigures(measured[key]),
        perRound: measured[key],
        toBaseline: spreadOf(perRoundRatio(measured[key], measured.baseline, (f) => f.reqPerSec)),
      })),
    graphqlToMercurius: peerRatio(measured.graphql, measured.mercurius),
    apolloLookupToMercurius: peerRatio(measured.apollo_lookup, measured.mercurius),
    graphqlToApolloLookup: peerRatio(measured.graphql, measured.apollo_lookup),
    graphqlCpuToRest: spreadOf(perRoundRatio(measured.graphql, measured.rest, (f) => f.cpuMsPerRequest)),
  };
}

export async function runLookups(ctx: BenchContext): Promise<Lookups> {
  const { options } = ctx;
  log(`lookups: ${options.rounds} round(s), ${options.duration} s each after ${options.warmup} s of warm-up, ${options.connections} connections`);
  const round = { current: 0 };
  const { measured, order } = await measureRounds(options.rounds, runnersOf(ctx, round), round);
  const [rest, graphql] = lookupScenarios(ctx, measured);
  return { scenarios: [rest, graphql], rest, comparison: comparisonOf(options.rounds, measured, order) };
}
