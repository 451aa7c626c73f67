// Command-line flags of `npm run bench` (bench/run.ts).
import { parseArgs } from 'node:util';

export interface BenchOptions {
  /** PostgreSQL server URL; its database is only used to create and drop the bench database. */
  serverUrl: string;
  /** The database the harness creates (dropped first if it exists). */
  database: string;
  /** Drop the bench database at the end (smoke runs do). */
  dropAtEnd: boolean;
  smoke: boolean;
  users: number;
  /** Users per users.createMany call. */
  userBatch: number;
  /** Contacts of the caller's global address book. */
  contacts: number;
  /** Contacts of the caller's book 'big', for the correctness check. */
  bigContacts: number;
  /** Share of each book whose phones are registered users' phones. */
  matchShare: number;
  /** Messages seeded for the delete scenarios (split into one fresh pool per scenario and target). */
  messages: number;
  /** Seconds per measured duration run. */
  duration: number;
  /** Seconds of excluded warm-up before each measured duration run. */
  warmup: number;
  /**
   * Rounds of each timed scenario, alternating which side goes first; the
   * report gives the median round and the spread. One 10 s run on these
   * machines is not a figure: the same build measured 0.62 and 0.85.
   */
  rounds: number;
  /** Scenario groups to run (default all): lookups, registered, deletes, sweeper, history, live. */
  only: ScenarioGroup[];
  /**
   * Measure the GraphQL peers with the lookups (Mercurius doing the same
   * lookup, Apollo Server alone doing it, Apollo Server's `{ __typename }`):
   * issue 18's references.
   */
  peers: boolean;
  /** Run the service under `node --cpu-prof`; its profile lands in artifacts/profiles/. */
  cpuProf: boolean;
  /** Extra node flags for the service alone (V8 heap settings tried against the same baseline). */
  serviceFlags: string[];
  connections: number;
  /**
   * Connections of the heavy scenarios (registered users, deletes), whose
   * targets are latencies: at 32 concurrent requests of tens of milliseconds
   * on 2 cores, latency is mostly queueing.
   */
  heavyConnections: number;
  pipelining: number;
  /** Seconds of the soak at 70% of the REST lookup's peak req/s (0: no soak). */
  soak: number;
  /** Share of the measured peak the soak runs at. */
  soakShare: number;
  /** Connections of the service's pool and of the baseline's (the same for both). */
  poolMax: number;
  /** The baseline's token check also slides the session and stamps the user (as the service's sessions promise). */
  baselineSessionWrites: boolean;
  /** Where the JSON report goes (default artifacts/bench-<timestamp>.json). */
  out: string | undefined;
  /** Expired sessions seeded before each sweeping round of the sweeper scenario. */
  sweepBacklog: number;
  /** SWEEP_BATCH_SIZE of the sweeper scenario's instance. */
  sweepBatch: number;
  /** History scenarios (issue 32): messages of the one dialog whose pages are read. */
  historyMessages: number;
  /** Live scenario (issue 33): WebSockets held open on the service, one messagesDeleted subscription each. */
  liveSockets: number;
  /** Live scenario: dialogs the sockets subscribe to (liveSockets / liveDialogs subscribers each). */
  liveDialogs: number;
  /** Live scenario: deletes for everyone a second, spread over the dialogs. */
  liveRate: number;
  /** Live scenario: seconds of each latency run (one per round). */
  liveSeconds: number;
}

export const SCENARIO_GROUPS = ['lookups', 'registered', 'deletes', 'sweeper', 'history', 'live'] as const;
export type ScenarioGroup = (typeof SCENARIO_GROUPS)[number];

export const DEFAULT_SERVER_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

const FULL = {
  users: 1_000_000,
  userBatch: 10_000,
  contacts: 10_000,
  bigContacts: 100_000,
  // Three rounds of the deletes on each side: 72 requests of 1,000 ids, 162
  // of 100 and 1,800 of 1 a round. At 400,000 a round of 100 ids was 48
  // requests, a tenth of a second: its p99 was its slowest request, and its
  // ratio moved 0.64–1.41 between runs of the same code.
  messages: 1_200_000,
  duration: 10,
  warmup: 2,
  rounds: 3,
  connections: 32,
  heavyConnections: 4,
  soak: 300,
  // Enough that the sweep outlasts a round's warm-up and measured run on an
  // idle 2-core machine (~50,000 rows/s with nothing else to do).
  sweepBacklog: 1_000_000,
  historyMessages: 1_000_000,
  liveSockets: 10_000,
  liveDialogs: 1_000,
  liveRate: 1_000,
  liveSeconds: 10,
};

