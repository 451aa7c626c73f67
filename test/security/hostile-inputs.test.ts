// Inputs as a hostile client sends them, over real HTTP against the service
// in this process:
//
// - bounded memory: names and addresses of any length, and thousands of them,
//   leave the process's resident memory within a stated bound (the service's
//   counters keep a fixed size per key, and inputs longer than they can
//   validly be are refused before any work);
// - every input's maximum (src/services/validate.ts LIMITS), accepted at it and
//   refused with 422 / BAD_USER_INPUT one character past it, characters being
//   Unicode code points everywhere;
// - parameters named like Object.prototype's members (`__proto__`,
//   `constructor`, `toString`…) are ordinary unknown parameters.
import { scrypt } from 'node:crypto';
import { promisify } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MESSAGES } from '../../src/errors';
import { LIMITS } from '../../src/services/validate';
import { type Credentials, SURFACES, type Surface, surfaceOf, value } from '../behaviour/surfaces';
import { recordFigures } from '../support/figures';
import { seedTenant, type Tenant } from '../support/seed';
import { fetchResult, type HttpResult, startService, type TestService, useService } from '../support/service';
import { restForm, signedSessionRequest } from '../support/sessions';

const figures: Record<string, unknown> = {};
afterAll(() => recordFigures('hostile-inputs', figures));

const MB = 1024 * 1024;
/** Thousands of requests on a shared 2-core machine: minutes, not jest's default minute. */
const FLOOD_TIMEOUT_MS = 300_000;

/** A full collection on demand, so that what is measured is what the process keeps, not garbage awaiting collection. */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/**
 * Before a measurement: every path once (a 422 that touches no budget), and
 * scrypt on each thread of libuv's pool. The first scrypt on a thread leaves
 * its 16 MB work area to the thread's malloc arena, once: resident memory of
 * the process, not of any client.
 */
async function warmUp(send: () => Promise<HttpResult>): Promise<void> {
  expect((await send()).status).toBe(422);
  const hash = promisify(scrypt) as (password: string, salt: string, length: number) => Promise<Buffer>;
  await Promise.all(Array.from({ length: 8 }, (_, i) => hash(`warm-${i}`, 'salt', 32)));
}

/**
 * A full collection that also hands V8's pooled free pages back to the
 * system. From Node 24 (V8 13.6) the 256 KB heap pages a burst's young
 * generation grew into stay mapped and resident in V8's page pool after
 * ordinary collections shrink the heap, counted by no heap space: the
 * fetch() client of these tests in this process grows new space to ~100 MB
 * over 10,000 requests (Node 20: ~30 MB), and after the burst resident
 * memory stayed +160…200 MB above the level before it with the heap and
 * external memory +1…3 MB, until ~10 s of idleness let V8's memory reducer
 * release the pool. It is reused, not leaked (a second 10,000 grew it by
 * +41 MB, a third by +7 MB), and the service alone, flooded from another
 * process, grew by +3 MB over 40,000 (issue 24). A "last-resort" collection
 * (CollectAllAvailableGarbage, what V8 runs under memory pressure) releases
 * it at once; Node 20's V8 ignores the option and collects as before.
 */
const collectAllGarbage = () => (collectGarbage as (options: object) => void)({ type: 'major', execution: 'sync', flavor: 'last-resort' });

/**
 * What the process keeps: resident memory once it has settled. Right after a
 * burst the allocator still holds freed memory for a few seconds (10,000
 * requests with 16 KB headers: +155 MB for ~5 s, then back under the level
 * before them), so the smallest reading over up to 10 s of full collections
 * is taken, ending early once two readings in a row no longer fall.
 */
async function settledMemory(): Promise<{ rss: number; heap: number }> {
  collectGarbage();
  collectAllGarbage();
  let least = process.memoryUsage().rss;
  for (let i = 0, steady = 0; i < 20 && steady < 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    collectGarbage();
    const rss = process.memoryUsage().rss;
    steady = rss > least - MB ? steady + 1 : 0;
    least = Math.min(least, rss);
  }
  const { heapUsed, external } = process.memoryUsage();
  return { rss: least, heap: heapUsed + external };
}

/** Runs `send(i)` for i in 0…count-1, `concurrency` at a time; the statuses answered, counted. */
async function flood(count: number, concurrency: number, send: (i: number) => Promise<HttpResult>): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const res = await send(next++);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    }),
  );
  return statuses;
}

/**
 * Memory settled before a round of requests, after it, and after a second
 * round of inputs not sent before (`round(first)` numbers its inputs from
 * `first`): what the first round left behind once (compiled code, pools,
 * allocator arenas) is not left again, what grows with every request is.
 * Growths in MB, and the figures every such test records.
 */
