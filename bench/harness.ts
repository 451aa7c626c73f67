// The benchmark: seed, start the service and the baseline, check they agree,
// drive every scenario against both with the same settings, soak the service,
// and return the report (bench/report.ts prints and judges it).
import type autocannon from 'autocannon';
import { Client } from 'pg';
import { type Figures, type Round, type Spread, figuresOf, mb, median, medianFigures, ratio, round2, roundOf, spreadOf } from './figures';
import { fire, type LoadResult } from './load';
import { type GitState, type Machine, git, machine, redact } from './machine';
import type { BenchOptions } from './options';
import { SERVICE_BENCH_ENV, type Server, memoryOf, startBaseline, startPeer, startService } from './processes';
import { log, timer } from './progress';
import { GRAPHQL_LOOKUP, GRAPHQL_TYPENAME } from './queries';
import { getJson, request, settledCount, sleep, statementCount } from './requests';
import { DELETE_SIZES, type DeleteMode, type DeleteSize, type SeedResult, deletePlan, dropDatabase, seed } from './seed';

export interface Scenario {
  name: string;
  description: string;
  /** 'duration': timed runs after a warm-up; 'amount': a fixed number of requests. */
  kind: 'duration' | 'amount';
  connections: number;
  service: Figures;
  baseline: Figures;
  /** Where the baseline figures come from when they are another scenario's. */
  baselineFrom?: string;
  /** service / baseline: with rounds, the median of each round's ratio. */
  ratios: { reqPerSec: number; p50: number; p99: number };
  /** Timed scenarios: each round's figures (service and baseline measured back to back, the order alternating). */
  rounds?: Round[];
  /** The sweeper scenario: what the sweeper did during each sweeping run. */
  sweep?: SweepFigures;
}

export interface SweepFigures {
  /** Expired sessions seeded before each sweeping run. */
  backlog: number;
  batchSize: number;
  runs: {
    /** Sessions the sweeper removed during the run (warm-up and measured window). */
    removed: number;
    seconds: number;
    rowsPerSecond: number;
    /** Expired sessions still there when the run ended (0: the sweep ended before the load did). */
    leftAtEnd: number;
  }[];
}

/**
 * The lookups side by side (issue 18): the service's REST and GraphQL
 * lookups, the bare baseline, and the GraphQL peers — Mercurius doing the
 * same lookup with the baseline's credential check, Apollo Server's
 * `{ __typename }` on Fastify — each round measuring all of them back to back,
 * the order reversed every other round.
 */
export interface LookupComparison {
  rounds: number;
  /** Each round's order of measurement. */
  order: string[][];
  targets: {
    name: 'rest' | 'graphql' | 'baseline' | 'mercurius' | 'apollo_floor';
    description: string;
    /** Medians over the rounds. */
    figures: Figures;
    perRound: Figures[];
    /** req/s over the same round's baseline. */
    toBaseline: Spread;
  }[];
  /** The service's GraphQL lookup over Mercurius's, req/s, round by round (null: peers skipped). */
  graphqlToMercurius: Spread | null;
  /** The service's CPU per GraphQL lookup over its CPU per REST lookup, round by round. */
  graphqlCpuToRest: Spread | null;
}

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

export interface Correctness {
  name: string;
  passed: boolean;
  detail: string;
}

export interface Report {
  harness: 'chatsvc-bench';
  version: 1;
  startedAt: string;
  finishedAt: string;
  smoke: boolean;
  machine: Machine;
  git: GitState;
  settings: Omit<BenchOptions, 'serverUrl'> & { server: string; serviceEnv: Record<string, string>; deletePlan: ReturnType<typeof deletePlan> };
  seeding: {
    seconds: SeedResult['timings'];
    users: number;
    contacts: number;
    contactsMatching: number;
    bigContacts: number;
    bigMatching: number;
    messages: number;
  };
  parity: { checked: number; mismatches: string[] };
  correctness: Correctness[];
  scenarios: Scenario[];
  /** The lookups beside the baseline and the peers (null: lookups not run). */
  lookups: LookupComparison | null;
  soak: Soak | null;
  memory: { servicePeakMb: number | null; baselinePeakMb: number | null };
  /** Statements per request of the service for the big-book check. */
  bigBookStatementsPerRequest: number | null;
  warnings: string[];
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

export async function runBench(options: BenchOptions): Promise<Report> {
  const startedAt = new Date().toISOString();
  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    log(`WARNING: ${message}`);
  };
  const machineInfo = await machine(options.serverUrl);
  const perPool = Math.floor(options.messages / 4);
  const plan = deletePlan(perPool); // fails early when --messages is too small

