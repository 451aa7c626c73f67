// `npm run scale:proof -- --failover`: the primary database dies under load,
// and nothing acknowledged is lost. Topology (scripts/scale/patroni.ts): etcd,
// 2 (or --nodes 3) PostgreSQL 15 nodes under Patroni in synchronous mode
// (--async for asynchronous), HAProxy routing a write port to the primary and a
// read port to the replicas by Patroni's REST checks; Redis; 3 service
// instances that reach the database only through those two ports; HAProxy in
// front of them. The same mixed load as `npm run scale:proof`, and faults:
//
// 1. kill -9 the primary's Patroni and postmaster: Patroni promotes the
//    synchronous standby once the leader key expires (ttl);
// 2. the old primary's Patroni started again: it rejoins as a replica
//    (pg_rewind where it had diverged);
// 3. kill -9 the synchronous standby's Patroni and postmaster, start it again
//    5 s later: what a primary does while its synchronous standby is gone;
// 4. `patronictl switchover` to the standby: a planned move.
//
// It asserts and prints: every acknowledged write (uploads, deletes) present
// on the last primary and on its replica after catch-up (0 lost), and at
// least half the writes the schedule asks for acknowledged; 0 stale
// read-after-write pairs, at least half the scheduled ones checked; every
// failed attempt a documented 503 (no 4xx, no 500, no dropped connection),
// none hanging; no failure outside the fault windows; no final failure in the
// switchover; and figures: promotion time, time without writes, errors by
// kind per window, p50/p99 per phase. Live subscribers (scripts/scale/live.ts)
// stay connected across the faults: every event owed delivered exactly once,
// in order per dialog, 0 lost in the primary kill.
import { Pool } from 'pg';
import { clientBoundMs } from '../../src/db';
import { freePort } from '../lib/ports';
import { acknowledgedCheck, caughtUp, enough, failuresDocumented, pairsCheck, writesPresent } from './assertions';
import { type Fault, type FaultWindow, inWindow, scheduleFaults } from './faults';
import { FAILOVER_PACKAGES, installDebianPackages } from './install';
import { type Instances, ready, replicaReads, startInstances, startRedis } from './instances';
import { type LoadResult, runLoad, scheduled, type Write } from './load';
import { type Node, PatroniCluster } from './patroni';
import { log, postgresUser, type Runner, sleep, waitFor } from './processes';
import { answeredAt, type Check, failedOutside, phaseTable, printReport, windowTable } from './report';
import { type Seeded, seed } from './seed';
import { baselineCursor, dialogsOf, liveChecks, runLiveWrites, settle, startSubscribers, storedEvents } from './live';

export interface FailoverOptions {
  durationS: number;
  rate: number;
  users: number;
  nodes: number;
  synchronous: boolean;
  /** How long clients retry a 503 or a failed connection. */
  retryMs: number;
  /** The load's writes refused (a check of the checks, load.ts): the run must fail. */
  refuseWrites?: boolean;
  /** The live writes (sends, deletes) per second, beside the mixed load (scripts/scale/live.ts). */
  liveRate: number;
}

const PRIMARY_KILL = 'kill -9 the primary (Patroni, postmaster)';

interface Topology {
  cluster: PatroniCluster;
  instances: Instances;
  seeded: Seeded;
}

async function startTopology(runner: Runner, options: FailoverOptions): Promise<Topology> {
  const dir = runner.tempDir('chatsvc-failover-proof-', postgresUser());
  const cluster = new PatroniCluster(runner, dir, { nodes: options.nodes, synchronous: options.synchronous });
  await cluster.start();
  log(`nodes ${cluster.nodes.map((n) => `${n.name} :${n.port} (REST :${n.restPort})`).join(', ')}; write ${cluster.writeUrl}, read ${cluster.readUrl}`);
  const seeded = await seed(cluster.writeUrl, options.users);
  const redis = await startRedis(runner, await freePort());
  const ports = [await freePort(), await freePort(), await freePort()];
  const instances = await startInstances(runner, dir, ports, await freePort(), {
    databaseUrl: cluster.writeUrl,
    readUrl: cluster.readUrl,
    redisUrl: redis.url,
    secretsKey: seeded.secretsKey,
  });
  log(`instances :${ports.join(', :')} behind ${instances.base}`);
  return { cluster, instances, seeded };
}

/** Every instance answers /readyz: each has a primary behind the write port again. */
const allReady = (instances: Instances) =>
  waitFor('every instance ready', async () => (await Promise.all(instances.ports.map((p) => ready(p)()))).every(Boolean), 120_000);

/** Whether the node's Patroni said it ran pg_rewind (its output since it was started). */
const rewound = (node: Node): boolean => /running pg_rewind/.test(node.patroni?.output() ?? '');

