// Credentials and sessions, seen through the REST paths: sliding session
// expiry, last_request_at, expired and unknown sessions, malformed or
// conflicting credential headers, On-Behalf-Of, and never a 5xx.
import { prismaOf } from '../../src/provisioning/client';
import { hashSecret } from '../../src/services/secrets';
import { type RequestOptions, useService } from '../support/service';
import { seedTenant } from '../support/seed';

const TWO_HOURS_MS = 2 * 60 * 60 * 1000;
/** Allowed distance between the database's clock and this process's, plus request time. */
const CLOCK_SLACK_MS = 30_000;

const NO_CREDENTIALS = 'Token is required: send SVC-Token or Authorization: ApiKey <key>';
const SESSION_MISSING = 'Required session does not exist';
const MALFORMED_AUTHORIZATION = "Authorization must be 'ApiKey <key>'";
const ON_BEHALF_OF_WITHOUT_API_KEY = 'On-Behalf-Of is accepted only with Authorization: ApiKey';
const ON_BEHALF_OF_UNKNOWN = 'On-Behalf-Of does not name a user of this application';
const BOTH_CREDENTIALS = 'Send either SVC-Token or Authorization, not both';

const service = useService();

/** The object-shaped errors of the user lookup. */
const lookup = (externalId: number, headers: Record<string, string>) => service.call('GET', `/users/external/${externalId}.json`, { headers });
/** The list-shaped errors of the address book. */
const registered = (headers: Record<string, string>) => service.call('GET', '/address_book/registered_users.json', { headers });

const sessionOf = (token: string) => prismaOf(service.db).session.findUniqueOrThrow({ where: { tokenHash: hashSecret(token) } });
const lastRequestAt = async (userId: number) => (await prismaOf(service.db).user.findUniqueOrThrow({ where: { id: userId } })).lastRequestAt;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Asserts the same failure on both error shapes. */
async function expectRejected(headers: Record<string, string>, status: number, message: string): Promise<void> {
  const object = await lookup(101, headers);
  expect([object.status, object.body]).toEqual([status, { errors: { base: [message] } }]);
  const list = await registered(headers);
  expect([list.status, list.body]).toEqual([status, { errors: [message] }]);
}

describe('sessions', () => {
  test('a request with a user token moves the session expiry to about two hours from now', async () => {
    const t = await seedTenant(service.app.provisioning);
    const soon = new Date(Date.now() + 5 * 60_000);
    await prismaOf(service.db).session.update({ where: { tokenHash: hashSecret(t.ownerToken) }, data: { expiresAt: soon } });

    const before = Date.now();
    const res = await lookup(102, t.as.owner);
    const after = Date.now();
    expect(res.status).toBe(200);

    const { expiresAt } = await sessionOf(t.ownerToken);
    expect(expiresAt.getTime()).toBeGreaterThanOrEqual(before + TWO_HOURS_MS - CLOCK_SLACK_MS);
    expect(expiresAt.getTime()).toBeLessThanOrEqual(after + TWO_HOURS_MS + CLOCK_SLACK_MS);
    // Other sessions of the tenant are untouched.
    expect((await sessionOf(t.memberToken)).expiresAt.getTime()).toBeLessThanOrEqual(before + TWO_HOURS_MS);
  });

  test('a request with a user token sets the user’s last_request_at, and only that user’s', async () => {
    const t = await seedTenant(service.app.provisioning);
    expect(await lastRequestAt(t.owner.id)).toBeNull();

    const before = Date.now();
    const res = await registered(t.as.owner);
    expect(res.status).toBe(200);

    const stamped = await lastRequestAt(t.owner.id);
    expect(stamped).not.toBeNull();
    expect(Math.abs(stamped!.getTime() - before)).toBeLessThan(CLOCK_SLACK_MS);
    expect(await lastRequestAt(t.member.id)).toBeNull();
    expect(await lastRequestAt(t.outsider.id)).toBeNull();
  });

  test('the first request stamps last_request_at at once; later ones advance it and the expiry in the batched write', async () => {
    const t = await seedTenant(service.app.provisioning);
    const first = await lookup(101, t.as.owner);
    expect(first.status).toBe(200);
    expect(first.body.user.id).toBe(t.owner.id);
    expect(first.body.user.last_request_at).not.toBeNull();
    expect(first.body.user.last_request_at).toBe((await lastRequestAt(t.owner.id))!.toISOString());
    const firstExpiry = (await sessionOf(t.ownerToken)).expiresAt;

    await sleep(50);
    // A request within the credential cache's window: its touch is batched.
    const second = await lookup(101, t.as.owner);
    expect(second.status).toBe(200);
    expect(Date.parse(second.body.user.last_request_at)).toBeGreaterThanOrEqual(Date.parse(first.body.user.last_request_at));
    await service.app.services.auth.flush();
    expect((await lastRequestAt(t.owner.id))!.getTime()).toBeGreaterThan(Date.parse(first.body.user.last_request_at));
    expect((await sessionOf(t.ownerToken)).expiresAt.getTime()).toBeGreaterThan(firstExpiry.getTime());
    // Another user's record is not stamped by the owner's requests.
    const member = await lookup(102, t.as.owner);
    expect(member.body.user.last_request_at).toBeNull();
  });

  test('a session whose expiry has passed is rejected with 401 and is not brought back to life', async () => {
    const t = await seedTenant(service.app.provisioning);
    const expired = new Date(Date.now() - 60_000);
    await prismaOf(service.db).session.update({ where: { tokenHash: hashSecret(t.ownerToken) }, data: { expiresAt: expired } });

    await expectRejected(t.as.owner, 401, SESSION_MISSING);
    // Rejected again: the failed requests did not extend it.
    await expectRejected(t.as.owner, 401, SESSION_MISSING);

    expect((await sessionOf(t.ownerToken)).expiresAt.toISOString()).toBe(expired.toISOString());
    expect(await lastRequestAt(t.owner.id)).toBeNull();
    // The other sessions of the application still work.
    expect((await lookup(101, t.as.member)).status).toBe(200);
  });

  test('an unknown session token is rejected with 401 on both error shapes', async () => {
    await seedTenant(service.app.provisioning);
    await expectRejected({ 'SVC-Token': 'made-up-token' }, 401, SESSION_MISSING);
  });

  test('a session of a deleted user no longer authenticates', async () => {
    const t = await seedTenant(service.app.provisioning);
    await prismaOf(service.db).user.delete({ where: { id: t.outsider.id } });
    await expectRejected(t.as.outsider, 401, SESSION_MISSING);
  });
});

