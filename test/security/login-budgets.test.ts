// Failed-password budgets (src/services/login-attempts.ts), as a guesser
// meets them: one budget per account, whichever of its names (login or email)
// a guess uses (past it, every try of the account is a wrong credential: a 429
// comes only from the name tried, so that it never pairs a login with an
// email, issue 31) and whichever way it comes in (POST /login.json, a signed POST
// /session.json with user[login] or user[email], GraphQL's login and
// createSession); one per unknown name; one per client address. In this
// process's memory, and with Redis shared by instances.
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MESSAGES } from '../../src/errors';
import { LoginAttempts, subjects, TRACKED_KEYS } from '../../src/services/login-attempts';
import { LIMITS } from '../../src/services/validate';
import { connectRedis, type SharedRedis } from '../../src/scale/redis';
import { SURFACES, type Surface, surfaceOf, value } from '../behaviour/surfaces';
import { recordFigures } from '../support/figures';
import { needRedis, REDIS_URL, requires } from '../support/requires';
import { seedTenant, type Tenant } from '../support/seed';
import { fetchResult, type HttpResult, openTestDatabase, type ServiceOptions, startService, type TestService, useService } from '../support/service';
import { restForm, signedSessionRequest } from '../support/sessions';

/** Failures allowed per account (and per unknown name) in these tests. */
const PER_ACCOUNT = 4;
const RIGHT = 'password123';
const TOO_MANY = /^Too many requests: retry in \d+ s$/;

// A budget per address far from reach: each test here spends its own account's.
const service = useService({ sessions: { loginAttempts: { perLogin: PER_ACCOUNT, perAddress: 10_000, windowMs: 60_000 } } });
const figures: Record<string, unknown> = {};
afterAll(() => recordFigures('login-budgets', figures));

const seed = () => seedTenant(service.app.provisioning);
const token = (session: { token: string }) => ({ 'SVC-Token': session.token });
const email = (t: Tenant) => t.owner.email!;

