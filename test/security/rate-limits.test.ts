// Rate limits (src/http/rate-limit.ts): a budget per credential and one per
// client address, in fixed windows. Each app here runs with small budgets over
// the same test database; every app counts on its own, so tests do not share
// budgets. Over a budget: 429 with Retry-After (whole seconds) in the error
// shape of the route; the window's end lifts it; probes are never limited;
// with the limits off nothing is ever 429; X-Forwarded-For counts only when
// TRUST_PROXY says the proxy in front is ours.
import { randomBytes } from 'node:crypto';
import { type App, appOptionsFromConfig } from '../../src/app';
import { loadConfig } from '../../src/config';
import type { Database } from '../../src/db';
import { contactCount, MEMBER_PHONE } from '../support/address-book';
import { expectUntouched } from '../support/chat';
import { recordFigures } from '../support/figures';
import { fetchResult, type GraphQLResult, type HttpResult, openTestDatabase, type ServiceOptions, startService, type TestService } from '../support/service';
import { seedTenant } from '../support/seed';

/** Windows no burst of these tests outlasts, however slow the machine. */
const WINDOW_MS = 60_000;
/** The one window a test waits out. */
const SHORT_WINDOW_MS = 2_000;

let database: Database;
const started: TestService[] = [];
const figures: Record<string, unknown> = {};

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  recordFigures('rate-limits', figures);
  for (const one of started) await one.close();
  await database?.close();
});

interface Served {
  /** The started service, for the support helpers that read its database. */
  service: TestService;
  app: App;
  rest(method: string, path: string, options?: { headers?: Record<string, string>; body?: unknown }): Promise<HttpResult>;
  graphql(query: string, headers?: Record<string, string>): Promise<GraphQLResult>;
}