// Tiny data: seconds. The big book stays just above PostgreSQL's 65,535
// bind-parameter limit, so the check still proves no statement binds one
// parameter per contact. 6,000 messages are the least that give every delete
// scenario (4 pools of 1,000 + 100 + 1 ids) at least one request.
const SMOKE = {
  users: 2_000,
  userBatch: 1_000,
  contacts: 200,
  bigContacts: 66_000,
  messages: 6_000,
  duration: 1,
  warmup: 0.5,
  rounds: 1,
  connections: 8,
  heavyConnections: 2,
  soak: 3,
  sweepBacklog: 20_000,
  // Small enough that REST's deepest skip (messages - 50: one page of its walk) answers many times within
  // a 1 s run even beside CI's other test files: at 2,000 (two pages of the walk) a loaded CI run once
  // completed none.
  historyMessages: 300,
  liveSockets: 200,
  liveDialogs: 20,
  liveRate: 100,
  liveSeconds: 1,
};

export const USAGE = `Usage: npm run bench -- [options]

Seeds a database of its own on a PostgreSQL server, starts the service and a
bare node:http + pg baseline, drives both with autocannon and reports every
scenario beside the baseline. Writes artifacts/bench-<timestamp>.json.

  DATABASE_URL            PostgreSQL server (default ${DEFAULT_SERVER_URL})
  --smoke                 tiny data, 1 s per scenario (a unique database, dropped at the end)
  --users N               users in the application (${FULL.users})
  --user-batch N          users per users.createMany call (${FULL.userBatch})
  --contacts N            contacts in the caller's global address book (${FULL.contacts})
  --big-contacts N        contacts in the caller's book 'big' for the correctness check (${FULL.bigContacts})
  --messages N            messages for the delete scenarios (${FULL.messages})
  --duration S            seconds per measured run (${FULL.duration})
  --warmup S              seconds of excluded warm-up before each run (${FULL.warmup})
  --rounds N              rounds of each timed scenario, alternating service and baseline (${FULL.rounds});
                          the report gives the median round and the spread
  --only LIST             scenario groups, comma-separated: ${SCENARIO_GROUPS.join(', ')} (all)
  --no-peers              skip the GraphQL peers of the lookups (Mercurius doing the same lookup with the
                          baseline's credential check, Apollo Server's { __typename } on Fastify)
  --cpu-prof              run the service (and the peers) under node --cpu-prof (artifacts/profiles/); summarise
                          with: npm run bench:profile -- <file.cpuprofile>
  --service-flags=F…      extra node flags for the service only (--service-flags=--max-semi-space-size=8)
  --connections N         autocannon connections of the lookups and the soak (${FULL.connections})
  --heavy-connections N   connections of the registered-users and delete scenarios (${FULL.heavyConnections})
  --pipelining N          autocannon pipelining (1)
  --soak S                seconds of the soak at 70% of peak (${FULL.soak}; 0 skips it)
  --pool N                database connections of the service and of the baseline (10)
  --baseline-session-writes  the baseline's token check also slides the session and stamps the user
  --sweep-backlog N       sweeper scenario: expired sessions seeded before each sweeping round (${FULL.sweepBacklog})
  --sweep-batch N         sweeper scenario: SWEEP_BATCH_SIZE of its instance (1000)
  --history-messages N    history: messages of the dialog whose pages are read (${FULL.historyMessages})
  --live-sockets N        live: WebSockets held open, one messagesDeleted subscription each (${FULL.liveSockets})
  --live-dialogs N        live: dialogs they subscribe to, sockets / dialogs subscribers each (${FULL.liveDialogs})
  --live-rate N           live: deletes for everyone a second, spread over the dialogs (${FULL.liveRate})
  --live-seconds S        live: seconds of each latency run, one per round (${FULL.liveSeconds})
  --database NAME         the bench database (chatsvc_bench; smoke: a unique name)
  --keep                  keep a smoke run's database
  --out FILE              the JSON report's path
  -h, --help
`;