function faults(top: Topology): Fault[] {
  const { cluster, instances } = top;
  let old: Node | undefined;
  return [
    {
      name: PRIMARY_KILL,
      at: 0.15,
      run: async () => {
        const started = Date.now();
        // The leader as Patroni reports it running (on a loaded machine its state may read otherwise for a moment).
        let leader: string | undefined;
        await waitFor('a running leader', async () => (leader = await cluster.leader()) !== undefined, 60_000);
        old = cluster.node(leader!);
        await cluster.kill(old);
        await waitFor('another node promoted', async () => ![undefined, old!.name].includes(await cluster.leader()), 120_000);
        const promotedMs = Date.now() - started;
        await allReady(instances);
        return { killed: old.name, promoted: (await cluster.leader())!, promotedMs };
      },
    },
    {
      name: 'restart the old primary: it rejoins',
      at: 0.35,
      run: async () => {
        cluster.startPatroni(old!);
        await cluster.healthy(120_000);
        const member = (await cluster.members()).find((m) => m.name === old!.name);
        return { role: member?.role ?? '?', timeline: member?.timeline ?? 0, pgRewind: rewound(old!) ? 'yes' : 'no' };
      },
    },
    {
      name: 'kill -9 the sync standby, restart it',
      at: 0.5,
      run: async () => {
        const members = await cluster.members();
        const standby = cluster.node((members.find((m) => m.role === 'sync_standby') ?? members.find((m) => m.role !== 'leader'))!.name);
        await cluster.kill(standby);
        await sleep(5_000);
        cluster.startPatroni(standby);
        await cluster.healthy(120_000);
        return { killed: standby.name };
      },
    },
    {
      name: 'patronictl switchover',
      at: 0.7,
      run: async () => {
        const leader = (await cluster.leader())!;
        const members = await cluster.members();
        const candidate = (members.find((m) => m.role === 'sync_standby') ?? members.find((m) => m.name !== leader))!.name;
        const started = Date.now();
        await cluster.switchover(candidate, leader);
        await waitFor('the candidate leading', async () => (await cluster.leader()) === candidate, 60_000);
        const switchedMs = Date.now() - started;
        await cluster.healthy(120_000);
        await allReady(instances);
        return { from: leader, to: candidate, switchedMs };
      },
    },
  ];
}

/** The longest stretch without an acknowledged write that overlaps the window. */
function timeWithoutWrites(acknowledged: Write[], w: FaultWindow): number {
  const times = acknowledged.map((a) => a.at).sort((a, b) => a - b);
  let longest = 0;
  for (let i = 1; i < times.length; i++) {
    if (times[i]! > w.start && times[i - 1]! < w.end) longest = Math.max(longest, times[i]! - times[i - 1]!);
  }
  return longest;
}

async function dataChecks(top: Topology, load: LoadResult, options: FailoverOptions): Promise<{ checks: Check[]; unconfirmedApplied: number }> {
  const { cluster } = top;
  const primary = new Pool({ connectionString: cluster.writeUrl, max: 2 });
  const replica = new Pool({ connectionString: cluster.readUrl, max: 2 });
  try {
    const onPrimary = await writesPresent(primary, load.acknowledged);
    await caughtUp(primary, replica);
    const onReplica = await writesPresent(replica, load.acknowledged);
    const unconfirmedApplied = await writesPresent(primary, load.unconfirmed);
    const uploads = scheduled('upload then read', options.rate, options.durationS);
    const writes = enough(uploads + scheduled('delete message', options.rate, options.durationS));
    const checks = [
      acknowledgedCheck(`last primary (${await cluster.leader()})`, onPrimary, load.acknowledged, writes),
      acknowledgedCheck('replica after catch-up', onReplica, load.acknowledged, writes),
      pairsCheck(load, enough(uploads)),
    ];
    return { checks, unconfirmedApplied };
  } finally {
    await primary.end();
    await replica.end();
  }
}

function answerChecks(load: LoadResult, windows: FaultWindow[], retryMs: number): Check[] {
  const outside = failedOutside(load.samples, windows);
  const slowest = Math.max(...load.samples.map((s) => s.ms));
  // A request may retry for retryMs, and its last attempt wait up to the service's client-side bound before its 503.
  const hangBound = retryMs + clientBoundMs(5_000) + 1_000;
  const switchover = windows.find((w) => w.name.includes('switchover'));
  const switchoverFinal = switchover ? load.samples.filter((s) => !s.ok && inWindow(switchover, answeredAt(s))) : [];
  return [
    failuresDocumented(load.samples, windows),
    { name: `no request hung (slowest under ${hangBound} ms)`, ok: slowest < hangBound, detail: `slowest ${slowest} ms` },
    { name: 'failed requests outside fault windows', ok: outside.length === 0, detail: String(outside.length) },
    {
      name: 'switchover: no request failed after its retries',
      ok: switchover !== undefined && switchoverFinal.length === 0,
      detail: String(switchoverFinal.length),
    },
  ];
}