describe.each(SURFACES)('%s', (name) => {
  let surface: Surface;
  beforeAll(() => {
    surface = surfaceOf(name, service);
  });

  test('wrong passwords through the login and through the email spend one budget: past it both names fail as a wrong password would, the right password included', async () => {
    const t = await seed();
    const session = value(await surface.createSession(signedSessionRequest(t)));
    for (let i = 0; i < PER_ACCOUNT; i++) {
      const credentials = i % 2 === 0 ? { login: 'owner', password: `wrong-${i}` } : { email: email(t), password: `wrong-${i}` };
      surface.expectFailure(await surface.login(token(session), credentials), 'UNAUTHENTICATED', MESSAGES.badLogin);
    }
    // An earlier issue's attack: with the login locked, the email opened the account.
    surface.expectFailure(await surface.login(token(session), { email: email(t), password: RIGHT }), 'UNAUTHENTICATED', MESSAGES.badLogin);
    surface.expectFailure(await surface.login(token(session), { login: 'owner', password: RIGHT }), 'UNAUTHENTICATED', MESSAGES.badLogin);
    // Signed session requests naming the user either way meet the same budget.
    surface.expectFailure(await surface.createSession(signedSessionRequest(t, { email: email(t), password: RIGHT })), 'UNAUTHENTICATED', MESSAGES.badLogin);
    surface.expectFailure(await surface.createSession(signedSessionRequest(t, { login: 'owner', password: RIGHT })), 'UNAUTHENTICATED', MESSAGES.badLogin);
    expect(value(await surface.session(token(session))).userId).toBeNull();
    // Other accounts of the application keep their own budgets.
    expect(value(await surface.login(token(session), { email: t.member.email!, password: RIGHT })).id).toBe(t.member.id);
  });

  test('signed session requests spend the same budget as logins: failures through user[email] and user[login] lock both', async () => {
    const t = await seed();
    for (let i = 0; i < PER_ACCOUNT; i++) {
      const user = i % 2 === 0 ? { email: email(t), password: `wrong-${i}` } : { login: 'owner', password: `wrong-${i}` };
      surface.expectFailure(await surface.createSession(signedSessionRequest(t, user)), 'UNAUTHENTICATED', MESSAGES.badLogin);
    }
    const session = value(await surface.createSession(signedSessionRequest(t)));
    surface.expectFailure(await surface.login(token(session), { login: 'owner', password: RIGHT }), 'UNAUTHENTICATED', MESSAGES.badLogin);
    surface.expectFailure(await surface.createSession(signedSessionRequest(t, { email: email(t), password: RIGHT })), 'UNAUTHENTICATED', MESSAGES.badLogin);
  });

  test('no pairing oracle: after a budget of failures by the login, a try by its email answers as a try by any other email does (issue 31)', async () => {
    const t = await seed();
    const session = value(await surface.createSession(signedSessionRequest(t)));
    for (let i = 0; i < PER_ACCOUNT; i++) {
      surface.expectFailure(await surface.login(token(session), { login: 'owner', password: `wrong-${i}` }), 'UNAUTHENTICATED', MESSAGES.badLogin);
    }
    // The login itself is now refused by its own budget.
    surface.expectFailure(await surface.login(token(session), { login: 'owner', password: RIGHT }), 'TOO_MANY_REQUESTS', TOO_MANY);
    // Its email, another user's, and no one's: the same answer (before: 429, 401, 401).
    for (const other of [email(t), t.member.email!, 'nobody@example.com']) {
      surface.expectFailure(await surface.login(token(session), { email: other, password: 'a-guess' }), 'UNAUTHENTICATED', MESSAGES.badLogin);
    }
    // The account is still closed to guesses: its right password by the email fails too.
    surface.expectFailure(await surface.login(token(session), { email: email(t), password: RIGHT }), 'UNAUTHENTICATED', MESSAGES.badLogin);
  });

  test('a right password ends the account’s failures, whichever name the failures and the success used', async () => {
    const t = await seed();
    const session = value(await surface.createSession(signedSessionRequest(t)));
    for (let i = 0; i < PER_ACCOUNT - 1; i++) {
      surface.expectFailure(await surface.login(token(session), { email: email(t), password: `wrong-${i}` }), 'UNAUTHENTICATED', MESSAGES.badLogin);
    }
    expect(value(await surface.login(token(session), { login: 'owner', password: RIGHT })).id).toBe(t.owner.id);
    // A whole budget again, through the login; then the login is 429 and the account closed.
    for (let i = 0; i < PER_ACCOUNT; i++) {
      surface.expectFailure(await surface.login(token(session), { login: 'owner', password: `again-${i}` }), 'UNAUTHENTICATED', MESSAGES.badLogin);
    }
    surface.expectFailure(await surface.login(token(session), { login: 'owner', password: RIGHT }), 'TOO_MANY_REQUESTS', TOO_MANY);
    surface.expectFailure(await surface.login(token(session), { email: email(t), password: RIGHT }), 'UNAUTHENTICATED', MESSAGES.badLogin);
  });

  test('an unknown login or email has a budget of its own, answered exactly as an account’s is', async () => {
    const t = await seed();
    const session = value(await surface.createSession(signedSessionRequest(t)));
    for (let i = 0; i < PER_ACCOUNT; i++) {
      surface.expectFailure(await surface.login(token(session), { login: 'nobody', password: `wrong-${i}` }), 'UNAUTHENTICATED', MESSAGES.badLogin);
    }
    surface.expectFailure(await surface.login(token(session), { login: 'nobody', password: RIGHT }), 'TOO_MANY_REQUESTS', TOO_MANY);
    // Another unknown name, and the accounts, are not affected.
    surface.expectFailure(await surface.login(token(session), { email: 'nobody@example.com', password: RIGHT }), 'UNAUTHENTICATED', MESSAGES.badLogin);
    expect(value(await surface.login(token(session), { login: 'owner', password: RIGHT })).id).toBe(t.owner.id);
  });
});

