// Secrets: session tokens and API keys never reach a log line (nor their
// hashes), are 256 random bits, live in the database only as SHA-256 hashes and
// are looked up by hash; On-Behalf-Of cannot be used to probe for users of
// other applications; expired sessions are refused as soon as the cache does
// not vouch for them.
//
// Elsewhere: test/ops/observability.test.ts scans the info-level log of a few
// requests for tokens; test/rest/auth.test.ts covers the credential errors of
// the lookup and address-book paths (expired and unknown sessions, On-Behalf-Of
// with SVC-Token, malformed On-Behalf-Of values); test/rest/credential-cache.test.ts
// how long a cached credential is honoured. This file logs at trace level with
// main's redact setting, through every route, credential kind and failure path.
import { createHash, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { App } from '../../src/app';
import { type Database, openDatabase } from '../../src/db';
import { prismaOf } from '../../src/provisioning/client';
import { hashSecret, newSecret } from '../../src/services/secrets';
import { recordFigures } from '../support/figures';
import { expectUntouched } from '../support/chat';
import { fetchResult, type HttpResult, openTestDatabase, type ServiceOptions, startService, type TestService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';

const lines: string[] = [];
const logStream = new Writable({
  write(chunk, _encoding, done) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});
// No redact setting: createApp's own (the configured session-token headers and Authorization) is what is tested.
const logger = { level: 'trace', stream: logStream };

let database: Database;
const opened: { service: TestService; database?: Database }[] = [];
let main: Served;
let tenant: Tenant;
let other: Tenant;

interface Served {
  /** The started service, for the support helpers that read its database. */
  service: TestService;
  app: App;
  rest(method: string, path: string, options?: { headers?: Record<string, string>; body?: unknown; raw?: string; contentType?: string }): Promise<HttpResult>;
  graphql(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<HttpResult>;
}

async function serve(options: Omit<ServiceOptions, 'database'>, over: Database = database): Promise<Served> {
  const service = await startService({ logger, ...options, database: over });
  opened.push({ service, ...(over === database ? {} : { database: over }) });
  const { app, baseUrl: base } = service;
  const rest: Served['rest'] = (method, path, { headers = {}, body, raw, contentType } = {}) =>
    fetchResult(`${base}${path}`, {
      method,
      headers: body === undefined && contentType === undefined ? headers : { 'content-type': contentType ?? 'application/json', ...headers },
      body: body === undefined ? raw : JSON.stringify(body),
    });
  return { service, app, rest, graphql: (query, variables, headers = {}) => rest('POST', '/graphql', { headers, body: { query, variables } }) };
}

beforeAll(async () => {
  database = await openTestDatabase();
  main = await serve({});
  tenant = await seedTenant(main.app.provisioning);
  other = await seedTenant(main.app.provisioning);
});
afterAll(async () => {
  for (const { service, database: own } of opened) {
    if (own) {
      // Its database is unreachable or closed: the pending session writes cannot be flushed.
      await service.close().catch(() => {});
      await own.close().catch(() => {});
    } else {
      await service.close();
    }
  }
  await database?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sha256 = (text: string, encoding: 'hex' | 'base64' | 'base64url') => createHash('sha256').update(text).digest(encoding);

describe('logs', () => {
  test('no token, API key, or hash of one reaches a log line: every route, credential kind, body and failure, at trace level', async () => {
    const t = tenant;
    const wrongToken = newSecret();
    const wrongKey = newSecret();
    const nearMiss = `${t.ownerToken.slice(0, -1)}${t.ownerToken.endsWith('A') ? 'B' : 'A'}`;
    const credentials: Record<string, string>[] = [
      t.as.owner,
      t.as.member,
      t.as.app,
      t.as.apiKey,
      t.as.onBehalfOf(t.owner.id),
      t.as.onBehalfOf(other.owner.id),
      { ...t.as.owner, 'On-Behalf-Of': String(t.member.id) },
      { ...t.as.owner, ...t.as.apiKey },
      { 'SVC-Token': wrongToken },
      { 'SVC-Token': nearMiss },
      { Authorization: `ApiKey ${wrongKey}` },
      { Authorization: `Bearer ${t.apiKey}` },
      { Authorization: t.apiKey },
    ];
    const secrets = [t.ownerToken, t.memberToken, t.appToken, t.outsiderToken, t.apiKey, wrongToken, wrongKey, nearMiss, other.apiKey];

    // Whatever the service prints besides its logger (Apollo's own logger writes to the console).
    const printed: string[] = [];
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((level) =>
      jest.spyOn(console, level).mockImplementation((...args: unknown[]) => void printed.push(args.map(String).join(' '))),
    );

    // A second service over an unreachable database (503, logged with its cause),
    // one over a database closed under it (503, logged with its cause), and one with
    // tiny rate limits (429s, counted by hashed credential).
    const unreachable = await openDatabase({ url: 'postgres://postgres@127.0.0.1:1/unreachable', poolMax: 1, migrate: false, statementTimeoutMs: 2_000 });
    const down = await serve({ auth: { cacheMs: 0 } }, unreachable);
    const closedDatabase = await openTestDatabase();
    const closing = await serve({}, closedDatabase);
    const closingTenant = await seedTenant(closing.app.provisioning);
    secrets.push(closingTenant.ownerToken, closingTenant.memberToken, closingTenant.apiKey);
    // Credentials checked while the database was up stay cached: after it is closed their
    // requests fail in the operation's own statements, the member's in the credential check.
    const warm = [closingTenant.as.owner, closingTenant.as.apiKey, closingTenant.as.onBehalfOf(closingTenant.owner.id)];
    for (const headers of warm) expect((await closing.rest('GET', '/users/external/102.json', { headers })).status).toBe(200);
    await closedDatabase.close();
    const limited = await serve({ rateLimit: { windowMs: 60_000, perCredential: 2, perAddress: 10_000 } });

    const statuses: number[] = [];
    const record = (res: HttpResult) => void statuses.push(res.status);
    try {
      for (const served of [main, down, limited]) {
        for (const headers of credentials) {
          record(await served.rest('GET', '/users/external/102.json', { headers }));
          record(await served.rest('GET', `/address_book/registered_users.json?udid=${encodeURIComponent(t.memberToken.slice(0, 40))}`, { headers }));
          record(
            await served.rest('POST', '/address_book.json', { headers, body: { contacts: [{ name: t.apiKey, phone: '+10000000102' }], udid: t.ownerToken } }),
          );
          record(await served.rest('DELETE', `/chat/Message/ffffffffffffffffffffffff,${t.appToken}.json`, { headers, body: { force: 0 } }));
          record(await served.graphql('query($u: String) { registeredUsers(udid: $u) { id } }', { u: t.outsiderToken }, headers));
          record(
            await served.graphql(`{ userByExternalId(externalUserId: 101) { id } x: registeredUsers(udid: "${t.ownerToken}") { id } }`, undefined, headers),
          );
        }
        // Secrets in bodies that fail to parse, in oversized bodies, in query strings.
        record(await served.rest('POST', '/address_book.json', { headers: t.as.owner, raw: `{"token":"${t.ownerToken}"`, contentType: 'application/json' }));
        record(
          await served.rest('POST', '/address_book.json', {
            headers: t.as.owner,
            raw: `${t.apiKey}${' '.repeat(2 * 1024 * 1024)}`,
            contentType: 'application/json',
          }),
        );
        record(await served.rest('POST', '/graphql', { headers: t.as.apiKey, raw: `{"query": "${t.apiKey}"}`, contentType: 'application/json' }));
        record(await served.rest('GET', `/users/external/101.json?token=${t.ownerToken}&api_key=${t.apiKey}`, { headers: t.as.owner }));
        record(await served.rest('GET', `/no/such/${t.memberToken}`, { headers: t.as.member }));
      }
      for (const headers of [...warm, closingTenant.as.member]) {
        record(await closing.rest('GET', '/users/external/102.json', { headers }));
        record(await closing.graphql('{ registeredUsers { id } }', undefined, headers));
      }
      await sleep(100);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }

    // The runs did go through the failure paths that log their causes.
    expect(statuses).toEqual(expect.arrayContaining([200, 400, 401, 403, 404, 413, 429, 503]));
    const parsed = lines.map((line) => JSON.parse(line) as { level: number; msg: string; err?: unknown });
    expect(parsed.filter((l) => l.level >= 50 && l.err !== undefined).length).toBeGreaterThan(10);
    expect(parsed.filter((l) => l.msg === 'request').length).toBeGreaterThanOrEqual(statuses.length);

    // Each secret, raw and in every form the service computes from it: the stored
    // SHA-256 (hex), and the rate limiter's key (SHA-256, base64url, of the header value).
    const forms = secrets.flatMap((secret) => [
      secret,
      hashSecret(secret),
      sha256(secret, 'base64url'),
      sha256(secret, 'base64'),
      sha256(`ApiKey ${secret}`, 'base64url'),
      sha256(`ApiKey ${secret}`, 'hex'),
    ]);
    expect(new Set(forms).size).toBe(forms.length);
    const everything = [...lines, ...printed];
    const leaks = forms.flatMap((form) => everything.filter((line) => line.includes(form)).map((line) => `${form.slice(0, 8)}… in ${line.slice(0, 200)}`));
    expect(leaks).toEqual([]);
    // Nor any header at all, redacted or not, nor the seeded password.
    expect(everything.filter((line) => /"headers"|svc-token|password123/i.test(line))).toEqual([]);

    recordFigures('secrets', {
      logLines: lines.length,
      consoleLines: printed.length,
      requests: statuses.length,
      byStatus: statuses.reduce<Record<number, number>>((counts, s) => ({ ...counts, [s]: (counts[s] ?? 0) + 1 }), {}),
      errorLinesWithCause: parsed.filter((l) => l.level >= 50 && l.err !== undefined).length,
      secretsChecked: secrets.length,
      formsChecked: forms.length,
      leaks: leaks.length,
    });
  });
});

describe('the secrets themselves', () => {
  test('newSecret() gives 256 random bits (at least 128), base64url, never twice the same', () => {
    const samples = Array.from({ length: 2_000 }, () => newSecret());
    for (const secret of samples) {
      expect(secret).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(secret, 'base64url').length * 8).toBeGreaterThanOrEqual(128);
      expect(Buffer.from(secret, 'base64url').length).toBe(32);
    }
    expect(new Set(samples).size).toBe(samples.length);
    // Every bit position takes both values across the samples (no constant bytes).
    const or = Buffer.alloc(32);
    const and = Buffer.alloc(32, 0xff);
    for (const secret of samples) {
      const bytes = Buffer.from(secret, 'base64url');
      for (let i = 0; i < 32; i++) {
        or[i]! |= bytes[i]!;
        and[i]! &= bytes[i]!;
      }
    }
    expect([or.every((b) => b === 0xff), and.every((b) => b === 0)]).toEqual([true, true]);
  });

  test('the tokens and keys the services hand out are such secrets', () => {
    for (const secret of [tenant.ownerToken, tenant.memberToken, tenant.appToken, tenant.apiKey]) {
      expect(Buffer.from(secret, 'base64url').length).toBe(32);
      expect(Buffer.from(secret, 'base64url').toString('base64url')).toBe(secret);
    }
  });

  test('the database holds only their SHA-256 hashes: no column of the application, its users or sessions holds one', async () => {
    const t = tenant;
    const rows = async (sql: string) => (await database.pool.query<{ row: string }>(sql, [t.applicationId])).rows.map((r) => r.row);
    const stored = [
      ...(await rows('SELECT row_to_json(a)::text AS row FROM applications a WHERE a.id = $1')),
      ...(await rows('SELECT row_to_json(s)::text AS row FROM sessions s WHERE s.application_id = $1')),
      ...(await rows('SELECT row_to_json(u)::text AS row FROM users u WHERE u.application_id = $1')),
    ];
    expect(stored.length).toBe(1 + 4 + 3);
    for (const secret of [t.ownerToken, t.memberToken, t.outsiderToken, t.appToken, t.apiKey, 'password123']) {
      expect(stored.filter((row) => row.includes(secret))).toEqual([]);
    }
    const sessions = await database.pool.query<{ token_hash: string }>('SELECT token_hash FROM sessions WHERE application_id = $1 ORDER BY token_hash', [
      t.applicationId,
    ]);
    expect(sessions.rows.map((r) => r.token_hash)).toEqual([t.ownerToken, t.memberToken, t.outsiderToken, t.appToken].map(hashSecret).sort());
    const app = await database.pool.query<{ api_key_hash: string }>('SELECT api_key_hash FROM applications WHERE id = $1', [t.applicationId]);
    expect(app.rows[0]!.api_key_hash).toBe(hashSecret(t.apiKey));
    expect(hashSecret(t.apiKey)).toMatch(/^[0-9a-f]{64}$/);
  });

  test('lookups go by hash: the stored hash is no credential, and a row holding a raw token does not authenticate it', async () => {
    const t = await seedTenant(main.app.provisioning);
    const lookup = (headers: Record<string, string>) => main.rest('GET', '/users/external/102.json', { headers });
    // A leaked hash (a database dump) is not a credential.
    expect((await lookup({ 'SVC-Token': hashSecret(t.ownerToken) })).status).toBe(401);
    expect((await lookup({ Authorization: `ApiKey ${hashSecret(t.apiKey)}` })).status).toBe(401);
    // Tokens compare exactly (no case folding, no trimming of the secret itself).
    expect((await lookup({ 'SVC-Token': t.ownerToken.toUpperCase() })).status).toBe(401);

    // A session row whose token_hash is a raw value: presenting that value fails,
    // presenting what hashes to the stored value succeeds.
    const raw = `raw-${randomBytes(16).toString('hex')}`;
    const hashed = `hashed-${randomBytes(16).toString('hex')}`;
    const expires = new Date(Date.now() + 3_600_000);
    for (const tokenHash of [raw, hashSecret(hashed)]) {
      await prismaOf(database).session.create({ data: { tokenHash, applicationId: t.applicationId, userId: t.member.id, expiresAt: expires } });
    }
    expect((await lookup({ 'SVC-Token': raw })).status).toBe(401);
    const ok = await lookup({ 'SVC-Token': hashed });
    expect([ok.status, ok.body.user?.id]).toEqual([200, t.member.id]);
  });
});

describe('On-Behalf-Of', () => {
  test('with a session token it is refused with 400 on every route and on GraphQL, and nothing changes', async () => {
    // The lookup and address-book reads are in test/rest/auth.test.ts, the delete in the
    // delete-messages suites; here every route at once, and the application token too.
    const t = await seedTenant(main.app.provisioning);
    const message = 'On-Behalf-Of is accepted only with Authorization: ApiKey';
    for (const headers of [
      { ...t.as.owner, 'On-Behalf-Of': String(t.owner.id) },
      { ...t.as.app, 'On-Behalf-Of': String(t.member.id) },
    ]) {
      const results = [
        await main.rest('GET', '/users/external/102.json', { headers }),
        await main.rest('GET', '/address_book/registered_users.json', { headers }),
        await main.rest('POST', '/address_book.json', { headers, body: { contacts: [{ name: 'M', phone: '+10000000102' }] } }),
        await main.rest('DELETE', `/chat/Message/${t.messageIds.join(',')}.json`, { headers, body: { force: 1 } }),
        await main.graphql(`mutation { deleteMessages(ids: ${JSON.stringify(t.messageIds)}, force: true) { notFound } }`, undefined, headers),
      ];
      expect(results.map((r) => [r.status, r.body])).toEqual([
        [400, { errors: { base: [message] } }],
        [400, { errors: [message] }],
        [400, { errors: [message] }],
        [400, { errors: [message] }],
        [200, { data: null, errors: [expect.objectContaining({ message, extensions: { code: 'BAD_REQUEST' } })] }],
      ]);
    }
    await expectUntouched(main.service, t);
    expect(await prismaOf(database).contact.count({ where: { user: { applicationId: t.applicationId } } })).toBe(0);
  });

  test('a user of another application answers exactly as a user id that does not exist, on every route and on GraphQL', async () => {
    const t = await seedTenant(main.app.provisioning);
    const u = await seedTenant(main.app.provisioning);
    const calls = (onBehalfOf: string) => {
      const headers = { ...t.as.apiKey, 'On-Behalf-Of': onBehalfOf };
      return Promise.all([
        main.rest('GET', '/users/external/102.json', { headers }),
        main.rest('GET', '/address_book/registered_users.json', { headers }),
        main.rest('POST', '/address_book.json', { headers, body: { contacts: [{ name: 'M', phone: '+10000000102' }] } }),
        main.rest('DELETE', `/chat/Message/${u.messageIds.join(',')}.json`, { headers }),
        main.graphql('{ userByExternalId(externalUserId: 102) { id } }', undefined, headers),
        main.graphql('{ registeredUsers { id } }', undefined, headers),
      ]);
    };
    const answer = (results: HttpResult[]) => results.map((r) => [r.status, r.text]);
    const otherApplication = answer(await calls(String(u.member.id)));
    // Ids nobody has (the largest one a user id can be), and ones that cannot be ids.
    for (const nobody of ['2147483647', '0', 'abc']) expect([nobody, answer(await calls(nobody))]).toEqual([nobody, otherApplication]);
    expect(otherApplication[0]).toEqual([403, JSON.stringify({ errors: { base: ['On-Behalf-Of does not name a user of this application'] } })]);
    // The control: a user of the key's own application is served.
    expect((await calls(String(t.member.id))).map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    // The other application's messages were not touched by any of it.
    await expectUntouched(main.service, u);
  });
});

describe('expired and removed credentials without the cache (auth.cacheMs 0)', () => {
  test('a session whose expiry is set in the past is refused at the next request, on both surfaces, and stays expired', async () => {
    const noCache = await serve({ auth: { cacheMs: 0 } });
    const t = await seedTenant(noCache.app.provisioning);
    expect((await noCache.rest('GET', '/users/external/102.json', { headers: t.as.owner })).status).toBe(200);

    const past = new Date(Date.now() - 1_000);
    await prismaOf(database).session.update({ where: { tokenHash: hashSecret(t.ownerToken) }, data: { expiresAt: past } });
    const rest = await noCache.rest('GET', '/users/external/102.json', { headers: t.as.owner });
    expect([rest.status, rest.body]).toEqual([401, { errors: { base: ['Required session does not exist'] } }]);
    const gql = await noCache.graphql('{ registeredUsers { id } }', undefined, t.as.owner);
    expect([gql.status, gql.body.errors?.[0]?.extensions?.code]).toEqual([200, 'UNAUTHENTICATED']);
    const session = await prismaOf(database).session.findUniqueOrThrow({ where: { tokenHash: hashSecret(t.ownerToken) } });
    expect(session.expiresAt.toISOString()).toBe(past.toISOString());
    // Another session of the same user is not affected.
    expect((await noCache.rest('GET', '/users/external/102.json', { headers: t.as.member })).status).toBe(200);
  });

  test('a deleted session and a replaced API key are refused at the next request', async () => {
    const noCache = await serve({ auth: { cacheMs: 0 } });
    const t = await seedTenant(noCache.app.provisioning);
    expect((await noCache.rest('GET', '/users/external/102.json', { headers: t.as.member })).status).toBe(200);
    expect((await noCache.rest('GET', '/users/external/102.json', { headers: t.as.apiKey })).status).toBe(200);

    await prismaOf(database).session.delete({ where: { tokenHash: hashSecret(t.memberToken) } });
    await prismaOf(database).application.update({ where: { id: t.applicationId }, data: { apiKeyHash: hashSecret(newSecret()) } });
    const session = await noCache.rest('GET', '/users/external/102.json', { headers: t.as.member });
    expect([session.status, session.body]).toEqual([401, { errors: { base: ['Required session does not exist'] } }]);
    const key = await noCache.rest('GET', '/users/external/102.json', { headers: t.as.apiKey });
    expect([key.status, key.body]).toEqual([401, { errors: { base: ['Unknown API key'] } }]);
  });
});