async function twoRounds(perRound: number, round: (first: number) => Promise<Record<number, number>>) {
  const before = await settledMemory();
  const statuses = await round(0);
  const after = await settledMemory();
  const secondStatuses = await round(perRound);
  const second = await settledMemory();
  const growth = {
    rss: (after.rss - before.rss) / MB,
    heap: (after.heap - before.heap) / MB,
    secondRss: (second.rss - after.rss) / MB,
    secondHeap: (second.heap - after.heap) / MB,
    bothRss: (second.rss - before.rss) / MB,
  };
  const mb = (n: number) => +n.toFixed(1);
  const figures = {
    statuses,
    rssBeforeMB: mb(before.rss / MB),
    rssAfterMB: mb(after.rss / MB),
    rssGrowthMB: mb(growth.rss),
    heapGrowthMB: mb(growth.heap),
    secondRound: { statuses: secondStatuses, rssAfterMB: mb(second.rss / MB), rssGrowthMB: mb(growth.secondRss), heapGrowthMB: mb(growth.secondHeap) },
    rssGrowthBothRoundsMB: mb(growth.bothRss),
  };
  return { statuses, secondStatuses, growth, figures };
}

/** `count` distinct code points above U+FFFF (two UTF-16 units, four UTF-8 bytes each): the costliest characters. */
function astral(count: number, seed: number): string {
  let text = '';
  for (let i = 0; i < count; i++) text += String.fromCodePoint(0x1f300 + ((seed * 7919 + i * 104_729) % 0x2ff));
  return text;
}

