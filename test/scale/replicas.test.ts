// Reads on a real hot standby (a throwaway primary and a pg_basebackup -R
// standby of it, made here in ~2 s; skipped with a message where clusters
// cannot be made, a failure under CI=true): lookups and registered users are served by the replica;
// a caller's upload on instance A is seen by their next read on instance B
// (read-your-writes across instances, positions shared through Redis); a
// replica that goes away is skipped, never an error.
import { type Database, openDatabase } from '../../src/db';
import { connectRedis, type SharedRedis } from '../../src/scale/redis';
import { type Cluster, createPrimary, createStandby } from '../../scripts/lib/pg-cluster';
import { freePort } from '../../scripts/lib/ports';
import { MEMBER_PHONE } from '../support/address-book';
import { needClusters, needRedis, REDIS_URL, requires } from '../support/requires';
import { type ReadingService, startService, type TestService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';

const PREFIX = `chatsvc-test-replicas:${process.pid}:${Date.now()}:`;
/** Skipped, saying why, where clusters cannot be made or Redis does not answer (failures under CI=true). */
const withClusters = requires(needClusters());
const withClustersAndRedis = requires(needClusters(), needRedis);

let primary: Cluster | undefined;
let standby: Cluster | undefined;
let database: Database;
let redis: SharedRedis | undefined;
const started: TestService[] = [];

beforeAll(async () => {
  if (!withClusters.met) return;
  primary = createPrimary(await freePort());
  standby = createStandby(primary, await freePort());
  database = await openDatabase({ url: primary.url, migrate: true, poolMax: 4 });
  // Without Redis, positions are shared per instance only: the cross-instance case needs it.
  if (withClustersAndRedis.met) redis = await connectRedis({ url: REDIS_URL, prefix: PREFIX, connectTimeoutMs: 2_000 });
}, 60_000);

afterAll(async () => {
  for (const one of started) await one.close();
  if (redis) {
    const keys = await redis.client.keys(`${PREFIX}*`);
    if (keys.length > 0) await redis.client.del(...keys);
    await redis.close();
  }
  await database?.close();
  standby?.destroy();
  primary?.destroy();
});

/** An instance reading on the standby (startService's `replicas`); closed after the file's tests. */
async function instance(waitMs = 1_000): Promise<ReadingService> {
  const one = await startService({ database, redis, replicas: { urls: [standby!.url], maxLagMs: 5_000, waitMs, poolMax: 4 } });
  started.push(one);
  return one;
}

const registered = async (at: ReadingService, tenant: Tenant): Promise<number[]> => {
  const res = await at.rest('GET', '/address_book/registered_users.json', { headers: tenant.as.owner });
  expect(res.status).toBe(200);
  return res.body.items.map((item: { user: { id: number } }) => item.user.id);
};

withClusters.test('lookups and registered users are read on the standby once it has the data', async () => {
  const a = await instance();
  const tenant = await seedTenant(a.app.provisioning);
  const before = a.reads.routes.replica;
  for (let i = 0; i < 20; i++) {
    const res = await a.rest('GET', `/users/external/${tenant.member.externalUserId}.json`, { headers: tenant.as.owner });
    expect(res.status).toBe(200);
    await registered(a, tenant);
  }
  expect(a.reads.healthyCount()).toBe(1);
  expect(a.reads.routes.replica - before).toBeGreaterThan(0);
});

withClustersAndRedis.test("a caller's upload on instance A is in their next read on instance B: 0 stale in 40 write-then-read pairs", async () => {
  const [a, b] = [await instance(), await instance()];
  const tenant = await seedTenant(a.app.provisioning);
  let stale = 0;
  for (let i = 0; i < 40; i++) {
    const present = i % 2 === 0;
    const upload = await a.rest('POST', '/address_book.json', {
      headers: tenant.as.owner,
      body: {
        contacts: [{ name: 'member', phone: MEMBER_PHONE, ...(present ? {} : { destroy: 1 }) }],
      },
    });
    expect(upload.status).toBeLessThan(300);
    const ids = await registered(b, tenant);
    if (ids.includes(tenant.member.id) !== present) stale++;
  }
  expect(stale).toBe(0);
  // And the replica did serve some of them (after waiting for replay), not only the primary.
  expect(b.reads.routes.replica).toBeGreaterThan(0);
});

withClusters.test('a standby that goes away is skipped: reads keep answering from the primary', async () => {
  const a = await instance();
  const tenant = await seedTenant(a.app.provisioning);
  standby!.stop('immediate');
  try {
    for (let i = 0; i < 10; i++) {
      const res = await a.rest('GET', `/users/external/${tenant.member.externalUserId}.json`, { headers: tenant.as.owner });
      expect(res.status).toBe(200);
    }
    expect(a.reads.routes.primary_replica_failed + a.reads.routes.primary_no_replica).toBeGreaterThan(0);
  } finally {
    standby!.start();
  }
  // Back in use after its next health checks.
  const deadline = Date.now() + 10_000;
  while (a.reads.healthyCount() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(a.reads.healthyCount()).toBe(1);
});