test('the budget is the account’s across paths and surfaces: REST logins, GraphQL session requests, form and JSON bodies', async () => {
  const t = await seed();
  const { token: appToken } = value(await surfaceOf('REST', service).createSession(signedSessionRequest(t)));
  const rest = (body: Record<string, string>, form: boolean) => service.rest('POST', '/login.json', { headers: { 'SVC-Token': appToken }, body, form });
  const graphqlSession = (user: Record<string, string>) =>
    service.graphql('mutation ($input: SessionRequestInput!) { createSession(input: $input) { userId } }', { input: signedSessionRequest(t, user) });

  const answers: number[] = [];
  answers.push((await rest({ login: 'owner', password: 'wrong-1' }, true)).status);
  answers.push((await rest({ email: email(t), password: 'wrong-2' }, false)).status);
  const viaGraphQL = await graphqlSession({ email: email(t), password: 'wrong-3' });
  expect(viaGraphQL.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  const signed = await service.rest('POST', '/session.json', { body: restForm(signedSessionRequest(t, { login: 'owner', password: 'wrong-4' })), form: true });
  answers.push(signed.status);
  expect(answers).toEqual([401, 401, 401]);

  // The account's budget is spent: its right password fails by either name, as a wrong one does.
  const locked = await graphqlSession({ login: 'owner', password: RIGHT });
  expect(locked.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  const lockedRest = await rest({ email: email(t), password: RIGHT }, false);
  expect(lockedRest.status).toBe(401);
  expect(lockedRest.headers.get('retry-after')).toBeNull();
  figures.oneAccountTwoNames = { perAccount: PER_ACCOUNT, failuresBefore429: 4, rightPasswordAfter: lockedRest.status };
});

test('20 guesses sent at once at one account through both names: a budget per name is checked (401, the account’s budget of them real guesses), the rest refused (429)', async () => {
  const t = await seed();
  const guesses = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      service.rest('POST', '/login.json', {
        headers: t.as.app,
        body: i % 2 === 0 ? { login: 'owner', password: `wrong-${i}` } : { email: email(t), password: `wrong-${i}` },
      }),
    ),
  );
  const statuses = guesses.map((res) => res.status).sort();
  expect(statuses).toEqual([...Array(2 * PER_ACCOUNT).fill(401), ...Array(20 - 2 * PER_ACCOUNT).fill(429)]);
  expect((await service.rest('POST', '/login.json', { headers: t.as.app, body: { login: 'owner', password: RIGHT } })).status).toBe(429);
  // And the account is closed by the other name too.
  expect((await service.rest('POST', '/login.json', { headers: t.as.app, body: { email: email(t), password: RIGHT } })).status).toBe(429);
  figures.concurrentGuesses = { sent: 20, perAccount: PER_ACCOUNT, checked: statuses.filter((s) => s === 401).length };
});

test('the in-memory budgets keep at most 50,000 windows of a fixed size, whatever a spray of maximum-length names brings (40,000 distinct names from 40,000 addresses: 80,000 keys)', () => {
  // In process: 40,000 failures over HTTP would be 40,000 scrypt checks. What is measured is the structure the service uses.
  setFlagsFromString('--expose-gc');
  const collectGarbage = runInNewContext('gc') as () => void;
  const budgets = new LoginAttempts({ perLogin: 10, perAddress: 100, windowMs: 60_000 });
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  let refused = 0;
  for (let i = 0; i < 40_000; i++) {
    const name = `${i}${'\u{1F600}'.repeat(LIMITS.loginLength - 10)}`;
    refused +=
      budgets.attempt([subjects.name(1, 'login', name), subjects.address(`2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`)]) > 0 ? 1 : 0;
  }
  collectGarbage();
  const heldMB = (process.memoryUsage().heapUsed - before) / 1024 / 1024;
  expect(refused).toBe(0);
  expect(budgets.size).toBe(TRACKED_KEYS);
  figures.inMemoryWindows = { attempts: 40_000, keys: 80_000, windowsKept: budgets.size, heapMB: +heldMB.toFixed(1) };
  // 50,000 keys of at most 50 characters and their windows: a few MB, where the names alone would be 40,000 × 1 KB.
  expect(heldMB).toBeLessThan(16);
});

describe('per client address (behind a proxy: TRUST_PROXY)', () => {
  const PER_ADDRESS = 5;
  const proxied = useService({
    trustProxy: true,
    sessions: { loginAttempts: { perLogin: 1_000, perAddress: PER_ADDRESS, windowMs: 60_000 } },
  });

  const login = (t: Tenant, appToken: string, from: string, credentials: Record<string, string>) =>
    proxied.rest('POST', '/login.json', { headers: { 'SVC-Token': appToken, 'X-Forwarded-For': from }, body: credentials });

  test('failures from one address count together whatever the names; past the budget its right passwords are 429 too, other addresses are served', async () => {
    const t = await seedTenant(proxied.app.provisioning);
    const appToken = t.appToken;
    const from = '203.0.113.7';
    const statuses: number[] = [];
    for (let i = 0; i < PER_ADDRESS; i++) statuses.push((await login(t, appToken, from, { login: `guess-${i}`, password: 'wrong' })).status);
    expect(statuses).toEqual(Array(PER_ADDRESS).fill(401));
    expect((await login(t, appToken, from, { login: 'owner', password: RIGHT })).status).toBe(429);
    expect((await login(t, appToken, '203.0.113.8', { login: 'owner', password: RIGHT })).status).toBe(200);
  });

  test('IPv6 addresses count by their /64, as the request budgets do: a client cannot rotate through its own subnet', async () => {
    const t = await seedTenant(proxied.app.provisioning);
    const appToken = t.appToken;
    const statuses: number[] = [];
    for (let i = 0; i < PER_ADDRESS; i++) {
      statuses.push((await login(t, appToken, `2001:db8:77:1::${(i + 1).toString(16)}`, { login: `guess-${i}`, password: 'wrong' })).status);
    }
    expect(statuses).toEqual(Array(PER_ADDRESS).fill(401));
    expect((await login(t, appToken, '2001:db8:77:1:ffff:ffff:ffff:ffff', { login: 'owner', password: RIGHT })).status).toBe(429);
    // The next /64 is another client.
    expect((await login(t, appToken, '2001:db8:77:2::1', { login: 'owner', password: RIGHT })).status).toBe(200);
  });
});

