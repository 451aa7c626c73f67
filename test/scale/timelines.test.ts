// Read-your-writes across a failover, on real clusters (skipped with a
// message where they cannot be made, a failure under CI=true): a primary A
// with two standbys B and D; B is promoted (timeline 2, as Patroni does
// after A dies) and C is made a standby of B; D still follows A, which keeps
// writing (as an old primary does for the moments before it is fenced), so
// D's replay position runs past anything B has written, on a timeline B left.
//
// - A caller's position handed out by A on timeline 1, ahead of B's WAL, must
//   not hold their reads back on the new timeline: served by C at once.
// - D must not serve a read for a caller who wrote on B, however far its
//   replay position: it does not have B's writes.
// - A write that reaches a standby (a demoted primary the load balancer still
//   routes to for a moment) answers 503, not 500, and that connection is dropped.
import { Client } from 'pg';
import { type Database, openDatabase } from '../../src/db';
import { MESSAGES } from '../../src/errors';
import { connectRedis, type SharedRedis } from '../../src/scale/redis';
import { parseLsn } from '../../src/scale/replicas';
import { type Cluster, createPrimary, createStandby } from '../../scripts/lib/pg-cluster';
import { freePort } from '../../scripts/lib/ports';
import { MEMBER_PHONE, STRANGER_PHONE } from '../support/address-book';
import { needClusters, needRedis, REDIS_URL, requires } from '../support/requires';
import { fetchResult, type ReadingService, startService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';

const PREFIX = `chatsvc-test-timelines:${process.pid}:${Date.now()}:`;
/** Long enough that a read which waited for it shows in the routes, not only in the time taken. */
const WAIT_MS = 2_000;
/** Skipped, saying why, where clusters cannot be made or Redis does not answer (failures under CI=true). */
const withClusters = requires(needClusters());
const withClustersAndRedis = requires(needClusters(), needRedis);

jest.setTimeout(60_000);

const clusters: Cluster[] = [];
const closers: (() => Promise<unknown>)[] = [];
let A: Cluster, B: Cluster, C: Cluster, D: Cluster;
let onA: Database, onB: Database;
let redis: SharedRedis | undefined;
/** Seeded on A before the failover: on every node. */
let before: Tenant;

const sql = async (cluster: Cluster, text: string): Promise<Record<string, unknown>[]> => {
  const client = new Client({ connectionString: cluster.url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
};

const lsnOf = async (cluster: Cluster, fn: string) => parseLsn(String((await sql(cluster, `SELECT ${fn}()::text AS lsn`))[0]!.lsn));

async function replayed(standby: Cluster, target: bigint): Promise<void> {
  for (let i = 0; i < 300 && (await lsnOf(standby, 'pg_last_wal_replay_lsn')) < target; i++) await new Promise((r) => setTimeout(r, 50));
}

/** WAL that only A's timeline has, well past B's: a row, then a switch to the next segment (16 MB of positions), until 64 MB past. */
async function aWritesOn(): Promise<void> {
  const past = (await lsnOf(B, 'pg_current_wal_insert_lsn')) + 64n * 1024n * 1024n;
  for (let i = 0; i < 20 && (await lsnOf(A, 'pg_current_wal_insert_lsn')) < past; i++) {
    await sql(A, 'CREATE TABLE IF NOT EXISTS old_timeline_rows (n int); INSERT INTO old_timeline_rows VALUES (1); SELECT pg_switch_wal()');
  }
}

beforeAll(async () => {
  if (!withClusters.met) return;
  A = createPrimary(await freePort());
  clusters.push(A);
  onA = await openDatabase({ url: A.url, migrate: true, poolMax: 4 });
  closers.push(() => onA.close());
  B = createStandby(A, await freePort());
  D = createStandby(A, await freePort());
  clusters.push(B, D);
  // Without Redis, the position handed out on the old timeline cannot reach the new primary's instance: that case needs it.
  if (withClustersAndRedis.met) redis = await connectRedis({ url: REDIS_URL, prefix: PREFIX, connectTimeoutMs: 2_000 });
}, 60_000);

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
  if (redis) {
    const keys = await redis.client.keys(`${PREFIX}*`);
    if (keys.length > 0) await redis.client.del(...keys);
    await redis.close();
  }
  for (const cluster of clusters.reverse()) cluster.destroy();
});

/** An instance over `database` reading on `replica` (startService's `replicas`); closed after the file's tests. */
async function instance(database: Database, replica: Cluster): Promise<ReadingService> {
  const one = await startService({ database, redis, replicas: { urls: [replica.url], maxLagMs: 60_000, waitMs: WAIT_MS, poolMax: 2 } });
  closers.push(() => one.close());
  return one;
}

const registeredIds = async (at: ReadingService, tenant: Tenant): Promise<number[]> => {
  const res = await at.rest('GET', '/address_book/registered_users.json', { headers: tenant.as.owner });
  expect(res.status).toBe(200);
  return res.body.items.map((item: { user: { id: number } }) => item.user.id);
};

/** The failover, once for the file: B promoted, C made a standby of B, A writing on. */
let failedOver: Promise<void> | undefined;
function failover(): Promise<void> {
  failedOver ??= (async () => {
    const oldWorld = await instance(onA, D);
    before = await seedTenant(oldWorld.app.provisioning);
    // The owner's book lists the member: written on A, replayed by B before it is promoted.
    expect(
      (await oldWorld.rest('POST', '/address_book.json', { headers: before.as.owner, body: { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] } })).status,
    ).toBeLessThan(300);
    await replayed(B, await lsnOf(A, 'pg_current_wal_insert_lsn'));
    await sql(B, 'SELECT pg_promote(true, 60)');
    C = createStandby(B, await freePort());
    clusters.push(C);
    onB = await openDatabase({ url: B.url, migrate: false, poolMax: 4 });
    closers.push(() => onB.close());
    // A goes on writing on timeline 1, and so does the caller through A's instance: a position past the fork, ahead of B.
    await aWritesOn();
    expect(
      (await oldWorld.rest('POST', '/address_book.json', { headers: before.as.owner, body: { contacts: [{ name: 'Stranger', phone: STRANGER_PHONE }] } }))
        .status,
    ).toBeLessThan(300);
    await replayed(D, await lsnOf(A, 'pg_current_wal_insert_lsn'));
  })();
  return failedOver;
}

