// `npm run scale:proof`: the service past one machine, on this one machine,
// from Debian's packages: a primary PostgreSQL 15 and a streaming hot standby
// (pg_basebackup -R), a Redis of its own (so it can be restarted), PgBouncer in
// transaction mode in front of the primary, 3 service instances (unnamed
// statements through PgBouncer, reads on the standby, limits and revocations
// through Redis) and HAProxy checking /readyz. A fixed-rate mixed load runs
// over every operation for --duration seconds while faults are injected:
// SIGKILL one instance and restart it, restart the standby, SIGTERM another
// and restart it, kill every instance's LISTEN connection, restart Redis.
// Live subscribers (scripts/scale/live.ts) run on every instance and through
// HAProxy while sends and deletes hit random instances.
//
// It asserts and prints: every acknowledged write present on the primary and,
// after catch-up, on the standby, and at least half the writes the schedule
// asks for acknowledged; 0 stale read-after-write pairs, at least half the
// scheduled ones checked; every failed attempt a documented 503 (or no answer
// while an instance is killed), none failed outside the fault windows, none
// at all in the rolling restart (SIGTERM, drain); the credential budget exact
// across the 3 instances; a revoked session refused everywhere while its
// credential cache would still have held it; 0 new deadlocks; reads served by
// the replica > 0; errors per fault window and how long each lasted; p50/p99
// per phase. And the live checks (scripts/scale/live.ts): every subscriber
// received every event it is owed exactly once, in order per dialog, across
// the instance kill (its clients reconnecting elsewhere with `after`) and the
// LISTEN connections' kill; every acknowledged write one event; a session
// ended on one instance closes its sockets on all with 4403 within a second;
// delivery latency p50/p99.
import { Pool } from 'pg';
import { type Cluster, clustersAvailable, createPrimary, createStandby } from '../lib/pg-cluster';
import { writePgbouncerConfig } from '../lib/pgbouncer';
import { freePort } from '../lib/ports';
import {
  acknowledgedCheck,
  caughtUp,
  countingInRedis,
  credentialBudget,
  deadlocks,
  enough,
  failuresDocumented,
  pairsCheck,
  revocation,
  writesPresent,
} from './assertions';
import { type Fault, type FaultWindow, inWindow, scheduleFaults } from './faults';
import { BASE_PACKAGES, installDebianPackages } from './install';
import { CREDENTIAL_BUDGET, type Instances, ready, replicaReads, startInstances, startRedis } from './instances';
import { type LoadResult, runLoad, scheduled } from './load';
import { log, postgresUser, type Runner, sleep, waitFor } from './processes';
import { type Check, failedOutside, phaseTable, printReport, windowTable } from './report';
import { type Seeded, seed } from './seed';
import {
  baselineCursor,
  dialogsOf,
  killListeners,
  listenBackends,
  liveChecks,
  runLiveWrites,
  sessionEndCloses,
  settle,
  startSubscribers,
  storedEvents,
} from './live';

export interface BaseOptions {
  durationS: number;
  rate: number;
  /** The live writes (sends, deletes) per second, beside the mixed load (scripts/scale/live.ts). */
  liveRate: number;
  users: number;
  /** The load's writes refused (a check of the checks, load.ts): the run must fail. */
  refuseWrites?: boolean;
}

const DRAIN_FAULT = 'SIGTERM instance 1 (drain), restart it';
const KILL_FAULT = 'SIGKILL instance 0, restart it';
const LISTENER_FAULT = "kill every instance's LISTEN connection";

interface Topology {
  dir: string;
  primary: Cluster;
  standby: Cluster;
  bouncerUrl: string;
  redis: Awaited<ReturnType<typeof startRedis>>;
  instances: Instances;
  seeded: Seeded;
  primaryPool: Pool;
  standbyPool: Pool;
}

async function startPgbouncer(runner: Runner, dir: string, port: number, primaryPort: number): Promise<string> {
  const bouncer = writePgbouncerConfig({
    dir,
    listenPort: port,
    server: { host: '127.0.0.1', port: primaryPort, database: 'postgres', user: 'postgres' },
    poolSize: 20,
    maxClientConn: 1000,
  });
  // Its own pid (-u keeps it in the foreground as postgres), so stopping it is stopping that pid.
  runner.start('pgbouncer', bouncer.command, bouncer.args);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitFor('pgbouncer', async () => {
    const pool = new Pool({ connectionString: url, max: 1 });
    try {
      return (await pool.query('SELECT 1')).rowCount === 1;
    } finally {
      await pool.end();
    }
  });
  return url;
}