  log(`bench database ${options.database} on ${redact(options.serverUrl)}`);
  const seeded = await seed(options);
  const t = seeded.timings;
  log(`seeding: ${t.total} s (users ${t.users} s, contacts ${t.contacts} s, messages ${t.messages} s; ` + `then VACUUM ANALYZE ${t.analyze} s)`);

  let service: Server | undefined;
  let baseline: Server | undefined;
  let mercurius: Server | undefined;
  let apolloFloor: Server | undefined;
  const peersWanted = options.peers && options.only.includes('lookups');
  try {
    [service, baseline, mercurius, apolloFloor] = await Promise.all([
      startService(seeded.databaseUrl, options.poolMax, options.cpuProf, options.serviceFlags),
      startBaseline(seeded.databaseUrl, options.poolMax, options.baselineSessionWrites),
      peersWanted ? startPeer('mercurius', seeded.databaseUrl, options.poolMax, options.cpuProf) : undefined,
      peersWanted ? startPeer('apollo-floor', seeded.databaseUrl, options.poolMax, options.cpuProf) : undefined,
    ]);
    log(`service pid ${service.pid} at ${service.url}; baseline pid ${baseline.pid} at ${baseline.url}`);
    if (mercurius && apolloFloor) log(`peers: mercurius pid ${mercurius.pid} at ${mercurius.url}; apollo-floor pid ${apolloFloor.pid} at ${apolloFloor.url}`);
    const targets = { service, baseline };
    const tokens = { service: seeded.serviceToken, baseline: seeded.baselineToken };

    // ---- Parity: the baseline answers what the service answers. ----------
    const parity = { checked: 0, mismatches: [] as string[] };
    const compare = async (label: string, pathAndQuery: string, headers: (kind: 'service' | 'baseline') => Record<string, string>) => {
      const [a, b] = await Promise.all([
        getJson(`${service!.url}${pathAndQuery}`, headers('service')),
        getJson(`${baseline!.url}${pathAndQuery}`, headers('baseline')),
      ]);
      parity.checked++;
      const d = a.status !== b.status ? `status ${a.status} ≠ ${b.status}` : difference(a.body, b.body);
      if (d) parity.mismatches.push(`${label}: service vs baseline: ${d}`);
    };
    const withToken = (kind: 'service' | 'baseline') => ({ 'SVC-Token': tokens[kind] });
    const someIds = [2, options.users, 3 + Math.floor(Math.random() * (options.users - 2))];
    for (const id of someIds) await compare(`lookup ${id}`, `/users/external/${id}.json`, withToken);
    await compare('lookup unknown id', `/users/external/${options.users + 1}.json`, withToken);
    await compare('lookup without a token', `/users/external/2.json`, () => ({}));
    await compare('lookup with an unknown token', `/users/external/2.json`, () => ({ 'SVC-Token': 'nope' }));
    await compare('registered users compact', '/address_book/registered_users.json?compact=1', withToken);
    await compare('registered users full', '/address_book/registered_users.json?compact=0', withToken);
    await compare('registered users, unknown udid', '/address_book/registered_users.json?udid=none', withToken);
    if (mercurius) {
      // The peer answers the GraphQL lookup as the service does, field for field.
      const lookup = async (target: Server, token: string, id: number) => {
        const res = await request(`${target.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'SVC-Token': token },
          body: JSON.stringify({ query: GRAPHQL_LOOKUP, variables: { id } }),
        });
        return { status: res.status, body: (await res.json()) as unknown };
      };
      for (const id of someIds) {
        const [a, b] = await Promise.all([lookup(service, tokens.service, id), lookup(mercurius, tokens.baseline, id)]);
        parity.checked++;
        const d = a.status !== b.status ? `status ${a.status} ≠ ${b.status}` : difference(a.body, b.body);
        if (d) parity.mismatches.push(`GraphQL lookup ${id}: service vs mercurius: ${d}`);
      }
    }
    for (const m of parity.mismatches) warn(`parity: ${m}`);
    log(`parity: ${parity.checked - parity.mismatches.length}/${parity.checked} answers identical`);

    // ---- Correctness: the 100,000-contact book. ----------------------------
    const correctness: Correctness[] = [];
    const bigBefore = await statementCount(service, 'service');
    let bigRequests = 0;
    for (const kind of ['service', 'baseline'] as const) {
      for (const compact of [1, 0]) {
        const res = await getJson(`${targets[kind].url}/address_book/registered_users.json?udid=big&compact=${compact}`, withToken(kind));
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
    const bigAfter = await settledCount(service, 'service');
    const bigBookStatementsPerRequest = bigBefore !== null && bigAfter !== null ? Math.round(((bigAfter - bigBefore) / bigRequests) * 100) / 100 : null;
    for (const c of correctness) log(`correctness: ${c.passed ? 'ok' : 'FAILED'} ${c.name}: ${c.detail}`);

    // ---- Scenarios. ---------------------------------------------------------
    const scenarios: Scenario[] = [];
    const randomId = () => 1 + Math.floor(Math.random() * options.users);

    interface RunSpec {
      method?: 'GET' | 'POST' | 'DELETE';
      headers: (kind: 'service' | 'baseline') => Record<string, string>;
      setupRequest?: (kind: 'service' | 'baseline', phase: 'warm' | 'measured') => (req: autocannon.Request) => autocannon.Request;
      onResponse?: (status: number, body: string) => void;
    }

    /**
     * Warm-up (excluded), then the measured run, counting statements around
     * it (unless `on` says otherwise: another instance of the service, whose
     * background work never lets the count settle).
     */
    async function measure(
      kind: 'service' | 'baseline',
      label: string,
      spec: RunSpec,
      load: { duration?: number; warmup?: number; amount?: number; warmAmount?: number; connections: number },
      on?: { target: Server; countStatements: boolean },
    ): Promise<Figures> {
      const target = on?.target ?? targets[kind];
      const counting = on?.countStatements ?? true;
      const base = {
        url: target.url,
        pid: target.pid,
        method: spec.method ?? 'GET',
        headers: spec.headers(kind),
        connections: load.connections,
        pipelining: options.pipelining,
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
        warn(`${label} (${on?.target.name ?? kind}): ${f.non2xx} non-2xx responses ${JSON.stringify(f.statusCounts)}, ${f.errors} errors`);
      }
      log(
        `  ${label} (${on?.target.name ?? kind}): ${f.reqPerSec} req/s, p50 ${f.p50} ms, p99 ${f.p99} ms, ` +
          `${f.cpuMsPerRequest ?? '?'} ms CPU/request, ${f.statementsPerRequest ?? '?'} statements/request, ${f.requests} requests, RSS ≤ ${f.peakRssMb} MB`,
      );
      return f;
    }

    const scenario = (
      name: string,
      description: string,
      kind: Scenario['kind'],
      connections: number,
      svc: Figures,
      base: Figures,
      baselineFrom?: string,
      rounds?: Round[],
    ): Scenario => {
      const ratios =
        rounds && rounds.length > 1
          ? {
              reqPerSec: median(rounds.map((r) => r.ratios.reqPerSec)),
              p50: median(rounds.map((r) => r.ratios.p50)),
              p99: median(rounds.map((r) => r.ratios.p99)),
            }
          : { reqPerSec: ratio(svc.reqPerSec, base.reqPerSec), p50: ratio(svc.p50, base.p50), p99: ratio(svc.p99, base.p99) };
      const s: Scenario = {
        name,
        description,
        kind,
        connections,
        service: svc,
        baseline: base,
        ...(baselineFrom ? { baselineFrom } : {}),
        ratios,
        ...(rounds ? { rounds } : {}),
      };
      scenarios.push(s);
      return s;
    };

    const timed = { duration: options.duration, warmup: options.warmup, connections: options.connections };
    // The REST lookup by external id, random existing ids: measured, and the soak's load.
    const lookupSpec: RunSpec = {
      headers: withToken,
      setupRequest: () => (req) => ({ ...req, path: `/users/external/${randomId()}.json` }),
    };
    const runs = (group: (typeof options.only)[number]) => options.only.includes(group);
    let rest: Scenario | undefined;
    let comparison: LookupComparison | null = null;

    if (runs('lookups')) {
      // REST lookup by external id, random existing ids; GraphQL
      // userByExternalId, the same ids, against the same baseline (REST's).
      // Each round measures the baseline between the two service runs, the
      // service runs' order alternating, so that a machine slowing down or
      // speeding up during the run weighs on both sides alike.
      log(`lookups: ${options.rounds} round(s), ${options.duration} s each after ${options.warmup} s of warm-up, ${options.connections} connections`);
      let graphqlErrors = 0;
      const graphqlSpec: RunSpec = {
        method: 'POST',
        headers: (kind) => ({ ...withToken(kind), 'content-type': 'application/json' }),
        setupRequest: () => {
          graphqlErrors = 0; // built right before each run: count the measured run's only
          return (req) => ({
            ...req,
            path: '/graphql',
            body: JSON.stringify({ query: GRAPHQL_LOOKUP, variables: { id: randomId() } }),
          });
        },
        // A GraphQL failure answers 200 with "errors": count those too.
        onResponse: (status, body) => {
          if (status === 200 && (!body.startsWith('{"data":{"userByExternalId":{') || body.includes('"errors"'))) graphqlErrors++;
        },
      };
      // Apollo's floor: `{ __typename }`, answered without a resolver.
      let floorErrors = 0;
      const floorSpec: RunSpec = {
        method: 'POST',
        headers: () => ({ 'content-type': 'application/json' }),
        setupRequest: () => {
          floorErrors = 0;
          const body = JSON.stringify({ query: GRAPHQL_TYPENAME });
          return (req) => ({ ...req, path: '/graphql', body });
        },
        onResponse: (status, body) => {
          if (status === 200 && !body.startsWith('{"data":{"__typename":"Query"}}')) floorErrors++;
        },
      };
      type Key = LookupComparison['targets'][number]['name'];
      const measured: Record<Key, Figures[]> = { rest: [], graphql: [], baseline: [], mercurius: [], apollo_floor: [] };
      const graphqlRun = (on?: { target: Server; countStatements: boolean }) => async () => {
        const f = await measure(on ? 'baseline' : 'service', `GraphQL lookup${tagOf()}`, graphqlSpec, timed, on);
        f.badBodies = graphqlErrors;
        if (graphqlErrors > 0) warn(`GraphQL lookup (${on?.target.name ?? 'service'})${tagOf()}: ${graphqlErrors} responses with errors or without the user`);
        return f;
      };
      let currentRound = 0;
      const tagOf = () => (options.rounds > 1 ? ` [round ${currentRound + 1}/${options.rounds}]` : '');
      const runners: [Key, () => Promise<Figures>][] = [
        ['rest', () => measure('service', `REST lookup${tagOf()}`, lookupSpec, timed)],
        ['baseline', () => measure('baseline', `REST lookup${tagOf()}`, lookupSpec, timed)],
        ['graphql', graphqlRun()],
      ];
      if (mercurius && apolloFloor) {
        // Peers have no statement counter worth reading against the service's: not counted.
        runners.push(['mercurius', graphqlRun({ target: mercurius, countStatements: false })]);
        const floor = apolloFloor;
        runners.push([
          'apollo_floor',
          async () => {
            const f = await measure('baseline', `{ __typename }${tagOf()}`, floorSpec, timed, { target: floor, countStatements: false });
            f.badBodies = floorErrors;
            if (floorErrors > 0) warn(`{ __typename } (apollo-floor)${tagOf()}: ${floorErrors} unexpected answers`);
            return f;
          },
        ]);
      }
      // REST beside the baseline, the service's GraphQL beside Mercurius; the
      // order reversed every other round, so that a machine slowing down or
      // speeding up during the run weighs on every side alike.
      const order: string[][] = [];
      for (let r = 0; r < options.rounds; r++) {
        currentRound = r;
        const sequence = r % 2 === 0 ? runners : [...runners].reverse();
        order.push(sequence.map(([key]) => key));
        for (const [key, run] of sequence) measured[key].push(await run());
      }
      const base = medianFigures(measured.baseline);
      rest = scenario(
        'rest_user_lookup',
        'GET /users/external/{id}.json, random existing ids',
        'duration',
        options.connections,
        medianFigures(measured.rest),
        base,
        undefined,
        measured.rest.map((f, i) => roundOf(f, measured.baseline[i]!)),
      );
      scenario(
        'graphql_user_lookup',
        'POST /graphql userByExternalId (all 19 fields), random existing ids',
        'duration',
        options.connections,
        medianFigures(measured.graphql),
        base,
        'rest_user_lookup',
        measured.graphql.map((f, i) => roundOf(f, measured.baseline[i]!)),
      );
      const descriptions: Record<Key, string> = {
        rest: 'this service, REST lookup (session token)',
        graphql: 'this service, GraphQL lookup (session token)',
        baseline: 'bare node:http + pg, the same credential check',
        mercurius: "Mercurius + graphql-jit + pg, the full lookup, the baseline's credential check",
        apollo_floor: 'Apollo Server 5 on Fastify, { __typename } (no database)',
      };
      const perRoundRatio = (a: Figures[], b: Figures[], pick: (f: Figures) => number | null) =>
        a.map((f, i) => {
          const x = pick(f);
          const y = b[i] ? pick(b[i]) : null;
          return x === null || y === null ? NaN : ratio(x, y);
        });
      comparison = {
        rounds: options.rounds,
        order,
        targets: (Object.keys(measured) as Key[])
          .filter((key) => measured[key].length > 0)
          .map((key) => ({
            name: key,
            description: descriptions[key],
            figures: medianFigures(measured[key]),
            perRound: measured[key],
            toBaseline: spreadOf(perRoundRatio(measured[key], measured.baseline, (f) => f.reqPerSec)),
          })),
        graphqlToMercurius: measured.mercurius.length > 0 ? spreadOf(perRoundRatio(measured.graphql, measured.mercurius, (f) => f.reqPerSec)) : null,
        graphqlCpuToRest: spreadOf(perRoundRatio(measured.graphql, measured.rest, (f) => f.cpuMsPerRequest)),
      };
    }

    if (runs('registered')) {
      // Registered users of the global book, in rounds alternating which side goes first.
      const heavy = { duration: options.duration, warmup: options.warmup, connections: options.heavyConnections };
      log(`registered users: ${options.rounds} round(s), ${options.heavyConnections} connections`);
      for (const compact of [1, 0] as const) {
        const spec: RunSpec = {
          headers: withToken,
          setupRequest: () => (req) => ({ ...req, path: `/address_book/registered_users.json?compact=${compact}` }),
        };
        const label = `registered users compact=${compact}`;
        const svc: Figures[] = [];
        const bases: Figures[] = [];
        for (let r = 0; r < options.rounds; r++) {
          const tag = options.rounds > 1 ? ` [round ${r + 1}/${options.rounds}]` : '';
          for (const kind of r % 2 === 0 ? (['service', 'baseline'] as const) : (['baseline', 'service'] as const)) {
            (kind === 'service' ? svc : bases).push(await measure(kind, `${label}${tag}`, spec, heavy));
          }
        }
        scenario(
          `registered_users_${compact ? 'compact' : 'full'}`,
          `GET /address_book/registered_users.json?compact=${compact}: ${options.contacts.toLocaleString('en-US')} contacts, ` +
            `${seeded.contactsMatching.toLocaleString('en-US')} registered, ${options.users.toLocaleString('en-US')} users`,
          'duration',
          options.heavyConnections,
          medianFigures(svc),
          medianFigures(bases),
          undefined,
          svc.map((f, i) => roundOf(f, bases[i]!)),
        );
      }
    }

    // Deletes: fixed request counts, fresh ids for every request.
    if (runs('deletes')) log(`delete scenarios: fixed request counts, ${options.heavyConnections} connections`);
    for (const mode of runs('deletes') ? (['me', 'everyone'] as DeleteMode[]) : []) {
      for (const size of DELETE_SIZES as readonly DeleteSize[]) {
        const step = plan.find((p) => p.size === size)!;
        const results = {} as Record<'service' | 'baseline', Figures>;
        for (const kind of ['service', 'baseline'] as const) {
          const pool = seeded.pools[`${kind}:${mode}:${size}`];
          let sent = 0;
          let deleted = 0;
          let malformed = 0;
          const spec: RunSpec = {
            method: 'DELETE',
            headers: withToken,
            setupRequest: (_kind, phase) => {
              const chunks = phase === 'warm' ? pool.warm : pool.measured;
              // Built right before each run: count only the measured run's ids.
              sent = 0;
              deleted = 0;
              let next = 0;
              return (req) => {
                const ids = chunks[next++ % chunks.length]!;
                sent += ids.length;
                return { ...req, path: `/chat/Message/${ids.join(',')}.json?force=${mode === 'everyone' ? 1 : 0}` };
              };
            },
            onResponse: (status, body) => {
              if (status !== 200) return;
              try {
                deleted += (JSON.parse(body) as { SuccessfullyDeleted: { ids: string[] } }).SuccessfullyDeleted.ids.length;
              } catch {
                malformed++;
              }
            },
          };
          const label = `delete ${size} for ${mode}`;
          const f = await measure(kind, label, spec, {
            amount: step.measured,
            warmAmount: step.warm,
            connections: options.heavyConnections,
          });
          f.idsSent = sent;
          f.idsDeleted = deleted;
          if (deleted !== sent || malformed > 0) {
            warn(`${label} (${kind}): ${deleted} of ${sent} ids reported deleted${malformed ? `, ${malformed} unreadable bodies` : ''}`);
          }
          results[kind] = f;
        }
        scenario(
          `delete_${mode}_${size}`,
          `DELETE /chat/Message/{${size} id${size > 1 ? 's' : ''}}.json?force=${mode === 'everyone' ? 1 : 0} (${mode === 'me' ? 'for me' : 'for everyone'}), ` +
            `${step.measured} requests after ${step.warm} warm-up`,
          'amount',
          Math.min(options.heavyConnections, step.measured),
          results.service,
          results.baseline,
        );
      }
    }

    // ---- Sweeper: the REST lookup while the sweeper removes a backlog. ----
    // An instance of its own sweeping every second (the main service's
    // sweeper is off); each round measures it with nothing to sweep and with
    // a backlog of expired sessions seeded just before, the order
    // alternating. The ratio is sweeping / quiet: what the sweep costs the
    // requests served meanwhile, in the process and in the database.
    if (runs('sweeper')) {
      const sweeper = await startService(
        seeded.databaseUrl,
        options.poolMax,
        false,
        options.serviceFlags,
        { SWEEP_INTERVAL_MS: '1000', SWEEP_BATCH_SIZE: String(options.sweepBatch) },
        'sweeper',
      );
      const db = new Client({ connectionString: seeded.databaseUrl });
      await db.connect();
      try {
        log(
          `sweeper: ${options.rounds} round(s) of the REST lookup on an instance sweeping every second ` +
            `(batches of ${options.sweepBatch}), without and with ${options.sweepBacklog.toLocaleString('en-US')} expired sessions`,
        );
        // What the sweeper may remove: sessions whose expiry hour ended more than its grace (5 minutes) ago.
        const due = `SELECT count(*)::int AS n FROM sessions WHERE expiry_hour <= now() - interval '5 minutes' - interval '1 hour'`;
        const backlogLeft = async () => (await db.query<{ n: number }>(due)).rows[0]!.n;
        const removedSoFar = async () => {
          const text = await (await request(`${sweeper.url}/metrics`)).text();
          return Number(/^sweeper_removed_total\{kind="sessions"\} ([0-9.e+]+)$/m.exec(text)?.[1] ?? NaN);
        };
        const quiet: Figures[] = [];
        const busy: Figures[] = [];
        const sweepRuns: SweepFigures['runs'] = [];
        const on = { target: sweeper, countStatements: false };
        for (let r = 0; r < options.rounds; r++) {
          const tag = options.rounds > 1 ? ` [round ${r + 1}/${options.rounds}]` : '';
          for (const phase of r % 2 === 0 ? (['quiet', 'sweeping'] as const) : (['sweeping', 'quiet'] as const)) {
            if (phase === 'quiet') {
              // What an earlier round left is swept first.
              const deadline = Date.now() + 300_000;
              while ((await backlogLeft()) > 0 && Date.now() < deadline) await sleep(500);
              if ((await backlogLeft()) > 0) warn(`sweeper${tag}: the backlog was not swept within 5 minutes; the quiet run is not quiet`);
              quiet.push(await measure('service', `REST lookup, nothing to sweep${tag}`, lookupSpec, timed, on));
              continue;
            }
            const seeding = performance.now();
            await db.query(
              `INSERT INTO sessions (token_hash, application_id, user_id, expires_at)
               SELECT md5('bench-expired-' || $2::text || '-' || g), $1, NULL, now() - interval '1 day' - g * interval '1 millisecond'
                 FROM generate_series(1, $3::int) g`,
              [seeded.applicationId, `${r}-${Date.now()}`, options.sweepBacklog],
            );
            log(`  seeded ${options.sweepBacklog.toLocaleString('en-US')} expired sessions in ${Math.round(performance.now() - seeding) / 1000} s`);
            const before = await removedSoFar();
            const started = performance.now();
            busy.push(await measure('service', `REST lookup, sweeping${tag}`, lookupSpec, timed, on));
            const seconds = (performance.now() - started) / 1000;
            const removed = (await removedSoFar()) - before;
            const leftAtEnd = await backlogLeft();
            sweepRuns.push({ removed, seconds: round2(seconds), rowsPerSecond: Math.round(removed / seconds), leftAtEnd });
            log(
              `  the sweeper removed ${removed.toLocaleString('en-US')} sessions in ${round2(seconds)} s (${Math.round(removed / seconds)}/s); ${leftAtEnd.toLocaleString('en-US')} left`,
            );
            if (leftAtEnd === 0) warn(`sweeper${tag}: the backlog was gone before the run ended (raise --sweep-backlog to load the whole run)`);
          }
        }
        const s = scenario(
          'sweeper_rest_lookup',
          `GET /users/external/{id}.json while the sweeper removes ${options.sweepBacklog.toLocaleString('en-US')} expired sessions ` +
            `(batches of ${options.sweepBatch}), against the same instance with nothing to sweep`,
          'duration',
          options.connections,
          medianFigures(busy),
          medianFigures(quiet),
          'the same instance with nothing to sweep',
          busy.map((f, i) => roundOf(f, quiet[i]!)),
        );
        s.sweep = { backlog: options.sweepBacklog, batchSize: options.sweepBatch, runs: sweepRuns };
      } finally {
        await db.end();
        await sweeper.stop();
      }
    }

    // ---- Soak: the REST lookup at 70% of the measured peak, sampling RSS. ----
    let soak: Soak | null = null;
    if (options.soak > 0 && rest) {
      const rate = Math.max(1, Math.round(rest.service.reqPerSec * options.soakShare));
      const sampleMs = Math.min(5_000, Math.max(250, (options.soak * 1000) / 10));
      const referenceAtS = Math.min(60, options.soak / 5);
      log(
        `soak: REST lookup at ${rate} req/s (${options.soakShare * 100}% of ${rest.service.reqPerSec}) for ${options.soak} s, RSS every ${sampleMs / 1000} s`,
      );
      const samples: { t: number; rssMb: number }[] = [];
      const bar = timer('soak', options.soak);
      const achieved = await fire({
        url: service.url,
        pid: service.pid,
        headers: withToken('service'),
        connections: options.connections,
        pipelining: options.pipelining,
        duration: options.soak,
        overallRate: rate,
        setupRequest: lookupSpec.setupRequest!('service', 'measured'),
        sampleMs,
        onSample: (elapsed, rss) => samples.push({ t: Math.round(elapsed * 10) / 10, rssMb: mb(rss)! }),
      }).finally(() => bar.stop());
      const reference = samples.find((s) => s.t >= referenceAtS) ?? samples[0]!;
      const end = samples[samples.length - 1]!;
      const maxRssMb = Math.max(...samples.map((s) => s.rssMb));
      soak = {
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
      if (achieved.non2xx > 0 || achieved.errors > 0) warn(`soak: ${achieved.non2xx} non-2xx responses, ${achieved.errors} errors`);
      log(
        `soak: ${achieved.reqPerSec} req/s achieved, p50 ${achieved.p50} ms, p99 ${achieved.p99} ms; ` +
          `RSS ${soak.rssAtReferenceMb} MB at ${reference.t} s → ${soak.rssAtEndMb} MB at ${end.t} s (${soak.growthPct}%), max ${maxRssMb} MB`,
      );
    }

    const hwm = { service: memoryOf(service.pid)?.hwm ?? null, baseline: memoryOf(baseline.pid)?.hwm ?? null };
    const { serverUrl: _server, ...settings } = options;
    return {
      harness: 'chatsvc-bench',
      version: 1,
      startedAt,
      finishedAt: new Date().toISOString(),
      smoke: options.smoke,
      machine: machineInfo,
      git: git(),
      settings: {
        ...settings,
        server: redact(options.serverUrl),
        serviceEnv: SERVICE_BENCH_ENV,
        deletePlan: plan,
      },
      seeding: {
        seconds: seeded.timings,
        users: options.users,
        contacts: options.contacts,
        contactsMatching: seeded.contactsMatching,
        bigContacts: options.bigContacts,
        bigMatching: seeded.bigMatching,
        messages: seeded.messagesSeeded,
      },
      parity,
      correctness,
      scenarios,
      lookups: comparison,
      soak,
      // VmHWM: the peak resident set over each process's whole life.
      memory: { servicePeakMb: mb(hwm.service), baselinePeakMb: mb(hwm.baseline) },
      bigBookStatementsPerRequest,
      warnings,
    };
  } catch (error) {
    // Say what the servers were doing: a crash shows in its stderr.
    const notes = [service, baseline, mercurius, apolloFloor]
      .filter((server): server is Server => server !== undefined)
      .map((server) => {
        const ended = server.exit();
        const state = ended ? `EXITED (${ended})` : 'still running';
        const tail = server.stderr.slice(-15).join('\n');
        const out = ended ? server.stdoutTail() : '';
        return `${server.name} (pid ${server.pid}) ${state}` + `${tail ? `; its stderr ends:\n${tail}` : ''}${out.trim() ? `\nits stdout ends:\n${out}` : ''}`;
      });
    if (notes.length > 0 && error instanceof Error) error.message += `\n${notes.join('\n')}`;
    throw error;
  } finally {
    const codes = await Promise.all([service?.stop(), baseline?.stop(), mercurius?.stop(), apolloFloor?.stop()]);
    if (service && codes[0] !== 0 && codes[0] !== undefined) log(`service exited with code ${codes[0]}`);
    if (options.dropAtEnd) await dropDatabase(options).catch((e: unknown) => log(`could not drop ${options.database}: ${(e as Error).message}`));
  }
}