describe('credential headers', () => {
  test('a request without any credentials is rejected with 401', async () => {
    await seedTenant(service.app.provisioning);
    await expectRejected({}, 401, NO_CREDENTIALS);
  });

  test('an SVC-Token header that is present but empty is rejected with 401', async () => {
    await seedTenant(service.app.provisioning);
    await expectRejected({ 'SVC-Token': '' }, 401, SESSION_MISSING);
  });

  test.each(['ApiKey', 'ApiKey ', 'Bearer x', 'Basic dXNlcjpwYXNz', 'ApiKey two words', ''])(
    'Authorization %p is rejected with 401 "Authorization must be \'ApiKey <key>\'"',
    async (authorization) => {
      await seedTenant(service.app.provisioning);
      await expectRejected({ Authorization: authorization }, 401, MALFORMED_AUTHORIZATION);
    },
  );

  test('an API key longer than 512 characters is malformed', async () => {
    await seedTenant(service.app.provisioning);
    await expectRejected({ Authorization: `ApiKey ${'k'.repeat(513)}` }, 401, MALFORMED_AUTHORIZATION);
  });

  test('an unknown API key is rejected with 401 "Unknown API key"', async () => {
    await seedTenant(service.app.provisioning);
    await expectRejected({ Authorization: 'ApiKey no-such-key' }, 401, 'Unknown API key');
  });

  test('sending both SVC-Token and Authorization is rejected with 400', async () => {
    const t = await seedTenant(service.app.provisioning);
    await expectRejected({ ...t.as.owner, ...t.as.apiKey }, 400, BOTH_CREDENTIALS);
    // Even when one of them is bad.
    await expectRejected({ 'SVC-Token': 'made-up-token', ...t.as.apiKey }, 400, BOTH_CREDENTIALS);
  });

  test('On-Behalf-Of together with SVC-Token is rejected with 400', async () => {
    const t = await seedTenant(service.app.provisioning);
    await expectRejected({ ...t.as.owner, 'On-Behalf-Of': String(t.member.id) }, 400, ON_BEHALF_OF_WITHOUT_API_KEY);
    await expectRejected({ ...t.as.app, 'On-Behalf-Of': String(t.member.id) }, 400, ON_BEHALF_OF_WITHOUT_API_KEY);
    // The rejected requests did not count as use of the session.
    expect(await lastRequestAt(t.owner.id)).toBeNull();
  });

  test('On-Behalf-Of without any credentials is still "token required"', async () => {
    const t = await seedTenant(service.app.provisioning);
    await expectRejected({ 'On-Behalf-Of': String(t.member.id) }, 401, NO_CREDENTIALS);
  });

  test('On-Behalf-Of naming a user of another application, or no user at all, is rejected with 403', async () => {
    const a = await seedTenant(service.app.provisioning);
    const b = await seedTenant(service.app.provisioning);
    for (const onBehalfOf of [String(b.member.id), '0', '-1', 'abc', '', '2147483648', '99999999999', `${a.member.id}.0`, '2147483647']) {
      const headers = { ...a.as.apiKey, 'On-Behalf-Of': onBehalfOf };
      const object = await lookup(101, headers);
      expect([onBehalfOf, object.status, object.body]).toEqual([onBehalfOf, 403, { errors: { base: [ON_BEHALF_OF_UNKNOWN] } }]);
      const list = await registered(headers);
      expect([onBehalfOf, list.status, list.body]).toEqual([onBehalfOf, 403, { errors: [ON_BEHALF_OF_UNKNOWN] }]);
    }
  });

  test('an API key acts only within its own application', async () => {
    const a = await seedTenant(service.app.provisioning);
    const b = await seedTenant(service.app.provisioning);
    await service.app.provisioning.users.create({ applicationId: b.applicationId, login: 'only-in-b', password: 'password123', externalUserId: 8080 });
    expect((await lookup(8080, a.as.apiKey)).status).toBe(404);
    expect((await lookup(8080, b.as.apiKey)).status).toBe(200);
  });

  test('no combination of odd credentials, paths or parameters produces a 5xx', async () => {
    const a = await seedTenant(service.app.provisioning);
    const b = await seedTenant(service.app.provisioning);
    const headerSets: Record<string, string>[] = [
      {},
      a.as.owner,
      a.as.app,
      a.as.apiKey,
      a.as.onBehalfOf(a.member.id),
      a.as.onBehalfOf(b.member.id),
      { ...a.as.owner, ...b.as.apiKey },
      { 'SVC-Token': '' },
      { 'SVC-Token': 't'.repeat(10_000) },
      { 'SVC-Token': "' OR 1=1 --" },
      { 'SVC-Token': 'caf\u00e9' },
      { Authorization: `ApiKey ${'k'.repeat(600)}` },
      { Authorization: "ApiKey ' OR 1=1 --" },
      { Authorization: 'ApiKey \u00e9' },
      { ...a.as.apiKey, 'On-Behalf-Of': '1'.repeat(50) },
      { ...a.as.apiKey, 'On-Behalf-Of': '1e3' },
      { 'On-Behalf-Of': 'x' },
    ];
    const requests: [string, string, RequestOptions?][] = [
      ['GET', '/users/external/101.json'],
      ['GET', '/users/external/0.json'],
      ['GET', '/users/external/%00.json'],
      ['GET', '/users/external/.json'],
      ['GET', '/users/external/101'],
      ['GET', '/address_book/registered_users.json'],
      ['GET', '/address_book/registered_users.json?compact=1&udid=A&force=1'],
      ['GET', `/address_book/registered_users.json?udid=${'x'.repeat(65)}`],
      ['GET', '/address_book/registered_users.json?udid=a%00b'],
      ['POST', '/address_book.json', { body: { contacts: [{ name: 'N\u0000L', phone: '+10000000102' }], udid: 'a\u0000b' } }],
      ['GET', '/address_book/registered_users.json?compact=1&compact=0'],
      ['POST', '/address_book.json', { body: { contacts: [{ name: 'Member', phone: '+10000000102' }], udid: 'A' } }],
      ['POST', '/address_book.json', { body: { contacts: [{ name: 'x'.repeat(256), phone: '+10000000102' }] } }],
      ['POST', '/address_book.json', { headers: { 'content-type': 'text/plain' }, raw: 'hello' }],
    ];
    const fiveHundreds: string[] = [];
    for (const headers of headerSets) {
      for (const [method, path, options] of requests) {
        const res = await service.rest(method, path, { ...options, headers: { ...options?.headers, ...headers } });
        if (res.status >= 500) fiveHundreds.push(`${method} ${path} ${JSON.stringify(Object.keys(headers))} → ${res.status} ${res.text}`);
      }
    }
    expect(fiveHundreds).toEqual([]);
  });
});