async function startTopology(runner: Runner, options: BaseOptions): Promise<Topology> {
  const dir = runner.tempDir('chatsvc-scale-proof-', postgresUser());
  const [primaryPort, standbyPort, bouncerPort, redisPort, haproxyPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const instancePorts = [await freePort(), await freePort(), await freePort()];
  log(`primary :${primaryPort}, standby :${standbyPort}`);
  const primary = createPrimary(primaryPort);
  runner.defer(() => primary.destroy());
  const standby = createStandby(primary, standbyPort);
  runner.defer(() => standby.destroy());
  const seeded = await seed(primary.url, options.users);
  const redis = await startRedis(runner, redisPort);
  const bouncerUrl = await startPgbouncer(runner, dir, bouncerPort, primaryPort);
  const instances = await startInstances(runner, dir, instancePorts, haproxyPort, {
    databaseUrl: bouncerUrl,
    readUrl: standby.url,
    redisUrl: redis.url,
    secretsKey: seeded.secretsKey,
    // LISTEN does not survive transaction pooling: each instance's live listener goes to the primary itself (SCALING.md).
    extra: { DB_PREPARED_STATEMENTS: 'unnamed', LIVE_LISTEN_URL: primary.url },
  });
  log(`instances :${instancePorts.join(', :')}`);
  const primaryPool = new Pool({ connectionString: primary.url, max: 2 });
  const standbyPool = new Pool({ connectionString: standby.url, max: 2 });
  for (const pool of [primaryPool, standbyPool]) {
    pool.on('error', () => {});
    runner.defer(() => pool.end().catch(() => {}));
  }
  return { dir, primary, standby, bouncerUrl, redis, instances, seeded, primaryPool, standbyPool };
}

function faults(top: Topology): Fault[] {
  const { instances, standby, standbyPool, redis } = top;
  return [
    {
      name: KILL_FAULT,
      at: 0.15,
      dropsConnections: true,
      run: async () => {
        instances.procs[0]!.child.kill('SIGKILL');
        await sleep(1_000);
        instances.start(0);
        await waitFor('instance 0 back', ready(instances.ports[0]!), 90_000);
      },
    },
    {
      name: 'restart the standby',
      at: 0.35,
      run: async () => {
        standby.stop('fast');
        await sleep(1_000);
        standby.start();
        await waitFor('standby back', async () => (await standbyPool.query('SELECT 1')).rowCount === 1);
      },
    },
    {
      // A rolling restart's step: the instance drains (SHUTDOWN_DELAY_MS,
      // production's 5 s: HAProxy's checks take it out first), exits, and
      // its replacement joins; not one attempt may fail (checked below).
      name: DRAIN_FAULT,
      at: 0.55,
      run: async () => {
        const exited = instances.procs[1]!.exited();
        instances.procs[1]!.child.kill('SIGTERM');
        await exited;
        instances.start(1);
        await waitFor('instance 1 back', ready(instances.ports[1]!), 90_000);
      },
    },
    {
      // The live listeners' connections (pg_terminate_backend): each instance reconnects and catches up from live_events.
      name: LISTENER_FAULT,
      at: 0.65,
      run: () => killListeners(top.primaryPool, instances.metricsPorts),
    },
    { name: 'restart Redis', at: 0.75, run: () => redis.restart() },
  ];
}

/** Attempts that failed (a 503, a reset, a refusal), retried or not, in the drain's window: a rolling restart must cost none. */
function drainCheck(load: LoadResult, windows: FaultWindow[]): Check {
  const window = windows.find((w) => w.name === DRAIN_FAULT);
  if (!window) return { name: 'rolling restart through HAProxy: failed attempts', ok: false, detail: 'the drain fault did not run' };
  const samples = load.samples.filter((s) => inWindow(window, s.at));
  const failed = samples.filter((s) => !s.ok || s.failed.length > 0);
  const kinds = failed.flatMap((s) => [...s.failed.map((f) => f.kind), ...(s.ok ? [] : [s.kind ?? String(s.status)])]);
  return {
    name: 'rolling restart through HAProxy (SIGTERM, drain, restart): failed attempts',
    ok: failed.length === 0,
    detail: `${failed.length} of ${samples.length} requests in the window${kinds.length > 0 ? ` (${[...new Set(kinds)].join(', ')})` : ''}`,
  };
}

async function checksAfter(top: Topology, load: LoadResult, options: BaseOptions, windows: FaultWindow[], deadlocksBefore: number): Promise<Check[]> {
  const { instances, primaryPool, standbyPool, seeded } = top;
  await countingInRedis(instances.ports);
  const budget = await credentialBudget(instances.ports, CREDENTIAL_BUDGET);
  const revoked = await revocation(instances.ports, top.primary.url, seeded.applicationId, seeded.users[0]!.id, seeded.secretsKey);
  // The base proof's writes are its uploads (deletes are checked by the failover proof).
  const uploads = load.acknowledged.filter((w) => w.kind === 'upload');
  const onPrimary = await writesPresent(primaryPool, uploads);
  await caughtUp(primaryPool, standbyPool);
  const onStandby = await writesPresent(standbyPool, uploads);
  const newDeadlocks = (await deadlocks(primaryPool)) - deadlocksBefore;
  const replica = await replicaReads(instances.metricsPorts);
  const failed = failedOutside(load.samples, windows).length;
  const minimum = enough(scheduled('upload then read', options.rate, options.durationS));
  return [
    acknowledgedCheck('primary', onPrimary, uploads, minimum),
    acknowledgedCheck('standby after catch-up', onStandby, uploads, minimum),
    pairsCheck(load, minimum),
    failuresDocumented(load.samples, windows),
    budget,
    revoked,
    { name: 'new deadlocks', ok: newDeadlocks === 0, detail: String(newDeadlocks) },
    { name: 'reads served by the replica', ok: replica > 0, detail: `${replica} (counters of the instances' current processes)` },
    { name: 'failed requests outside fault windows', ok: failed === 0, detail: String(failed) },
  ];
}

export async function baseProof(runner: Runner, options: BaseOptions): Promise<boolean> {
  await runner.step('install Debian packages (PostgreSQL, Redis, haproxy, pgbouncer)', () => installDebianPackages(BASE_PACKAGES));
  const can = clustersAvailable();
  if (!can.ok) throw new Error(`cannot make PostgreSQL clusters here: ${can.reason}`);
  const top = await runner.step('topology: primary, standby, Redis, PgBouncer, 3 instances, HAProxy', () => startTopology(runner, options));
  const deadlocksBefore = await deadlocks(top.primaryPool);
  const { applicationId, users } = top.seeded;
  const dialogs = await dialogsOf(top.primaryPool, applicationId);
  const baseline = await baselineCursor(top.primaryPool);
  const instanceUrls = top.instances.ports.map((p) => `http://127.0.0.1:${p}`);
  const subscribers = await runner.step('live subscribers on every instance and through HAProxy', () =>
    startSubscribers({ balancer: top.instances.base, instances: instanceUrls, users, dialogs, baseline }),
  );
  const listeners = await listenBackends(top.primaryPool);
  const t0 = Date.now();
  const plan = scheduleFaults(t0, options.durationS, faults(top));
  log(`load: ${options.rate} operations/s and ${options.liveRate} live writes/s for ${options.durationS} s over ${options.users} users`);
  const [load, writes] = await Promise.all([
    runLoad({
      base: top.instances.base,
      users,
      rate: options.rate,
      durationS: options.durationS,
      retryMs: 5_000,
      done: plan.done,
      refuseWrites: options.refuseWrites,
    }),
    runLiveWrites({ instances: instanceUrls, users, dialogs, rate: options.liveRate, durationS: options.durationS, retryMs: 5_000, done: plan.done }),
  ]);
  await plan.finished;
  const loadEnd = Date.now();
  log(`load done: ${load.samples.length} requests, ${writes.acknowledged.length} live writes acknowledged`);
  const byId = new Map(dialogs.map((d) => [d.id, d]));
  const events = await settle(subscribers.all, () => storedEvents(top.primaryPool, applicationId, baseline), byId);
  await subscribers.stop();
  const live = liveChecks({
    subscribers: subscribers.all,
    events,
    dialogs,
    writes,
    windows: plan.windows,
    instanceKill: { window: KILL_FAULT, instance: 0 },
    listenerKill: { window: LISTENER_FAULT, instances: top.instances.ports.length },
  });
  const outside = failedOutside(load.samples, plan.windows);
  const checks = [
    ...(await checksAfter(top, load, options, plan.windows, deadlocksBefore)),
    drainCheck(load, plan.windows),
    {
      name: 'live: one LISTEN connection per instance, on the primary itself (not through PgBouncer)',
      ok: listeners === top.instances.ports.length,
      detail: `${listeners} for ${top.instances.ports.length} instances`,
    },
    ...live.checks,
    await sessionEndCloses({ instances: instanceUrls, primaryUrl: top.primary.url, applicationId, userId: users[1]!.id, secretsKey: top.seeded.secretsKey }),
  ];
  const phases = phaseTable(load.samples, t0, loadEnd, plan.windows);
  const windows = windowTable(load.samples, plan.windows);
  const lines = [
    `scale proof: ${options.durationS} s at ${options.rate} operations/s, ${options.users} users, 3 instances behind HAProxy, PgBouncer (transaction mode), 1 streaming standby, Redis`,
    `requests: ${load.samples.length} (operations not started because every user was busy: ${load.skipped})`,
    '',
    ...phases.lines,
    '',
    ...windows.lines,
    '',
    ...live.lines,
    ...(outside.length > 0
      ? [`failed outside fault windows: ${JSON.stringify(outside.slice(0, 5).map((s) => ({ at: s.at - t0, op: s.op, status: s.status })))}`]
      : []),
    '',
  ];
  const ok = printReport(lines, checks, {
    durationS: options.durationS,
    rate: options.rate,
    requests: load.samples.length,
    phases: phases.figures,
    faults: windows.figures,
    live: live.figures,
  });
  if (!ok) {
    for (const [i, proc] of top.instances.procs.entries()) process.stdout.write(`--- instance ${i} output (tail) ---\n${proc.output().slice(-3000)}\n`);
  }
  return ok;
}