withClustersAndRedis.test(
  "a caller's position from the old primary's timeline, ahead of anything the new primary has written, does not hold their reads back",
  async () => {
    await failover();
    expect(await lsnOf(B, 'pg_current_wal_insert_lsn')).toBeLessThan(await lsnOf(A, 'pg_current_wal_insert_lsn'));
    const newWorld = await instance(onB, C);
    expect(newWorld.reads.primaryTimeline()).toBe(2);
    const routes = { ...newWorld.reads.routes };
    // What survived the failover (the member, written before the fork) is served by C, at once.
    expect(await registeredIds(newWorld, before)).toEqual([before.member.id]);
    expect(newWorld.reads.routes.replica - routes.replica).toBe(1);
    expect(newWorld.reads.routes.primary_not_replayed - routes.primary_not_replayed).toBe(0);
  },
);

withClusters.test(
  'a standby still following the old timeline is not read from, though its replay position is past the caller’s write on the new one',
  async () => {
    await failover();
    const newWorld = await instance(onB, D);
    const after = await seedTenant(newWorld.app.provisioning);
    expect(
      (await newWorld.rest('POST', '/address_book.json', { headers: after.as.owner, body: { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] } })).status,
    ).toBeLessThan(300);
    // D is "ahead" of that write by its LSN, and has none of it.
    expect(await lsnOf(D, 'pg_last_wal_replay_lsn')).toBeGreaterThan(await lsnOf(B, 'pg_current_wal_insert_lsn'));
    const replicaReads = newWorld.reads.routes.replica;
    expect(await registeredIds(newWorld, after)).toEqual([after.member.id]);
    expect(newWorld.reads.routes.replica).toBe(replicaReads);
    expect(newWorld.reads.healthyCount()).toBe(0);
  },
);

withClusters.test(
  'a write that reaches a standby (a demoted primary the load balancer still routes to) answers 503 and its connection is dropped',
  async () => {
    await failover();
    const onStandby = await openDatabase({ url: C.url, migrate: false, poolMax: 1 });
    closers.push(() => onStandby.close());
    const one = await startService({ database: onStandby });
    closers.push(() => one.close());
    const base = one.baseUrl;
    // Its credential check slides the session: a write, refused by the standby (25006).
    const res = await fetchResult(`${base}/chat/Message/${before.messageIds[0]}.json`, { method: 'DELETE', headers: before.as.owner });
    expect({ status: res.status, body: res.body }).toEqual({ status: 503, body: { errors: [MESSAGES.databaseUnavailable] } });
    expect(onStandby.pool.totalCount).toBe(0);
  },
);