describe('bounded memory per client', () => {
  let service: TestService;
  let t: Tenant;
  const login = (body: Record<string, string>, headers: Record<string, string> = {}) =>
    fetchResult(`${service.baseUrl}/login.json`, {
      method: 'POST',
      headers: { ...t.as.app, ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  afterEach(async () => {
    await service?.close();
  });

  test(
    'the issue’s attack: 100 failed POST /login.json with 1.9 MB login names are refused before any work: the heap keeps none of them (< 8 MB), and resident memory over 200 grows by less than 192 MB (keeping them: 380 MB)',
    async () => {
      // The service's defaults: 10 failures per name, 100 per address.
      service = await startService();
      t = await seedTenant(service.app.provisioning);
      await warmUp(() => login({ login: 'warm-up' }));
      const base = 'x'.repeat(1.9e6);
      // As with the 1.9 MB documents below: 190 MB of bodies a round pass
      // through this process (the test's client and the service), and what
      // the allocator and V8's page pools keep afterwards moves by tens of MB
      // from run to run (+65 MB in one CI run on Node 24), so the heap — where
      // a kept name would be — is bounded tightly, and resident memory over
      // two rounds below what keeping the names would cost.
      const {
        statuses,
        secondStatuses,
        growth,
        figures: measured,
      } = await twoRounds(100, (first) => flood(100, 2, (i) => login({ login: `${first + i}${base}`, password: 'wrong password' })));
      figures.longLogins = { requestsPerRound: 100, loginBytes: 1.9e6, ...measured };
      expect(statuses).toEqual({ 422: 100 });
      expect(secondStatuses).toEqual({ 422: 100 });
      expect(growth.heap).toBeLessThan(8);
      expect(growth.secondHeap).toBeLessThan(8);
      expect(growth.bothRss).toBeLessThan(192);
    },
    FLOOD_TIMEOUT_MS,
  );

  test(
    '10,000 distinct failing logins of the maximum length (255 characters, each 4 bytes) with maximum-length passwords: resident memory grows by less than 32 MB, and by less than 8 MB over 10,000 more',
    async () => {
      service = await startService();
      t = await seedTenant(service.app.provisioning);
      await warmUp(() => login({ login: 'warm-up' }));
      const started = Date.now();
      // Keeping each ~2 KB body grows each round by ~20 MB, under the first
      // round's bound but not under the second's.
      const {
        statuses,
        secondStatuses,
        growth,
        figures: measured,
      } = await twoRounds(10_000, (first) => flood(10_000, 4, (i) => login({ login: astral(255, first + i), password: astral(255, first + i + 1) })));
      figures.maximumLogins = { requestsPerRound: 10_000, loginCharacters: 255, seconds: Math.round((Date.now() - started) / 1000), ...measured };
      // Every one fails: 401 until the address's budget (100) is spent, then 429.
      expect(statuses).toEqual({ 401: 100, 429: 9_900 });
      expect(secondStatuses).toEqual({ 429: 10_000 });
      expect(growth.rss).toBeLessThan(32);
      expect(growth.secondRss).toBeLessThan(8);
    },
    FLOOD_TIMEOUT_MS,
  );

  test(
    '10,000 failing logins from distinct 16 KB forwarded addresses (TRUST_PROXY): the request and password budgets keep a fixed size per client, and resident memory grows by less than 32 MB',
    async () => {
      service = await startService({ trustProxy: true, rateLimit: { windowMs: 60_000, perCredential: 1_000_000, perAddress: 6_000 } });
      t = await seedTenant(service.app.provisioning);
      const forwarded = (i: number) => `${i}-${'f'.repeat(16 * 1024)}`;
      await warmUp(() => login({ login: 'warm-up' }, { 'X-Forwarded-For': forwarded(-1) }));
      const before = await settledMemory();
      const statuses = await flood(10_000, 4, (i) => login({ login: 'nobody', password: 'wrong password' }, { 'X-Forwarded-For': forwarded(i) }));
      const after = await settledMemory();
      const growthMB = (after.rss - before.rss) / MB;
      figures.longAddresses = {
        requests: 10_000,
        addressBytes: 16 * 1024,
        statuses,
        rssBeforeMB: +(before.rss / MB).toFixed(1),
        rssAfterMB: +(after.rss / MB).toFixed(1),
        rssGrowthMB: +growthMB.toFixed(1),
        heapGrowthMB: +((after.heap - before.heap) / MB).toFixed(1),
      };
      // One unknown name: 401 for its 10 failures, then 429 from any address.
      expect(statuses).toEqual({ 401: 10, 429: 9_990 });
      expect(growthMB).toBeLessThan(32);
    },
    FLOOD_TIMEOUT_MS,
  );

  test(
    '100 distinct 1.9 MB GraphQL documents, each sent twice (the second sight compiles a document): the executor keeps none of them, the heap keeps no more than Apollo’s parsed-document cache (30 MiB) and nothing more over 100 more, and resident memory grows by less than 192 MB over both (keeping them: 380 MB)',
    async () => {
      service = await startService();
      t = await seedTenant(service.app.provisioning);
      const document = (i: number, udid: string) => `query Q${i} { registeredUsers(udid: "${udid}") { id } }`;
      const send = (query: string) =>
        fetchResult(`${service.baseUrl}/graphql`, {
          method: 'POST',
          headers: { ...t.as.owner, 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        });
      await warmUp(async () => ({ ...(await send(document(-1, 'u'.repeat(65)))), status: 422 }));
      const filler = 'u'.repeat(1.9e6);
      // Resident memory is not a fine measure here: 380 MB of bodies pass
      // through this process per round (the test's client and the service),
      // and what the allocator and V8's page pools hold afterwards rose and fell
      // by up to ~100 MB from one round to the next on both Node lines (a round
      // +17 MB, the next +95; or +115, then -46), while heap and external
      // memory grew +31 MB in the first round and +0.4 MB in the second every
      // time. So the heap is bounded tightly — what JavaScript keeps is
      // Apollo's 30 MiB cache of parsed documents, once — and resident memory
      // over both rounds (two rounds' growth at most 129 MB in 9 runs) is
      // bounded below what keeping the documents would cost (380 MB).
      const {
        statuses,
        secondStatuses,
        growth,
        figures: measured,
      } = await twoRounds(100, (first) => flood(200, 2, (i) => send(document(first + (i >> 1), `${first + (i >> 1)}${filler}`))));
      figures.longDocuments = { requestsPerRound: 200, documentBytes: 1.9e6, ...measured };
      // Each answers the udid's BAD_USER_INPUT (HTTP 200, GraphQL's shape), on graphql-js: none was compiled.
      expect(statuses).toEqual({ 200: 200 });
      expect(secondStatuses).toEqual({ 200: 200 });
      expect(service.app.graphqlExecution.compiled).toBe(0);
      expect(growth.heap).toBeLessThan(40);
      expect(growth.secondHeap).toBeLessThan(8);
      expect(growth.bothRss).toBeLessThan(192);
    },
    FLOOD_TIMEOUT_MS,
  );
});

describe('every input measured against its maximum, in characters (code points)', () => {
  const service = useService({ sessions: { loginAttempts: { perLogin: 1e9, perAddress: 1e9 } } });
  const seed = () => seedTenant(service.app.provisioning);
  /** One character past 255 made of emoji: 256 code points, 512 UTF-16 units. */
  const emoji = (count: number) => '😀'.repeat(count);

  describe.each(SURFACES)('%s', (name) => {
    let surface: Surface;
    beforeAll(() => {
      surface = surfaceOf(name, service);
    });

    test.each([
      ['a login', { login: emoji(LIMITS.loginLength + 1), password: 'password123' }, 'login', LIMITS.loginLength],
      ['an email', { email: `${'e'.repeat(LIMITS.emailLength - 11)}@example.com`, password: 'password123' }, 'email', LIMITS.emailLength],
      ['a password', { login: 'owner', password: emoji(LIMITS.passwordLength + 1) }, 'password', LIMITS.passwordLength],
    ])(
      '%s one character past its maximum is 422 before any work, at login and in a signed session request; at the maximum it is checked as usual (401)',
      async (_what, over, field, max) => {
        const t = await seed();
        const message = `${field} must be at most ${max} characters`;
        const atMax = Object.fromEntries(Object.entries(over).map(([k, v]) => [k, k === field ? [...v].slice(0, max).join('') : v]));
        const session = value(await surface.createSession(signedSessionRequest(t)));
        surface.expectFailure(await surface.login({ 'SVC-Token': session.token }, over), 'BAD_USER_INPUT', message, field);
        surface.expectFailure(await surface.createSession(signedSessionRequest(t, over)), 'BAD_USER_INPUT', message, field);
        surface.expectFailure(await surface.login({ 'SVC-Token': session.token }, atMax as unknown as Credentials), 'UNAUTHENTICATED', MESSAGES.badLogin);
      },
    );

    test('an auth_key or a signature longer than any the service issues or checks is 422 naming it; at the maximum, the usual answers', async () => {
      const t = await seed();
      const key = (length: number) => signedSessionRequest(t, undefined, { authKey: 'k'.repeat(length) });
      surface.expectFailure(
        await surface.createSession(key(LIMITS.authKeyLength + 1)),
        'BAD_USER_INPUT',
        `auth_key must be at most ${LIMITS.authKeyLength} characters`,
        'authKey',
      );
      surface.expectFailure(await surface.createSession(key(LIMITS.authKeyLength)), 'UNKNOWN_APPLICATION', MESSAGES.unknownApplication);
      const signed = signedSessionRequest(t);
      surface.expectFailure(
        await surface.createSession({ ...signed, signature: 'a'.repeat(LIMITS.signatureLength + 1) }),
        'BAD_USER_INPUT',
        `signature must be at most ${LIMITS.signatureLength} characters`,
        'signature',
      );
      surface.expectFailure(
        await surface.createSession({ ...signed, signature: 'a'.repeat(LIMITS.signatureLength) }),
        'INVALID_SIGNATURE',
        MESSAGES.invalidSignature,
      );
    });

    test('a contact name is measured in characters, as udid is: 255 emoji are stored, 256 rejected', async () => {
      const t = await seed();
      const upload = value(
        await surface.uploadAddressBook(t.as.owner, {
          contacts: [
            { name: emoji(LIMITS.contactNameLength), phone: '+15550001001' },
            { name: emoji(LIMITS.contactNameLength + 1), phone: '+15550001002' },
          ],
        }),
      );
      expect(upload).toEqual({
        created: 1,
        updated: 0,
        deleted: 0,
        rejected: [{ index: 1, reasons: [`name must be 1 to ${LIMITS.contactNameLength} characters`] }],
      });
      expect(value(await surface.addressBook(t.as.owner))).toEqual([{ name: emoji(LIMITS.contactNameLength), phone: '+15550001001' }]);
    });
  });

  test('a session token longer than any token is 401 like an unknown one, without a lookup', async () => {
    const res = await service.rest('GET', '/users/external/101.json', { headers: { 'SVC-Token': 't'.repeat(LIMITS.sessionTokenLength + 1) } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ errors: { base: [MESSAGES.sessionMissing] } });
  });

  test('a registeredUsersConnection cursor longer than any cursor is 422 before it is decoded', async () => {
    const t = await seed();
    const res = await service.graphql(
      'query ($after: String) { registeredUsersConnection(first: 1, after: $after) { pageInfo { hasNextPage } } }',
      { after: 'A'.repeat(LIMITS.cursorLength + 1) },
      t.as.owner,
    );
    expect(res.body.errors?.[0]).toMatchObject({
      message: 'after must be a cursor that registeredUsersConnection returned',
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });
});

describe('parameters named like Object.prototype’s members are ordinary unknown parameters', () => {
  const service = useService();
  const seed = () => seedTenant(service.app.provisioning);
  const NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'];
  const sessions = async (t: Tenant) =>
    (await service.db.pool.query('SELECT count(*)::int AS n FROM sessions WHERE application_id = $1', [t.applicationId])).rows[0].n as number;

  test.each(NAMES)('a session request carrying `%s` (JSON, form, and nested in user) is 422 naming it, and opens no session', async (member) => {
    const t = await seed();
    const before = await sessions(t);
    const request = signedSessionRequest(t);
    const form = restForm(request);
    // Raw JSON text: an object literal would not carry a `__proto__` member.
    const json = `{${Object.entries(form)
      .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
      .join(',')},${JSON.stringify(member)}:{"login":"owner"}}`;
    const answers = [
      await service.rest('POST', '/session.json', { raw: json, headers: { 'content-type': 'application/json' } }),
      await service.rest('POST', '/session.json', {
        raw: `${new URLSearchParams(form)}&${encodeURIComponent(member)}=x`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
    ];
    for (const res of answers) {
      expect({ status: res.status, body: res.body }).toEqual({ status: 422, body: { errors: { [member]: [`unknown parameter ${member}`] } } });
      // Exactly that key, as text: never a function's source.
      expect(res.text).toBe(JSON.stringify({ errors: { [member]: [`unknown parameter ${member}`] } }));
    }
    const nested = await service.rest('POST', '/session.json', {
      raw: `{${Object.entries(form)
        .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
        .join(',')},"user":{${JSON.stringify(member)}:"x"}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(nested.status).toBe(422);
    expect(nested.body).toEqual({ errors: { [`user[${member}]`]: [`unknown parameter user[${member}]`] } });
    expect(await sessions(t)).toBe(before);
  });

  test('a login body whose credentials hide under `__proto__` names no one: 422, the session unchanged', async () => {
    const t = await seed();
    const res = await service.rest('POST', '/login.json', {
      raw: '{"__proto__":{"login":"owner","password":"password123"}}',
      headers: { ...t.as.app, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: { login: ['login or email is required'] } });
  });

  test('a delete whose force hides under `__proto__` or `constructor` hides for the caller only', async () => {
    const t = await seed();
    for (const [i, raw] of ['{"__proto__":{"force":1}}', '{"constructor":{"force":1}}'].entries()) {
      const res = await service.rest('DELETE', `/chat/Message/${t.messageIds[i]}.json`, {
        raw,
        headers: { ...t.as.owner, 'content-type': 'application/json' },
      });
      expect(res.status).toBe(200);
    }
    const { rows } = await service.db.pool.query('SELECT count(*)::int AS n FROM messages WHERE id = ANY($1) AND deleted_at IS NOT NULL', [t.messageIds]);
    expect(rows[0].n).toBe(0);
  });

  test('query strings, in both forms, take such names as unknown parameters (ignored) and still read the known ones', async () => {
    const t = await seed();
    await service.rest('POST', '/address_book.json', { headers: t.as.owner, body: { contacts: [{ name: 'M', phone: t.member.phone }], udid: 'phone-1' } });
    const query = NAMES.map((n) => `${encodeURIComponent(n)}=1`).join('&');
    const plain = await service.rest('GET', `/address_book.json?${query}&udid=phone-1`, { headers: t.as.owner });
    expect({ status: plain.status, body: plain.body }).toEqual({ status: 200, body: [{ name: 'M', phone: t.member.phone }] });
    const asJson = await service.rest(
      'GET',
      `/address_book.json?${encodeURIComponent(JSON.stringify({ ...Object.fromEntries(NAMES.map((n) => [n, 'x'])), udid: 'phone-1' }))}`,
      { headers: t.as.owner },
    );
    expect({ status: asJson.status, body: asJson.body }).toEqual({ status: 200, body: [{ name: 'M', phone: t.member.phone }] });
    const compact = await service.rest('GET', `/address_book/registered_users.json?${query}&compact=1`, { headers: t.as.owner });
    expect(compact.status).toBe(200);
  });

  test('GraphQL variables carrying `__proto__` are refused as an unknown input field, naming it', async () => {
    const t = await seed();
    const variables = `{"input":{"applicationId":"${t.applicationId}","authKey":"k","timestamp":"1","nonce":"1","signature":"s","__proto__":{"user":{"login":"owner"}}}}`;
    const res = await fetchResult(`${service.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"query":"mutation ($input: SessionRequestInput!) { createSession(input: $input) { id } }","variables":${variables}}`,
    });
    expect(res.status).toBeLessThan(500);
    expect(res.body.errors?.[0]?.message).toContain('"__proto__"');
    expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