requires(needRedis).describe('with Redis, shared by instances', () => {
  const PREFIX = `chatsvc-test-budgets:${process.pid}:${Date.now()}:`;
  let redis: SharedRedis;
  const started: TestService[] = [];
  let database: Awaited<ReturnType<typeof openTestDatabase>>;

  beforeAll(async () => {
    database = await openTestDatabase();
    redis = await connectRedis({ url: REDIS_URL, prefix: PREFIX, connectTimeoutMs: 2_000 });
  });
  afterAll(async () => {
    for (const one of started) await one.close();
    const keys = await redis.client.keys(`${PREFIX}*`);
    if (keys.length > 0) await redis.client.del(...keys);
    await redis.close();
    await database.close();
  });

  async function instance(options: Omit<ServiceOptions, 'database'>) {
    const one = await startService({ ...options, database });
    started.push(one);
    const { app, baseUrl: base } = one;
    return {
      app,
      login: (headers: Record<string, string>, body: Record<string, string>): Promise<HttpResult> =>
        fetchResult(`${base}/login.json`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      graphql: (query: string, variables: Record<string, unknown>): Promise<HttpResult> =>
        fetchResult(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) }),
    };
  }

  test('one account, two names, two instances: one budget; the counters in Redis hold no login or email', async () => {
    // One SECRETS_KEY, as instances of one deployment have: either opens the auth secret.
    const options = { redis, secretsKey: randomBytes(32), sessions: { loginAttempts: { perLogin: PER_ACCOUNT, perAddress: 10_000, windowMs: 60_000 } } };
    const [a, b] = [await instance(options), await instance(options)];
    const t = await seedTenant(a.app.provisioning);
    const statuses: number[] = [];
    for (let i = 0; i < PER_ACCOUNT; i++) {
      const [at, body] = i % 2 === 0 ? [a, { login: 'owner', password: `wrong-${i}` }] : [b, { email: email(t), password: `wrong-${i}` }];
      statuses.push((await at.login(t.as.app, body)).status);
    }
    expect(statuses).toEqual(Array(PER_ACCOUNT).fill(401));
    // The account's budget, spent across both instances: its right password fails by either name.
    expect((await a.login(t.as.app, { email: email(t), password: RIGHT })).status).toBe(401);
    expect((await b.login(t.as.app, { login: 'owner', password: RIGHT })).status).toBe(401);
    const signed = await b.graphql('mutation ($input: SessionRequestInput!) { createSession(input: $input) { userId } }', {
      input: signedSessionRequest(t, { email: email(t), password: RIGHT }),
    });
    expect((signed.body as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('UNAUTHENTICATED');

    // Names are client input (and an email is personal data): the counters are keyed by the account, or by a digest.
    const keys = await redis.client.keys(`${PREFIX}login-failures:*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key).not.toContain('owner');
      expect(key).not.toContain('@');
    }
    // Guesses at once across both instances meet the same one budget.
    const other = await seedTenant(a.app.provisioning);
    const burst = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 === 0 ? a : b).login(other.as.app, i % 3 === 0 ? { email: email(other), password: `w-${i}` } : { login: 'owner', password: `w-${i}` }),
      ),
    );
    // A budget per name (4 emails, 8 logins sent): each name's checked, of which the account's budget real guesses.
    expect(burst.filter((res) => res.status === 401)).toHaveLength(2 * PER_ACCOUNT);
    expect(burst.filter((res) => res.status === 429)).toHaveLength(12 - 2 * PER_ACCOUNT);

    figures.redis = { perAccount: PER_ACCOUNT, instances: 2, keys: keys.map((key) => key.slice(PREFIX.length).replace(/:[^:]*$/, ':…')) };
  });
});