function faultLines(load: LoadResult, windows: FaultWindow[]): string[] {
  return windows.map(
    (w) => `${w.name.padEnd(40)}time without writes ${String(timeWithoutWrites(load.acknowledged, w)).padStart(6)} ms   ${JSON.stringify(w.figures)}`,
  );
}

export async function failoverProof(runner: Runner, options: FailoverOptions): Promise<boolean> {
  await runner.step('install Debian packages (PostgreSQL, Redis, patroni, etcd-server, etcd-client, haproxy)', () => installDebianPackages(FAILOVER_PACKAGES));
  const top = await runner.step(`topology: etcd, ${options.nodes} Patroni nodes, HAProxy (write, read), Redis, 3 instances, HAProxy`, () =>
    startTopology(runner, options),
  );
  // The live subscribers (scripts/scale/live.ts): through the write port, whichever node is the primary.
  const { applicationId, users } = top.seeded;
  const truth = new Pool({ connectionString: top.cluster.writeUrl, max: 1 });
  truth.on('error', () => {});
  runner.defer(() => truth.end().catch(() => {}));
  const dialogs = await dialogsOf(truth, applicationId);
  const baseline = await baselineCursor(truth);
  const instanceUrls = top.instances.ports.map((p) => `http://127.0.0.1:${p}`);
  const subscribers = await runner.step('live subscribers on every instance and through HAProxy', () =>
    startSubscribers({ balancer: top.instances.base, instances: instanceUrls, users, dialogs, baseline }),
  );
  const t0 = Date.now();
  const plan = scheduleFaults(t0, options.durationS, faults(top));
  log(
    `load: ${options.rate} operations/s and ${options.liveRate} live writes/s for ${options.durationS} s over ${options.users} users; clients retry for ${options.retryMs} ms`,
  );
  const [load, writes] = await Promise.all([
    runLoad({
      base: top.instances.base,
      users,
      rate: options.rate,
      durationS: options.durationS,
      retryMs: options.retryMs,
      done: plan.done,
      refuseWrites: options.refuseWrites,
    }),
    runLiveWrites({ instances: instanceUrls, users, dialogs, rate: options.liveRate, durationS: options.durationS, retryMs: options.retryMs, done: plan.done }),
  ]);
  await plan.finished;
  const loadEnd = Date.now();
  log(`load done: ${load.samples.length} requests, ${writes.acknowledged.length} live writes acknowledged`);
  const byId = new Map(dialogs.map((d) => [d.id, d]));
  const events = await settle(subscribers.all, () => storedEvents(truth, applicationId, baseline), byId);
  await subscribers.stop();
  const live = liveChecks({ subscribers: subscribers.all, events, dialogs, writes, windows: plan.windows, across: PRIMARY_KILL });
  const { checks, unconfirmedApplied } = await runner.step('checks', () => dataChecks(top, load, options));
  checks.push(...answerChecks(load, plan.windows, options.retryMs), ...live.checks);
  const phases = phaseTable(load.samples, t0, loadEnd, plan.windows);
  const windows = windowTable(load.samples, plan.windows);
  const replica = await replicaReads(top.instances.metricsPorts);
  const lines = [
    `failover proof: ${options.durationS} s at ${options.rate} operations/s, ${options.users} users, 3 instances, ${options.nodes} PostgreSQL nodes under Patroni (synchronous mode ${options.synchronous ? 'on' : 'off'}), HAProxy by Patroni's checks`,
    `requests: ${load.samples.length} (not started, every user busy: ${load.skipped}); acknowledged writes ${load.acknowledged.length}; answered WRITE_OUTCOME_UNKNOWN at least once ${load.unconfirmed.length} (found applied: ${unconfirmedApplied}); reads on replicas ${replica}`,
    '',
    ...phases.lines,
    '',
    ...windows.lines,
    '',
    ...faultLines(load, plan.windows),
    '',
    ...live.lines,
    '',
  ];
  const figures = {
    options,
    requests: load.samples.length,
    acknowledged: load.acknowledged.length,
    unconfirmed: load.unconfirmed.length,
    unconfirmedApplied,
    phases: phases.figures,
    live: live.figures,
    faults: windows.figures.map((f, i) => ({ ...f, ...plan.windows[i]!.figures, timeWithoutWritesMs: timeWithoutWrites(load.acknowledged, plan.windows[i]!) })),
  };
  const ok = printReport(lines, checks, figures);
  if (!ok) for (const [i, proc] of top.instances.procs.entries()) process.stdout.write(`--- instance ${i} output (tail) ---\n${proc.output().slice(-3000)}\n`);
  return ok;
}