/** An app with these options over the test database, on a port of its own. */
async function serve(options: Omit<ServiceOptions, 'database'>): Promise<Served> {
  const one = await startService({ ...options, database });
  started.push(one);
  const { app, baseUrl: base } = one;
  const rest: Served['rest'] = (method, path, { headers = {}, body } = {}) =>
    fetchResult(`${base}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return {
    service: one,
    app,
    rest,
    graphql: (query, headers = {}) => rest('POST', '/graphql', { headers, body: { query } }),
  };
}

const limited = (perCredential: number, perAddress: number): Omit<ServiceOptions, 'database'> => ({
  rateLimit: { windowMs: WINDOW_MS, perCredential, perAddress },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const invalidToken = () => `guess-${randomBytes(16).toString('hex')}`;

/** Retry-After as the integer number of seconds it must be (1 … the window). */
function retryAfter(res: HttpResult, windowMs: number): number {
  const value = res.headers.get('retry-after');
  expect(value).toMatch(/^[1-9][0-9]*$/);
  const seconds = Number(value);
  expect(seconds).toBeLessThanOrEqual(Math.ceil(windowMs / 1000));
  return seconds;
}

/** The 429 of each error shape, its message naming the same wait as Retry-After. */
function expectTooMany(res: HttpResult, shape: 'list' | 'object' | 'graphql', windowMs = WINDOW_MS): number {
  expect(res.status).toBe(429);
  const seconds = retryAfter(res, windowMs);
  const message = `Too many requests: retry in ${seconds} s`;
  const body = {
    list: { errors: [message] },
    object: { code: 'TOO_MANY_REQUESTS', message },
    graphql: { errors: [{ message, extensions: { code: 'TOO_MANY_REQUESTS' } }] },
  }[shape];
  expect(res.body).toEqual(body);
  return seconds;
}

/** Sends until the first 429 (at most `max`): the requests served before it, and the 429. */
async function untilLimited(send: () => Promise<HttpResult>, max: number): Promise<{ served: HttpResult[]; refused?: HttpResult }> {
  const served: HttpResult[] = [];
  for (let i = 0; i < max; i++) {
    const res = await send();
    if (res.status === 429) return { served, refused: res };
    served.push(res);
  }
  return { served };
}

const statusCounts = (results: HttpResult[]) =>
  results.reduce<Record<number, number>>((counts, r) => ({ ...counts, [r.status]: (counts[r.status] ?? 0) + 1 }), {});

describe('per credential', () => {
  test('the (N+1)-th request with one token in a window is 429 on every route, in its shape; other credentials are not affected', async () => {
    const perCredential = 5;
    const served = await serve(limited(perCredential, 10_000));
    const t = await seedTenant(served.app.provisioning);
    const lookup = (headers: Record<string, string>) => served.rest('GET', '/users/external/102.json', { headers });

    const burst = await untilLimited(() => lookup(t.as.owner), perCredential + 5);
    expect(burst.served.map((r) => r.status)).toEqual(Array(perCredential).fill(200));
    const seconds = expectTooMany(burst.refused!, 'object');

    // The budget is the credential's, whatever the route: each answers 429 in its own shape.
    expectTooMany(await served.rest('GET', '/address_book/registered_users.json', { headers: t.as.owner }), 'list');
    expectTooMany(await served.rest('DELETE', `/chat/Message/${t.messageIds.join(',')}.json`, { headers: t.as.owner, body: { force: 1 } }), 'list');
    expectTooMany(await served.rest('POST', '/address_book.json', { headers: t.as.owner, body: { contacts: [{ name: 'M', phone: MEMBER_PHONE }] } }), 'list');
    expectTooMany(await served.graphql('{ registeredUsers { id } }', t.as.owner), 'graphql');
    expectTooMany(await served.rest('GET', '/no/such/path', { headers: t.as.owner }), 'list');

    // Other credentials of the same client and application have budgets of their own.
    const others = [await lookup(t.as.member), await lookup(t.as.apiKey), await lookup(t.as.onBehalfOf(t.owner.id))];
    expect(others.map((r) => r.status)).toEqual([200, 200, 200]);
    // Refused before anything ran: nothing deleted, nothing stored.
    await expectUntouched(served.service, t);
    expect(await contactCount(served.service, t)).toBe(0);

    figures.perCredential = {
      windowMs: WINDOW_MS,
      perCredential,
      servedBefore429: burst.served.length,
      retryAfterSeconds: seconds,
      otherCredentials: others.map((r) => r.status),
    };
  });

  test('after Retry-After seconds the token is served again', async () => {
    const perCredential = 2;
    const served = await serve({ rateLimit: { windowMs: SHORT_WINDOW_MS, perCredential, perAddress: 10_000 } });
    const t = await seedTenant(served.app.provisioning);
    const lookup = () => served.rest('GET', '/users/external/102.json', { headers: t.as.owner });

    const burst = await untilLimited(lookup, perCredential + 5);
    expect(burst.served.map((r) => r.status)).toEqual(Array(perCredential).fill(200));
    const seconds = expectTooMany(burst.refused!, 'object', SHORT_WINDOW_MS);
    const waitedMs = seconds * 1000 + 100;
    await sleep(waitedMs);
    const again = await lookup();
    expect(again.status).toBe(200);
    figures.windowEnd = { windowMs: SHORT_WINDOW_MS, perCredential, retryAfterSeconds: seconds, waitedMs, afterRetryAfter: again.status };
  });

  test('an API key has one budget whatever its On-Behalf-Of; invalid tokens are counted too', async () => {
    const perCredential = 3;
    const served = await serve(limited(perCredential, 10_000));
    const t = await seedTenant(served.app.provisioning);
    const lookup = (headers: Record<string, string>) => served.rest('GET', '/users/external/102.json', { headers });

    const statuses = [
      (await lookup(t.as.onBehalfOf(t.owner.id))).status,
      (await lookup(t.as.onBehalfOf(t.member.id))).status,
      (await lookup(t.as.apiKey)).status,
    ];
    expect(statuses).toEqual([200, 200, 200]);
    expectTooMany(await lookup(t.as.onBehalfOf(t.outsider.id)), 'object');

    // Guessing one token: refused as unknown N times, then slowed down.
    const guess = { 'SVC-Token': invalidToken() };
    const guesses = await untilLimited(() => lookup(guess), perCredential + 3);
    expect(guesses.served.map((r) => r.status)).toEqual(Array(perCredential).fill(401));
    expectTooMany(guesses.refused!, 'object');
    // Same for a malformed Authorization header.
    const malformed = { Authorization: `Bearer ${invalidToken()}` };
    const bearer = await untilLimited(() => lookup(malformed), perCredential + 3);
    expect(bearer.served.map((r) => r.status)).toEqual(Array(perCredential).fill(401));
    expect(bearer.refused?.status).toBe(429);
  });
});

describe('per address', () => {
  test('many different, even invalid, tokens from one address exhaust the address budget, and then every request is 429', async () => {
    const perAddress = 6;
    const served = await serve(limited(1_000, perAddress));
    const t = await seedTenant(served.app.provisioning);

    const rotating = await untilLimited(() => served.rest('GET', '/users/external/102.json', { headers: { 'SVC-Token': invalidToken() } }), perAddress + 5);
    expect(rotating.served.map((r) => r.status)).toEqual(Array(perAddress).fill(401));
    expectTooMany(rotating.refused!, 'object');

    // From then on, whatever the credentials: a valid, never used token, none, GraphQL.
    expectTooMany(await served.rest('GET', '/users/external/102.json', { headers: t.as.member }), 'object');
    expectTooMany(await served.rest('GET', '/address_book/registered_users.json'), 'list');
    expectTooMany(await served.graphql('{ __typename }', t.as.outsider), 'graphql');

    figures.perAddress = { windowMs: WINDOW_MS, perAddress, servedBefore429: rotating.served.length, servedStatuses: statusCounts(rotating.served) };
  });

  // /metrics is limited since issue 31 (test/security/metrics.test.ts): a flood of scrapes slowed lookups 200-fold.
  test('/healthz and /readyz are never limited and do not count', async () => {
    const budget = 3;
    const served = await serve({ ...limited(budget, budget), metrics: true });
    const t = await seedTenant(served.app.provisioning);
    const probes = ['/healthz', '/readyz', '/healthz?verbose=1'];
    const probe = async () => {
      const results = [];
      for (let i = 0; i < 10; i++) for (const path of probes) results.push(await served.rest('GET', path, { headers: t.as.owner }));
      return results;
    };

    const before = await probe();
    expect(before.filter((r) => r.status !== 200)).toEqual([]);
    // The probes (sent with the token, too) took nothing from either budget.
    const burst = await untilLimited(() => served.rest('GET', '/users/external/102.json', { headers: t.as.owner }), budget + 3);
    expect(burst.served.map((r) => r.status)).toEqual(Array(budget).fill(200));
    expect(burst.refused?.status).toBe(429);
    // And with both budgets spent, probes still answer.
    const after = await probe();
    expect(after.filter((r) => r.status !== 200)).toEqual([]);
    figures.probes = { paths: probes, requests: before.length + after.length, limited: 0 };
  });
});

describe('client address behind a proxy (TRUST_PROXY)', () => {
  const env = (trustProxy: boolean) =>
    appOptionsFromConfig(
      loadConfig({
        TRUST_PROXY: String(trustProxy),
        RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
        RATE_LIMIT_PER_CREDENTIAL: '1000',
        RATE_LIMIT_PER_ADDRESS: '3',
      }),
    );
  const anonymous = (served: Served, headers: Record<string, string>) => served.rest('GET', '/address_book/registered_users.json', { headers });

  test('on: X-Forwarded-For tells clients apart, each with its own budget', async () => {
    const served = await serve(env(true));
    const first = await untilLimited(() => anonymous(served, { 'X-Forwarded-For': '203.0.113.1' }), 6);
    expect(first.served.map((r) => r.status)).toEqual([401, 401, 401]);
    expectTooMany(first.refused!, 'list');
    const second = await anonymous(served, { 'X-Forwarded-For': '203.0.113.2' });
    expect(second.status).toBe(401);
    // The proxy's own address (no header) is another client still.
    expect((await anonymous(served, {})).status).toBe(401);
    figures.trustProxyOn = { perAddress: 3, firstClientServed: first.served.length, secondClient: second.status };
  });

  test('off (the default): X-Forwarded-For and its kin are ignored, so a client cannot forge its way out of its budget', async () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(false);
    const served = await serve(env(false));
    const first = await untilLimited(() => anonymous(served, { 'X-Forwarded-For': '203.0.113.1' }), 6);
    expect(first.served.map((r) => r.status)).toEqual([401, 401, 401]);
    expectTooMany(first.refused!, 'list');
    const forged = [
      await anonymous(served, { 'X-Forwarded-For': '203.0.113.2' }),
      await anonymous(served, { 'X-Forwarded-For': '203.0.113.3, 198.51.100.7' }),
      await anonymous(served, { 'X-Real-IP': '203.0.113.4' }),
      await anonymous(served, { Forwarded: 'for=203.0.113.5' }),
      await anonymous(served, {}),
    ];
    expect(forged.map((r) => r.status)).toEqual([429, 429, 429, 429, 429]);
    figures.trustProxyOff = { perAddress: 3, firstClientServed: first.served.length, forgedStatuses: forged.map((r) => r.status) };
  });
});

describe('rate limits off', () => {
  const tiny = { RATE_LIMIT_WINDOW_MS: String(WINDOW_MS), RATE_LIMIT_PER_CREDENTIAL: '2', RATE_LIMIT_PER_ADDRESS: '2' };

  test('the configuration turns them on by default and RATE_LIMIT_ENABLED=false turns them off', () => {
    expect(appOptionsFromConfig(loadConfig({})).rateLimit).toEqual({ windowMs: 60_000, perCredential: 1_200, perAddress: 6_000, onStoreError: 'open' });
    expect(appOptionsFromConfig(loadConfig({ NODE_ENV: 'production' })).rateLimit).toEqual({
      windowMs: 60_000,
      perCredential: 1_200,
      perAddress: 6_000,
      onStoreError: 'open',
    });
    expect(appOptionsFromConfig(loadConfig({ ...tiny, RATE_LIMIT_ENABLED: 'false' })).rateLimit).toBe(false);
  });

  test.each([
    ['RATE_LIMIT_ENABLED=false with budgets of 2', () => appOptionsFromConfig(loadConfig({ ...tiny, RATE_LIMIT_ENABLED: 'false' }))],
    ['createApp’s default (no rateLimit option), as in tests', () => ({})],
  ])('%s: no request is ever 429', async (_name, options) => {
    const served = await serve(options());
    const t = await seedTenant(served.app.provisioning);
    const results: HttpResult[] = [];
    for (let i = 0; i < 15; i++) {
      results.push(await served.rest('GET', '/users/external/102.json', { headers: t.as.owner }));
      results.push(await served.rest('GET', '/users/external/102.json', { headers: { 'SVC-Token': invalidToken() } }));
    }
    expect(statusCounts(results)).toEqual({ 200: 15, 401: 15 });
    figures.off ??= {};
    (figures.off as Record<string, unknown>)[_name] = { requests: results.length, statuses: statusCounts(results) };
  });

  test('the control: the same budgets with RATE_LIMIT_ENABLED=true refuse the third request', async () => {
    const served = await serve(appOptionsFromConfig(loadConfig({ ...tiny, RATE_LIMIT_ENABLED: 'true' })));
    const t = await seedTenant(served.app.provisioning);
    const burst = await untilLimited(() => served.rest('GET', '/users/external/102.json', { headers: t.as.owner }), 5);
    expect(burst.served.map((r) => r.status)).toEqual([200, 200]);
    expectTooMany(burst.refused!, 'object');
  });
});

describe('a 429 is readable by the browser clients the other responses serve', () => {
  // Security headers and CORS are registered before the rate-limit hook
  // (src/app.ts), so a browser on an allowed origin can read the 429 and its
  // Retry-After (listed in Access-Control-Expose-Headers for exactly this).
  test('429 carries the security headers and, with CORS on, Access-Control-Allow-Origin', async () => {
    const served = await serve(appOptionsFromConfig(loadConfig({ CORS_ORIGINS: 'https://app.example.com', RATE_LIMIT_PER_CREDENTIAL: '1' })));
    const t = await seedTenant(served.app.provisioning);
    const headers = { ...t.as.owner, Origin: 'https://app.example.com' };
    expect((await served.rest('GET', '/users/external/102.json', { headers })).status).toBe(200);
    const refused = await served.rest('GET', '/users/external/102.json', { headers });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
    expect(refused.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(refused.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
  });
});
