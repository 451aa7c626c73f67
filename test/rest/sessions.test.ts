// What only the REST side of sessions has: QuickBlox's token header and its
// expiry header, the body encodings SDKs send, QuickBlox's session JSON, and
// the configuration of the token headers. The rules themselves run on both
// surfaces in test/behaviour/sessions.test.ts.
import { Writable } from 'node:stream';
import { appOptionsFromConfig } from '../../src/app';
import { loadConfig } from '../../src/config';
import { seedTenant, type Tenant } from '../support/seed';
import { restForm, signedSessionRequest } from '../support/sessions';
import { fetchResult, startService, useService } from '../support/service';

const service = useService();
let t: Tenant;
beforeAll(async () => {
  t = await seedTenant(service.app.provisioning);
});

/** QuickBlox's Rails form, the one its JavaScript SDK can parse: "2026-11-23 20:00:00 UTC". */
const QB_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/;
const parseQbTime = (value: string): number => Date.parse(value.replace(' UTC', 'Z').replace(' ', 'T'));

describe('QB-Token', () => {
  test('is accepted exactly like SVC-Token on every path', async () => {
    const headers = { 'QB-Token': t.ownerToken };
    expect((await service.call('GET', '/users/external/102.json', { headers })).status).toBe(200);
    expect((await service.call('GET', '/address_book/registered_users.json', { headers })).status).toBe(200);
    expect((await service.call('GET', '/address_book.json', { headers })).status).toBe(200);
    expect((await service.call('DELETE', '/chat/Message/ffffffffffffffffffffffff.json', { headers })).status).toBe(200);
    const gql = await service.graphql('{ userByExternalId(externalUserId: 101) { id } }', {}, headers);
    expect(gql.body).toEqual({ data: { userByExternalId: { id: t.owner.id } } });
  });

  test.each([
    ['SVC-Token and QB-Token', { 'SVC-Token': 'a', 'QB-Token': 'b' }, 'Send one session token header (SVC-Token or QB-Token), not several'],
    [
      'the same token in both',
      {
        get 'SVC-Token'() {
          return t.ownerToken;
        },
        get 'QB-Token'() {
          return t.ownerToken;
        },
      },
      'Send one session token header (SVC-Token or QB-Token), not several',
    ],
    [
      'QB-Token and Authorization',
      {
        get 'QB-Token'() {
          return t.ownerToken;
        },
        get Authorization() {
          return `ApiKey ${t.apiKey}`;
        },
      },
      'Send either SVC-Token or Authorization, not both',
    ],
  ])('%s together are the documented 400', async (_what, headers, message) => {
    const res = await service.call('GET', '/address_book/registered_users.json', { headers: { ...headers } });
    expect([res.status, res.body]).toEqual([400, { errors: [message] }]);
    const lookup = await service.call('GET', '/users/external/101.json', { headers: { ...headers } });
    expect([lookup.status, lookup.body]).toEqual([400, { errors: { base: [message] } }]);
  });

  test('with SESSION_TOKEN_HEADERS=X-Session only that header carries a token, and CORS, caching and log redaction name it', async () => {
    const config = loadConfig({ SESSION_TOKEN_HEADERS: 'X-Session', RATE_LIMIT_ENABLED: 'false', CORS_ORIGINS: 'https://app.example' });
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const custom = await startService({ ...appOptionsFromConfig(config), logger: { level: 'info', stream } });
    try {
      const tenant = await seedTenant(custom.app.provisioning);
      const read = await custom.call('GET', '/users/external/101.json', { headers: { 'X-Session': tenant.ownerToken } });
      expect(read.status).toBe(200);
      // A shared cache keys answers by the header that says who is asking.
      expect(read.headers.get('vary')?.toLowerCase().split(/,\s*/)).toContain('x-session');
      const ignored = await custom.call('GET', '/users/external/101.json', { headers: { 'QB-Token': tenant.ownerToken } });
      expect([ignored.status, ignored.body]).toEqual([401, { errors: { base: ['Token is required: send SVC-Token or Authorization: ApiKey <key>'] } }]);
      // A browser app may send it cross-origin.
      const preflight = await custom.call('OPTIONS', '/users/external/101.json', {
        headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-session' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase().split(/,\s*/)).toContain('x-session');
      // A plugin logging request headers with its own serializer (Fastify's
      // drops them) never shows the token: the logger redacts the configured name.
      const pluginLog = custom.app.fastify.log.child({}, { serializers: { req: (req: { headers: unknown }) => ({ headers: req.headers }) } });
      pluginLog.info({ req: { headers: { 'x-session': tenant.ownerToken, authorization: `ApiKey ${tenant.apiKey}` } } }, 'a logged request');
      const logged = lines.find((line) => line.includes('a logged request'));
      expect(logged).toBeDefined();
      expect(logged).not.toContain(tenant.ownerToken);
      expect(logged).not.toContain(tenant.apiKey);
    } finally {
      await custom.close();
    }
  });

  test.each(['', 'Authorization', 'bad header!', 'SVC-Token,,On-Behalf-Of'])(
    'SESSION_TOKEN_HEADERS=%p stops the service at start with the variable named',
    (value) => {
      if (value === '') {
        // Empty counts as unset: the default.
        expect(loadConfig({ SESSION_TOKEN_HEADERS: value }).SESSION_TOKEN_HEADERS).toEqual(['svc-token', 'qb-token']);
        return;
      }
      expect(() => loadConfig({ SESSION_TOKEN_HEADERS: value })).toThrow(/^Invalid configuration:\n {2}SESSION_TOKEN_HEADERS: /);
    },
  );
});

describe('QB-Token-ExpirationDate', () => {
  test('every answer to a session-token request says when the session now expires, in QuickBlox’s format', async () => {
    for (const [method, path] of [
      ['GET', '/users/external/102.json'],
      ['GET', '/address_book/registered_users.json'],
      ['GET', '/session.json'],
      ['POST', '/graphql'],
    ] as const) {
      const before = Date.now();
      const res =
        path === '/graphql'
          ? await service.graphql('{ registeredUsers { id } }', {}, { 'QB-Token': t.ownerToken })
          : await service.call(method, path, { headers: { 'QB-Token': t.ownerToken } });
      const header = res.headers.get('qb-token-expirationdate');
      expect([path, header]).toEqual([path, expect.stringMatching(QB_TIME)]);
      // Two hours from now, to the second.
      expect(parseQbTime(header!)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 2 * 3600_000 - 1000);
      expect(parseQbTime(header!)).toBeLessThanOrEqual(Date.now() + 2 * 3600_000);
    }
  });

  test('a new session’s answer carries its expiry; API-key requests, refused tokens and an ended session carry none', async () => {
    const created = await service.call('POST', '/session.json', { body: restForm(signedSessionRequest(t)), form: true });
    expect(created.headers.get('qb-token-expirationdate')).toMatch(QB_TIME);
    expect((await service.call('GET', '/users/external/102.json', { headers: t.as.apiKey })).headers.get('qb-token-expirationdate')).toBeNull();
    expect((await service.call('GET', '/users/external/102.json', { headers: { 'QB-Token': 'nope' } })).headers.get('qb-token-expirationdate')).toBeNull();
    const ended = await service.call('DELETE', '/session.json', { headers: { 'QB-Token': created.body.session.token } });
    expect(ended.status).toBe(200);
    expect(ended.headers.get('qb-token-expirationdate')).toBeNull();
  });
});

describe('POST /session.json bodies', () => {
  test('the answer is QuickBlox’s session object, fields in its order', async () => {
    const request = signedSessionRequest(t, { login: 'member', password: 'password123' }, { nonce: '7334' });
    const res = await service.call('POST', '/session.json', { body: restForm(request), form: true });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body.session)).toEqual(['application_id', 'created_at', 'id', 'nonce', 'token', 'ts', 'updated_at', 'user_id', '_id']);
    expect(res.body.session).toEqual({
      application_id: t.applicationId,
      created_at: expect.stringMatching(/Z$/),
      id: expect.any(Number),
      nonce: 7334,
      token: expect.any(String),
      ts: Number(request.timestamp),
      updated_at: expect.stringMatching(/Z$/),
      user_id: t.member.id,
      _id: String(res.body.session.id),
    });
  });

  test('a JSON body with a nested user and numbers where the SDKs send numbers is the same request', async () => {
    const request = signedSessionRequest(t, { login: 'owner', password: 'password123' });
    const res = await service.call('POST', '/session.json', {
      body: {
        application_id: Number(request.applicationId),
        auth_key: request.authKey,
        timestamp: Number(request.timestamp),
        nonce: Number(request.nonce),
        signature: request.signature,
        user: request.user,
      },
    });
    expect([res.status, res.body.session?.user_id]).toEqual([201, t.owner.id]);
  });

  test.each([
    ['provider', { provider: 'facebook' }, 'sessions through social providers are not supported'],
    ['keys[token]', { 'keys[token]': 'x' }, 'sessions through social providers are not supported'],
    ['device[udid]', { 'device[udid]': 'x' }, 'unknown parameter device[udid]'],
  ])('an unsupported parameter %s is refused by name with 422', async (key, extra, message) => {
    const res = await service.call('POST', '/session.json', { body: { ...restForm(signedSessionRequest(t)), ...extra }, form: true });
    expect([res.status, res.body]).toEqual([422, { errors: { [key]: [message] } }]);
  });

  test.each(['application_id', 'auth_key', 'timestamp', 'nonce', 'signature'])('a missing %s is 422 naming it', async (key) => {
    const { [key]: _gone, ...body } = restForm(signedSessionRequest(t));
    const res = await service.call('POST', '/session.json', { body, form: true });
    expect([res.status, res.body]).toEqual([422, { errors: { [key]: [`${key} is required`] } }]);
  });

  test('a parameter of a JSON type the SDKs never send (an object, a boolean) is 422 naming it', async () => {
    const res = await service.call('POST', '/session.json', { body: { ...restForm(signedSessionRequest(t)), nonce: { a: 1 } } });
    expect([res.status, res.body]).toEqual([422, { errors: { nonce: ['nonce must be a string'] } }]);
  });
});

