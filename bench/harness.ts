// The benchmark: seed, start the service and the baseline, check they agree,
// drive every scenario against both with the same settings, soak the service,
// and return the report (bench/report.ts prints and judges it). Each step is a
// module of its own; runBench reads as the list of steps.
import { Client } from 'pg';
import { type BigBook, type Correctness, checkBigBook } from './big-book';
import { contextOf } from './context';
import { mb } from './figures';
import { type GitState, type Machine, git, machine, redact } from './machine';
import type { BenchOptions, ScenarioGroup } from './options';
import { type Parity, checkParity } from './parity';
import { SERVICE_BENCH_ENV, memoryOf } from './processes';
import { log } from './progress';
import { runDeletes } from './scenarios/deletes';
import { type HistoryComparison, runHistory } from './scenarios/history';
import { type Live, runLive } from './scenarios/live';
import { type LookupComparison, type Lookups, runLookups } from './scenarios/lookups';
import { runRegistered } from './scenarios/registered';
import type { Scenario } from './scenarios/scenario';
import { runSweeper } from './scenarios/sweeper';
import { type SeedResult, deletePlan, dropDatabase, seed } from './seed';
import { type Servers, describeServers, startServers, stopServers } from './servers';
import { type Soak, runSoak } from './soak';

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
    historyMessages: number | null;
    liveDialogs: number | null;
  };
  parity: Parity;
  correctness: Correctness[];
  scenarios: Scenario[];
  /** The lookups beside the baseline and the peers (null: lookups not run). */
  lookups: LookupComparison | null;
  soak: Soak | null;
  /** The history pages (issue 32) beside the bare keyset query (null: not run). */
  history: HistoryComparison | null;
  /** Live sockets, their memory and delivery latency (issue 33) (null: not run). */
  live: Live | null;
  memory: { servicePeakMb: number | null; baselinePeakMb: number | null };
  /** Statements per request of the service for the big-book check. */
  bigBookStatementsPerRequest: number | null;
  warnings: string[];
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

  let servers: Servers | undefined;
  try {
    servers = await startServers(options, seeded);
    const ctx = contextOf(options, seeded, servers, warn);
    const parity = await checkParity(ctx);
    const bigBook = await checkBigBook(ctx);

    await warnWithoutAutovacuum(seeded.databaseUrl, warn);
    let first = true;
    /** A group's run, after the dead rows of the groups before it are vacuumed (not the first: the seed vacuumed). */
    const runs = async <T>(group: ScenarioGroup, run: () => Promise<T>): Promise<T | null> => {
      if (!options.only.includes(group)) return null;
      if (!first) await vacuum(seeded.databaseUrl);
      first = false;
      return run();
    };
    const lookups = await runs('lookups', () => runLookups(ctx));
    const registered = (await runs('registered', () => runRegistered(ctx))) ?? [];
    const deletes = (await runs('deletes', () => runDeletes(ctx, plan))) ?? [];
    const sweeper = (await runs('sweeper', () => runSweeper(ctx))) ?? [];
    const history = await runs('history', () => runHistory(ctx));
    const live = await runs('live', () => runLive(ctx));
    const scenarios = [...(lookups?.scenarios ?? []), ...registered, ...deletes, ...sweeper, ...(history?.scenarios ?? []), ...(live?.scenarios ?? [])];

    const soak = options.soak > 0 && lookups ? await runSoak(ctx, lookups.rest) : null;
    return reportOf({
      options,
      startedAt,
      machineInfo,
      plan,
      seeded,
      servers,
      parity,
      bigBook,
      scenarios,
      lookups,
      soak,
      history: history?.comparison ?? null,
      live: live?.live ?? null,
      warnings,
    });
  } catch (error) {
    describeServers(error, servers);
    throw error;
  } finally {
    await stopServers(servers);
    if (options.dropAtEnd) await dropDatabase(options).catch((e: unknown) => log(`could not drop ${options.database}: ${(e as Error).message}`));
  }
}

/**
 * Between scenario groups, what autovacuum would do meanwhile: the dead rows
 * of the deletes, the sweeper's backlogs and the rest vacuumed, statistics
 * taken. Done by the benchmark, so that a group's figures do not depend on
 * whether and when the server's autovacuum ran: on a server with it off (this
 * machine's CI configuration) 934,000 dead sessions and 218,000 dead messages
 * stayed, and the live scenario's UPDATEs took 2 s each. Not measured.
 */
async function vacuum(databaseUrl: string): Promise<void> {
  await onDatabase(databaseUrl, async (db) => {
    const started = performance.now();
    await db.query('VACUUM (ANALYZE)');
    log(`VACUUM (ANALYZE) between scenario groups: ${Math.round(performance.now() - started) / 1000} s (not measured)`);
  });
}

/** Said in the report: without autovacuum, only the benchmark's own VACUUMs between groups clean up. */
async function warnWithoutAutovacuum(databaseUrl: string, warn: (message: string) => void): Promise<void> {
  await onDatabase(databaseUrl, async (db) => {
    const { rows } = await db.query<{ autovacuum: string }>('SHOW autovacuum');
    if (rows[0]?.autovacuum !== 'on') warn('autovacuum is off on this server: dead rows stay within a scenario group (the benchmark vacuums between groups)');
  });
}

/** `work` on a connection of its own to the bench database, closed after. */
async function onDatabase(databaseUrl: string, work: (db: Client) => Promise<void>): Promise<void> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await work(db);
  } finally {
    await db.end();
  }
}

/** What the steps found, for the report. */
interface Outcome {
  options: BenchOptions;
  startedAt: string;
  machineInfo: Machine;
  plan: ReturnType<typeof deletePlan>;
  seeded: SeedResult;
  servers: Servers;
  parity: Parity;
  bigBook: BigBook;
  scenarios: Scenario[];
  lookups: Lookups | null;
  soak: Soak | null;
  history: HistoryComparison | null;
  live: Live | null;
  warnings: string[];
}

function reportOf(o: Outcome): Report {
  const { options, seeded } = o;
  const hwm = { service: memoryOf(o.servers.service.pid)?.hwm ?? null, baseline: memoryOf(o.servers.baseline.pid)?.hwm ?? null };
  const { serverUrl: _server, ...settings } = options;
  return {
    harness: 'chatsvc-bench',
    version: 1,
    startedAt: o.startedAt,
    finishedAt: new Date().toISOString(),
    smoke: options.smoke,
    machine: o.machineInfo,
    git: git(),
    settings: {
      ...settings,
      server: redact(options.serverUrl),
      serviceEnv: SERVICE_BENCH_ENV,
      deletePlan: o.plan,
    },
    seeding: {
      seconds: seeded.timings,
      users: options.users,
      contacts: options.contacts,
      contactsMatching: seeded.contactsMatching,
      bigContacts: options.bigContacts,
      bigMatching: seeded.bigMatching,
      messages: seeded.messagesSeeded,
      historyMessages: seeded.history?.messages ?? null,
      liveDialogs: seeded.live?.dialogs.length ?? null,
    },
    parity: o.parity,
    correctness: o.bigBook.correctness,
    scenarios: o.scenarios,
    lookups: o.lookups?.comparison ?? null,
    soak: o.soak,
    history: o.history,
    live: o.live,
    // VmHWM: the peak resident set over each process's whole life.
    memory: { servicePeakMb: mb(hwm.service), baselinePeakMb: mb(hwm.baseline) },
    bigBookStatementsPerRequest: o.bigBook.statementsPerRequest,
    warnings: o.warnings,
  };
}
