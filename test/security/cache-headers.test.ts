// What every route tells HTTP caches (src/http/caching.ts), route by route.
// The routes are read from the running service's own route table, so a route
// added later is checked here without being named: anything not declared
// public or live must answer `Cache-Control: private, no-store` with `Vary`
// naming every credential header — with a session token, an API key, no
// credentials or a bad one, successes and errors (401, 403, 429) alike.
//
// The same through a real shared cache: test/security/shared-cache.test.ts.
import { connect } from 'node:net';
import { loadConfig } from '../../src/config';
import { appOptionsFromConfig } from '../../src/app';
import type { OpenApiDocument } from '../../src/rest/openapi';
import { ConfigError } from '../../src/errors';
import { fetchResult, type HttpResult, startService, useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** Answers that cannot depend on the caller, by what they are. */
const PUBLIC = new Set(['/openapi.json', '/schema.graphql', '/playground']);
const LIVE = new Set(['/healthz', '/readyz', '/metrics']);

let t: Tenant;

// CORS on: its Vary: Origin must survive beside the credential headers.
const service = useService({ security: { corsOrigins: ['https://app.example'] }, sessionTokenHeaders: ['svc-token', 'qb-token', 'x-app-token'] });
beforeAll(async () => {
  t = await seedTenant(service.app.provisioning);
});

/** Every method and path the service routes, from Fastify's own table. */
function routeTable(): { method: string; url: string }[] {
  const printed = service.app.fastify.printRoutes({ commonPrefix: false });
  const routes = [...printed.matchAll(/── (\S+) \(([A-Z, ]+)\)/g)].flatMap(([, url, methods]) => methods!.split(', ').map((method) => ({ method, url: url! })));
  expect(routes.length).toBeGreaterThan(20);
  return routes;
}

/** A concrete path of a route pattern. */
const pathOf = (url: string): string => (url === '*' ? '/anything' : url.replace(':file', '102.json'));

const CREDENTIALS = (of: Tenant): Record<string, Record<string, string>> => ({
  'a session token': { 'SVC-Token': of.ownerToken },
  'another session-token header': { 'X-App-Token': of.memberToken },
  'an API key with On-Behalf-Of': of.as.onBehalfOf(of.owner.id),
  'an API key': of.as.apiKey,
  'a bad token': { 'QB-Token': 'nope' },
  'no credentials': {},
});

function send(method: string, path: string, headers: Record<string, string>): Promise<HttpResult> {
  const withBody = method === 'POST' || method === 'DELETE';
  return fetchResult(`${service.baseUrl}${path}`, {
    method,
    headers: {
      origin: 'https://app.example',
      ...(method === 'OPTIONS' ? { 'access-control-request-method': 'GET' } : {}),
      ...(withBody ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: withBody ? (path === '/graphql' ? JSON.stringify({ query: '{ registeredUsers { id } }' }) : '{}') : undefined,
  });
}

const varyOf = (res: HttpResult): string[] =>
  (res.headers.get('vary') ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
const CREDENTIAL_HEADERS = ['svc-token', 'qb-token', 'x-app-token', 'authorization', 'on-behalf-of'];

describe('every route of the table', () => {
  test('answers a caller privately, and the public and live routes deliberately, whatever the credentials', async () => {
    // Its own tenant: DELETE /session.json and /login.json end its sessions on the way.
    const own = await seedTenant(service.app.provisioning);
    const checked: string[] = [];
    for (const { method, url } of routeTable()) {
      const path = pathOf(url);
      for (const [credential, headers] of Object.entries(CREDENTIALS(own))) {
        const res = await send(method, path, headers);
        const where = `${method} ${path} with ${credential} → ${res.status}`;
        checked.push(where);
        expect([where, res.status]).toEqual([where, expect.any(Number)]);
        expect([where, res.status < 500]).toEqual([where, true]);
        if (PUBLIC.has(url) && (method === 'GET' || method === 'HEAD')) {
          expect([where, res.status, res.headers.get('cache-control')]).toEqual([where, 200, 'public, max-age=300']);
          expect([where, res.headers.get('etag')]).toEqual([where, expect.stringMatching(/^"[\w-]{43}"$/)]);
          expect([where, varyOf(res).filter((name) => CREDENTIAL_HEADERS.includes(name))]).toEqual([where, []]);
        } else if (LIVE.has(url) && (method === 'GET' || method === 'HEAD')) {
          expect([where, res.headers.get('cache-control')]).toEqual([where, 'no-store']);
          expect([where, res.headers.get('etag')]).toEqual([where, null]);
        } else {
          expect([where, res.headers.get('cache-control')]).toEqual([where, 'private, no-store']);
          expect([where, varyOf(res)]).toEqual([where, expect.arrayContaining([...CREDENTIAL_HEADERS, 'origin'])]);
        }
      }
    }
    // Successes and refusals of every kind went through the rule above.
    const statuses = new Set(checked.map((line) => line.split('→ ')[1]));
    expect([...statuses].sort()).toEqual(expect.arrayContaining(['200', '204', '400', '401', '403', '422']));
  });

  test('the public documents are the same bytes for every caller, and answer 304 to their ETag', async () => {
    for (const path of PUBLIC) {
      const anonymous = await send('GET', path, {});
      const alice = await send('GET', path, { 'SVC-Token': t.ownerToken });
      expect([path, alice.text === anonymous.text, alice.headers.get('etag')]).toEqual([path, true, anonymous.headers.get('etag')]);
      const etag = anonymous.headers.get('etag')!;
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const res = await send('GET', path, { 'If-None-Match': ifNoneMatch });
        expect([path, ifNoneMatch, res.status, res.text]).toEqual([path, ifNoneMatch, 304, '']);
        expect([path, res.headers.get('etag'), res.headers.get('cache-control')]).toEqual([path, etag, 'public, max-age=300']);
      }
      const changed = await send('GET', path, { 'If-None-Match': '"other"' });
      expect([path, changed.status, changed.text === anonymous.text]).toEqual([path, 200, true]);
    }
  });

  test('the explorer page at /graphql is public, varying by what chose it (Accept, Sec-Fetch-Mode)', async () => {
    const res = await send('GET', '/graphql', { accept: BROWSER_ACCEPT });
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(varyOf(res)).toEqual(expect.arrayContaining(['accept', 'sec-fetch-mode']));
    const query = await send('GET', `/graphql?query=${encodeURIComponent('{ registeredUsers { id } }')}`, { 'SVC-Token': t.ownerToken });
    expect(query.body.data.registeredUsers).toEqual([]);
    expect(query.headers.get('cache-control')).toBe('private, no-store');
    expect(varyOf(query)).toEqual(expect.arrayContaining(CREDENTIAL_HEADERS));
  });

  test("Apollo's own cache header on an unknown persisted query is replaced by the private one", async () => {
    const extensions = JSON.stringify({ persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } });
    const res = await send('GET', `/graphql?extensions=${encodeURIComponent(extensions)}`, { 'SVC-Token': t.ownerToken });
    expect(res.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
  });

  test("an HTTP request Node's parser refuses is answered no-store", async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const url = new URL(service.baseUrl);
      const socket = connect(Number(url.port), url.hostname, () => socket.write('GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nCache-Control: no-store\r\n/i);
  });
});

describe('over a budget, and with the browser cache allowed', () => {
  test('a 429 is private too', async () => {
    const limited = await startService({ rateLimit: { windowMs: 60_000, perCredential: 1, perAddress: 1_000 } });
    try {
      const headers = { 'SVC-Token': (await seedTenant(limited.app.provisioning)).ownerToken };
      await fetchResult(`${limited.baseUrl}/address_book.json`, { headers });
      const res = await fetchResult(`${limited.baseUrl}/address_book.json`, { headers });
      expect(res.status).toBe(429);
      expect(res.headers.get('cache-control')).toBe('private, no-store');
      expect(varyOf(res)).toEqual(expect.arrayContaining(['svc-token', 'qb-token', 'authorization', 'on-behalf-of']));
    } finally {
      await limited.close();
    }
  });

  test("CACHE_PRIVATE_MAX_AGE_S lets the caller keep successful reads, never errors or writes; CACHE_PUBLIC_MAX_AGE_S sets the documents'", async () => {
    const configured = await startService(
      appOptionsFromConfig(loadConfig({ RATE_LIMIT_ENABLED: 'false', CACHE_PRIVATE_MAX_AGE_S: '60', CACHE_PUBLIC_MAX_AGE_S: '0' })),
    );
    try {
      const get = (path: string, headers: Record<string, string> = {}, init: RequestInit = {}) =>
        fetchResult(`${configured.baseUrl}${path}`, { ...init, headers: { ...headers, ...(init.body ? { 'content-type': 'application/json' } : {}) } });
      // Its own database on the embedded one: a tenant of its own.
      const headers = { 'SVC-Token': (await seedTenant(configured.app.provisioning)).ownerToken };
      const read = await get('/address_book/registered_users.json', headers);
      expect([read.status, read.headers.get('cache-control')]).toEqual([200, 'private, max-age=60']);
      expect(varyOf(read)).toEqual(expect.arrayContaining(['svc-token', 'authorization', 'on-behalf-of']));
      const graphql = await get(`/graphql?query=${encodeURIComponent('{ registeredUsers { id } }')}`, headers);
      expect([graphql.status, graphql.headers.get('cache-control')]).toEqual([200, 'private, max-age=60']);
      const refused = await get('/address_book/registered_users.json');
      expect([refused.status, refused.headers.get('cache-control')]).toEqual([401, 'private, no-store']);
      const write = await get('/address_book.json', headers, { method: 'POST', body: JSON.stringify({ contacts: [] }) });
      expect([write.status, write.headers.get('cache-control')]).toEqual([200, 'private, no-store']);
      const schema = await get('/schema.graphql');
      expect(schema.headers.get('cache-control')).toBe('public, no-cache');
    } finally {
      await configured.close();
    }
  });

  test.each([
    ['CACHE_PRIVATE_MAX_AGE_S', '-1'],
    ['CACHE_PRIVATE_MAX_AGE_S', '1.5'],
    ['CACHE_PRIVATE_MAX_AGE_S', '86401'],
    ['CACHE_PUBLIC_MAX_AGE_S', 'soon'],
  ])('%s=%s is refused at start, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });
});

describe('the OpenAPI document', () => {
  test('lists Cache-Control and Vary on every answer of every operation', async () => {
    const document = (await send('GET', '/openapi.json', {})).body as OpenApiDocument;
    let responses = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const where = `${method.toUpperCase()} ${path} ${status}`;
          expect([where, Object.keys(response.headers ?? {})]).toEqual([where, expect.arrayContaining(['Cache-Control', 'Vary'])]);
          expect([where, response.headers!.Vary!.description]).toEqual([
            where,
            expect.stringContaining('svc-token, qb-token, x-app-token, authorization, on-behalf-of'),
          ]);
          const cacheControl = response.headers!['Cache-Control']!.schema;
          const readSuccess = method === 'get' && status.startsWith('2');
          expect([where, readSuccess ? cacheControl.pattern : cacheControl.const]).toEqual([
            where,
            readSuccess ? '^private, (no-store|max-age=[0-9]+)$' : 'private, no-store',
          ]);
          responses++;
        }
      }
    }
    expect(responses).toBeGreaterThan(60);
  });
});