test('a service started with another SECRETS_KEY than the one that sealed a secret answers 500 without detail, and stores nothing', async () => {
  // A second app over the same database (the embedded one is per service otherwise), with another key.
  const other = await service.start({ secretsKey: Buffer.alloc(32, 9) });
  try {
    // t's secret was sealed by `service`, whose key is another.
    // t's application alone: other test files add sessions to a shared server database meanwhile.
    const count = async () => (await service.db.pool.query('SELECT count(*)::int AS n FROM sessions WHERE application_id = $1', [t.applicationId])).rows[0].n;
    const before = await count();
    const raw = await fetchResult(`${other.baseUrl}/session.json`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(restForm(signedSessionRequest(t))).toString(),
    });
    expect([raw.status, raw.body]).toEqual([500, { code: 'INTERNAL_SERVER_ERROR', message: 'Internal server error' }]);
    expect(await count()).toBe(before);
  } finally {
    await other.close();
  }
});

describe('GET /address_book.json', () => {
  test('reads QuickBlox’s JavaScript SDK query, a JSON object in place of a query string', async () => {
    const tenant = await seedTenant(service.app.provisioning);
    await service.call('POST', '/address_book.json', { headers: tenant.as.owner, body: { udid: 'dev "1"', contacts: [{ name: 'M', phone: '+10000000102' }] } });
    for (const query of [`?${encodeURIComponent(JSON.stringify({ udid: 'dev "1"' }))}`, `?udid=${encodeURIComponent('dev "1"')}`]) {
      const res = await service.call('GET', `/address_book.json${query}`, { headers: tenant.as.owner });
      expect([query, res.body]).toEqual([query, [{ name: 'M', phone: '+10000000102' }]]);
    }
    const malformed = await service.call('GET', '/address_book.json?%7B%22udid', { headers: tenant.as.owner });
    expect([malformed.status, malformed.body]).toEqual([400, { errors: ['Malformed query: invalid JSON'] }]);
  });
});

