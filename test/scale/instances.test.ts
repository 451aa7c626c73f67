// Two instances of the service in one process, over one database and one
// Redis (a key prefix of this run's own): the rate-limit budget is one budget
// whichever instance counts it; a store failure serves or refuses as
// RATE_LIMIT_ON_STORE_ERROR says; a session ended on one instance is refused
// by the other within 1 s (Redis pub/sub, or LISTEN/NOTIFY without Redis on a
// PostgreSQL server), and so is an application the admin CLI disables.
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import type { App } from '../../src/app';
import type { Database } from '../../src/db';
import { connectRedis, type SharedRedis } from '../../src/scale/redis';
import { MESSAGES } from '../../src/errors';
import { publisher, type RevocationBus } from '../../src/scale/revocations';
import { fetchResult, type HttpResult, openTestDatabase, type ServiceOptions, startService, type TestService } from '../support/service';
import { seedTenant, servicesOver } from '../support/seed';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `chatsvc-test:${process.pid}:${Date.now()}:`;

let database: Database;
let redis: SharedRedis | undefined;
const started: TestService[] = [];
const extraRedis: SharedRedis[] = [];

/** Whether Redis answers at all: the Redis tests skip, saying so, when it does not. */
async function redisReachable(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return true;
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

beforeAll(async () => {
  database = await openTestDatabase();
  if (await redisReachable()) redis = await connectRedis({ url: REDIS_URL, prefix: PREFIX, connectTimeoutMs: 2_000 });
  else console.warn(`instances.test.ts: Redis at ${REDIS_URL} is unreachable (set TEST_REDIS_URL): the Redis tests are skipped`);
});

afterAll(async () => {
  for (const one of started) await one.close();
  if (redis) {
    // Leave nothing of this run in the shared Redis.
    const keys = await redis.client.keys(`${PREFIX}*`);
    if (keys.length > 0) await redis.client.del(...keys);
    await redis.close();
  }
  for (const other of extraRedis) await other.close();
  await database?.close();
});

interface Instance {
  app: App;
  base: string;
  rest(method: string, path: string, headers?: Record<string, string>): Promise<HttpResult>;
}

async function instance(options: Omit<ServiceOptions, 'database'>): Promise<Instance> {
  const one = await startService({ ...options, database });
  started.push(one);
  const { app, baseUrl: base } = one;
  return { app, base, rest: (method, path, headers = {}) => fetchResult(`${base}${path}`, { method, headers }) };
}

const withRedis = (name: string, fn: () => Promise<void>) =>
  test(name, async () => {
    if (!redis) {
      console.warn(`skipped (Redis unreachable): ${name}`);
      return;
    }
    await fn();
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

withRedis('one credential budget across two instances: exactly the budget is served, then 429 on both', async () => {
  const budget = 10;
  const options = { redis, rateLimit: { windowMs: 60_000, perCredential: budget, perAddress: 1_000 } };
  const [a, b] = [await instance(options), await instance(options)];
  const token = `guess-${randomBytes(16).toString('hex')}`;
  const answers: HttpResult[] = [];
  for (let i = 0; i < 2 * budget; i++) answers.push(await (i % 2 === 0 ? a : b).rest('GET', '/users/1.json', { 'SVC-Token': token }));
  const served = answers.filter((res) => res.status !== 429);
  expect(served).toHaveLength(budget);
  expect(answers.slice(budget).every((res) => res.status === 429)).toBe(true);
  // Each counted answer says where the shared budget stands, whichever instance gave it.
  expect(served.map((res) => Number(res.headers.get('ratelimit-remaining')))).toEqual(Array.from({ length: budget }, (_, i) => budget - 1 - i));
  for (const res of answers) {
    expect(res.headers.get('ratelimit-limit')).toBe(String(budget));
    expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
  }
  expect(answers.at(-1)!.headers.get('ratelimit-remaining')).toBe('0');
  expect(Number(answers.at(-1)!.headers.get('retry-after'))).toBeGreaterThan(0);
});

withRedis('RateLimit-* headers are exposed to browsers by CORS', async () => {
  const a = await instance({ redis, rateLimit: { windowMs: 60_000, perCredential: 100, perAddress: 1_000 }, security: { corsOrigins: '*' } });
  const res = await a.rest('GET', '/users/1.json', { Origin: 'https://app.example.com', 'SVC-Token': 'x' });
  const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase();
  for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) expect(exposed).toContain(name);
});

withRedis('a failing store: open serves uncounted, closed refuses with 503; both counted in /metrics', async () => {
  // A connection of its own, then cut: every command fails at once.
  const broken = await connectRedis({ url: REDIS_URL, prefix: PREFIX, connectTimeoutMs: 2_000 });
  extraRedis.push(broken);
  const open = await instance({ redis: broken, rateLimit: { windowMs: 60_000, perCredential: 5, perAddress: 5, onStoreError: 'open' } });
  const closed = await instance({ redis: broken, rateLimit: { windowMs: 60_000, perCredential: 5, perAddress: 5, onStoreError: 'closed' } });
  broken.client.disconnect();
  for (let i = 0; i < 8; i++) {
    const served = await open.rest('GET', '/address_book.json', { 'SVC-Token': 'x' });
    expect(served.status).toBeLessThan(500);
    expect(served.status).not.toBe(429);
    const refused = await closed.rest('GET', '/address_book.json', { 'SVC-Token': 'x' });
    expect(refused.status).toBe(503);
    expect(refused.text).toContain('rate-limit store');
  }
  expect((await open.rest('GET', '/metrics')).text).toMatch(/rate_limit_store_errors_total\{outcome="served"\} 8/);
  expect((await closed.rest('GET', '/metrics')).text).toMatch(/rate_limit_store_errors_total\{outcome="refused"\} 8/);
  // Probes never touch the store.
  expect((await closed.rest('GET', '/healthz')).status).toBe(200);
});

/** Ends a session on `a` after `b` has it cached, then polls `b` until it refuses it: the time that took. */
async function revocationDelay(a: Instance, b: Instance): Promise<number> {
  const tenant = await seedTenant(a.app.provisioning);
  const headers = tenant.as.owner;
  // A lookup: its credentials come from the cache (GET /session.json would read the session itself).
  const probe = '/address_book.json';
  // b checks it once: from now on b answers from its cache (5 s by default).
  expect((await b.rest('GET', probe, headers)).status).toBe(200);
  expect((await b.rest('GET', probe, headers)).status).toBe(200);
  expect((await a.rest('DELETE', '/session.json', headers)).status).toBeLessThan(300);
  const ended = Date.now();
  for (;;) {
    const res = await b.rest('GET', probe, headers);
    if (res.status === 401) return Date.now() - ended;
    expect(res.status).toBe(200);
    if (Date.now() - ended > 3_000) return Date.now() - ended;
    await sleep(20);
  }
}

withRedis('a session ended on one instance is refused by the other within 1 s (Redis pub/sub)', async () => {
  const options = { redis, revocation: true };
  const delay = await revocationDelay(await instance(options), await instance(options));
  expect(delay).toBeLessThan(1_000);
});

const onServer = process.env.TEST_RUN_DATABASE_URL ? test : test.skip;
onServer('without Redis, a session ended on one instance is refused by the other within 1 s (LISTEN/NOTIFY)', async () => {
  const delay = await revocationDelay(await instance({ revocation: true }), await instance({ revocation: true }));
  expect(delay).toBeLessThan(1_000);
});

test('without any bus, the other instance honours the ended session until its cache entry expires (what the bus fixes)', async () => {
  const delay = await revocationDelay(await instance({}), await instance({}));
  expect(delay).toBeGreaterThanOrEqual(1_000);
});

withRedis('an API key rotated by the admin CLI is refused by running instances within 1 s', async () => {
  const options = { redis, revocation: true };
  const [a, b] = [await instance(options), await instance(options)];
  const tenant = await seedTenant(a.app.provisioning);
  const probe = `/users/external/${tenant.member.externalUserId}.json`;
  // Both instances have the key cached.
  for (const at of [a, b, a, b]) expect((await at.rest('GET', probe, tenant.as.apiKey)).status).toBe(200);
  // What `admin app:rotate-api-key` does: a process of its own, with a publisher only.
  const cli = await connectRedis({ url: REDIS_URL, prefix: PREFIX, connectTimeoutMs: 2_000 });
  extraRedis.push(cli);
  const { services, provisioning } = servicesOver(database, { auth: { cacheMs: 0 } });
  services.auth.useRevocations(publisher({ redis: cli }));
  const { apiKey, previousKeyHash } = await provisioning.applications.rotateApiKey(tenant.applicationId);
  await services.auth.forgetApiKey(previousKeyHash);
  await services.close();
  const rotated = Date.now();
  for (const at of [a, b]) {
    for (;;) {
      const status = (await at.rest('GET', probe, tenant.as.apiKey)).status;
      if (status === 401) break;
      expect(status).toBe(200);
      expect(Date.now() - rotated).toBeLessThan(1_000);
      await sleep(20);
    }
  }
  expect(Date.now() - rotated).toBeLessThan(1_000);
  expect((await b.rest('GET', probe, { Authorization: `ApiKey ${apiKey}` })).status).toBe(200);
});

/**
 * Disables an application as `admin app:disable` does (a process of its own
 * with a publisher only: the flag, then one message) after both instances
 * cached its session token and API key; polls until both refuse both (403):
 * the time that took. Enabling it then gives both back on both at once.
 */
async function disabledEverywhere(a: Instance, b: Instance, bus: RevocationBus): Promise<number> {
  const tenant = await seedTenant(a.app.provisioning);
  const probe = `/users/external/${tenant.member.externalUserId}.json`;
  const credentials = [tenant.as.owner, tenant.as.apiKey];
  for (const at of [a, b, a, b]) for (const headers of credentials) expect((await at.rest('GET', probe, headers)).status).toBe(200);
  const { services, provisioning } = servicesOver(database, { auth: { cacheMs: 0 } });
  services.auth.useRevocations(bus);
  await provisioning.applications.setDisabled(tenant.applicationId, true);
  await services.auth.forgetApplication(tenant.applicationId);
  const disabled = Date.now();
  for (const at of [a, b]) {
    for (const headers of credentials) {
      for (;;) {
        const res = await at.rest('GET', probe, headers);
        if (res.status === 403) {
          expect(res.body).toEqual({ errors: { base: [MESSAGES.applicationDisabled] } });
          break;
        }
        expect(res.status).toBe(200);
        if (Date.now() - disabled > 3_000) break;
        await sleep(20);
      }
    }
  }
  const delay = Date.now() - disabled;
  await provisioning.applications.setDisabled(tenant.applicationId, false);
  for (const at of [a, b]) for (const headers of credentials) expect((await at.rest('GET', probe, headers)).status).toBe(200);
  await services.close();
  return delay;
}

withRedis(
  'an application disabled by the admin CLI is refused by running instances within 1 s (Redis pub/sub), and enabling it restores it at once',
  async () => {
    const options = { redis, revocation: true };
    const [a, b] = [await instance(options), await instance(options)];
    const cli = await connectRedis({ url: REDIS_URL, prefix: PREFIX, connectTimeoutMs: 2_000 });
    extraRedis.push(cli);
    expect(await disabledEverywhere(a, b, publisher({ redis: cli }))).toBeLessThan(1_000);
  },
);

onServer('without Redis, an application disabled by the admin CLI is refused by running instances within 1 s (LISTEN/NOTIFY)', async () => {
  const [a, b] = [await instance({ revocation: true }), await instance({ revocation: true })];
  const notify = publisher({
    notify: async (channel, payload) => {
      await database.pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
    },
  });
  expect(await disabledEverywhere(a, b, notify)).toBeLessThan(1_000);
});

withRedis('the failed-password budget is one budget across instances', async () => {
  const options = { redis, sessions: { loginAttempts: { perLogin: 3, perAddress: 1_000, windowMs: 60_000 } } };
  const [a, b] = [await instance(options), await instance(options)];
  const tenant = await seedTenant(a.app.provisioning);
  const attempt = (at: Instance) =>
    fetchResult(`${at.base}/login.json`, {
      method: 'POST',
      headers: { ...tenant.as.app, 'content-type': 'application/json' },
      body: JSON.stringify({ login: 'owner', password: 'wrong password' }),
    });
  expect((await attempt(a)).status).toBe(401);
  expect((await attempt(b)).status).toBe(401);
  expect((await attempt(a)).status).toBe(401);
  // The fourth, on either instance: refused before any password is checked.
  const refused = await attempt(b);
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect((await attempt(a)).status).toBe(429);
});