/** parseArgs' description of the flags (USAGE words them). */
const FLAGS = {
  smoke: { type: 'boolean' },
  users: { type: 'string' },
  'user-batch': { type: 'string' },
  contacts: { type: 'string' },
  'big-contacts': { type: 'string' },
  messages: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  rounds: { type: 'string' },
  only: { type: 'string' },
  'cpu-prof': { type: 'boolean' },
  'no-peers': { type: 'boolean' },
  'service-flags': { type: 'string' },
  connections: { type: 'string' },
  'heavy-connections': { type: 'string' },
  pipelining: { type: 'string' },
  soak: { type: 'string' },
  pool: { type: 'string' },
  'baseline-session-writes': { type: 'boolean' },
  'sweep-backlog': { type: 'string' },
  'sweep-batch': { type: 'string' },
  'history-messages': { type: 'string' },
  'live-sockets': { type: 'string' },
  'live-dialogs': { type: 'string' },
  'live-rate': { type: 'string' },
  'live-seconds': { type: 'string' },
  database: { type: 'string' },
  keep: { type: 'boolean' },
  out: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A numeric flag's value (`fallback` when not given), at least `min`. */
function num(name: string, value: string | undefined, fallback: number, min: number, integer = true): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new Error(`--${name} must be ${integer ? 'an integer' : 'a number'} ≥ ${min} (got ${value})`);
  }
  return n;
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): BenchOptions | 'help' {
  const { values } = parseArgs({ args: argv, strict: true, options: FLAGS });
  if (values.help) return 'help';
  const smoke = values.smoke ?? false;
  const base = smoke ? SMOKE : FULL;
  const serverUrl = env.DATABASE_URL || DEFAULT_SERVER_URL;
  if (!/^postgres(ql)?:\/\//.test(serverUrl)) throw new Error('DATABASE_URL must be a postgres:// URL');
  const database = values.database ?? (smoke ? `chatsvc_bench_smoke_${process.pid}_${Date.now().toString(36)}` : 'chatsvc_bench');
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database)) throw new Error('--database must be a lower-case SQL identifier');
  const options: BenchOptions = {
    serverUrl,
    database,
    dropAtEnd: smoke && !values.keep,
    smoke,
    users: num('users', values.users, base.users, 3),
    userBatch: num('user-batch', values['user-batch'], base.userBatch, 1),
    contacts: num('contacts', values.contacts, base.contacts, 1),
    bigContacts: num('big-contacts', values['big-contacts'], base.bigContacts, 1),
    matchShare: 0.2,
    messages: num('messages', values.messages, base.messages, 1),
    duration: num('duration', values.duration, base.duration, 0.1, false),
    warmup: num('warmup', values.warmup, base.warmup, 0, false),
    rounds: num('rounds', values.rounds, base.rounds, 1),
    only: parseGroups(values.only),
    peers: !(values['no-peers'] ?? false),
    cpuProf: values['cpu-prof'] ?? false,
    serviceFlags: (values['service-flags'] ?? '').split(' ').filter(Boolean),
    connections: num('connections', values.connections, base.connections, 1),
    heavyConnections: num('heavy-connections', values['heavy-connections'], base.heavyConnections, 1),
    pipelining: num('pipelining', values.pipelining, 1, 1),
    soak: num('soak', values.soak, base.soak, 0, false),
    soakShare: 0.7,
    poolMax: num('pool', values.pool, 10, 1),
    baselineSessionWrites: values['baseline-session-writes'] ?? false,
    out: values.out,
    sweepBacklog: num('sweep-backlog', values['sweep-backlog'], base.sweepBacklog, 1),
    sweepBatch: num('sweep-batch', values['sweep-batch'], 1_000, 1),
    historyMessages: num('history-messages', values['history-messages'], base.historyMessages, 1_000),
    liveSockets: num('live-sockets', values['live-sockets'], base.liveSockets, 1),
    liveDialogs: num('live-dialogs', values['live-dialogs'], base.liveDialogs, 1),
    liveRate: num('live-rate', values['live-rate'], base.liveRate, 1),
    liveSeconds: num('live-seconds', values['live-seconds'], base.liveSeconds, 0.1, false),
  };
  if (options.liveSockets % options.liveDialogs !== 0)
    throw new Error('--live-sockets must be a multiple of --live-dialogs (the same subscribers in every dialog)');
  // One user per socket: users 3.. (1 is the caller, 2 the other occupant).
  if (options.liveSockets > options.users - 2) throw new Error('--live-sockets: at most --users - 2 (one user per socket)');
  if (options.sweepBatch > 100_000) throw new Error("--sweep-batch: at most 100000 (SWEEP_BATCH_SIZE's bound)");
  if (options.users > 9_999_999) throw new Error('--users: at most 9,999,999 (phones are +1555 and 7 digits)');
  return options;
}

function parseGroups(value: string | undefined): ScenarioGroup[] {
  if (value === undefined) return [...SCENARIO_GROUPS];
  const groups = value.split(',').map((g) => g.trim());
  const unknown = groups.filter((g) => !(SCENARIO_GROUPS as readonly string[]).includes(g));
  if (unknown.length > 0 || groups.length === 0) throw new Error(`--only: one or more of ${SCENARIO_GROUPS.join(', ')} (got ${value})`);
  return groups as ScenarioGroup[];
}