describe('CORS for QuickBlox browser apps', () => {
  test('a preflight allows QB-Token, QB-SDK and QB-OS, and answers expose QB-Token-ExpirationDate', async () => {
    const cors = await startService(appOptionsFromConfig(loadConfig({ CORS_ORIGINS: 'https://app.example.com', RATE_LIMIT_ENABLED: 'false' })));
    try {
      const preflight = await cors.rest('OPTIONS', '/address_book.json', {
        headers: {
          Origin: 'https://app.example.com',
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'qb-token,qb-sdk,qb-os,content-type',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-headers')?.split(/, */)).toEqual(expect.arrayContaining(['qb-token', 'qb-sdk', 'qb-os', 'svc-token']));
      const tenant = await seedTenant(cors.app.provisioning);
      const res = await cors.rest('GET', '/address_book.json', { headers: { Origin: 'https://app.example.com', 'QB-Token': tenant.ownerToken } });
      expect(res.headers.get('access-control-expose-headers')?.split(/, */)).toContain('qb-token-expirationdate');
    } finally {
      await cors.close();
    }
  });
});

describe('the SDK’s JSON query, value by value', () => {
  test('null is an absent udid (the global book), a number is its text, a list or object is refused with 422', async () => {
    const tenant = await seedTenant(service.app.provisioning);
    await service.call('POST', '/address_book.json', { headers: tenant.as.owner, body: { contacts: [{ name: 'G', phone: '+10000000102' }] } });
    await service.call('POST', '/address_book.json', { headers: tenant.as.owner, body: { udid: '42', contacts: [{ name: 'N', phone: '+10000000103' }] } });
    const read = (query: unknown) => service.call('GET', `/address_book.json?${encodeURIComponent(JSON.stringify(query))}`, { headers: tenant.as.owner });
    expect((await read({ udid: null })).body).toEqual([{ name: 'G', phone: '+10000000102' }]);
    expect((await read({ udid: 42 })).body).toEqual([{ name: 'N', phone: '+10000000103' }]);
    for (const udid of [['a'], { a: 1 }, true]) {
      const res = await read({ udid });
      expect([res.status, res.body]).toEqual([422, { errors: ['udid must be a string'] }]);
    }
  });
});
