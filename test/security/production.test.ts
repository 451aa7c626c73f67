// The service as NODE_ENV=production configures it (appOptionsFromConfig(loadConfig(...)),
// exactly as src/main.ts builds it, over the test database): introspection and the
// explorer off, no field suggestions, no stack traces, security headers on every
// JSON response; CORS off unless CORS_ORIGINS names origins; bad values of the new
// variables stop the configuration with the variable named.
//
// Elsewhere: the explorer page's own headers in development and the explorer
// switched off by option (test/graphql/explorer-page.test.ts); the defaults of the
// older variables and their refusals (test/ops/lifecycle.test.ts).
import { getIntrospectionQuery } from 'graphql';
import { type App, appOptionsFromConfig } from '../../src/app';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/errors';
import { type Database, openDatabase } from '../../src/db';
import { recordFigures } from '../support/figures';
import { fetchResult, type GraphQLResult, type HttpResult, type ServiceOptions, startService, type TestService, useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

const service = useService(appOptionsFromConfig(loadConfig({ NODE_ENV: 'production' })));
let tenant: Tenant;
/** Apps over a database of a test's own (closed by the test, which may leave it open). */
const others: { other: TestService; database: Database }[] = [];
/** Every response of this file, for the stack-trace sweep at the end. */
const seen: { what: string; res: HttpResult }[] = [];

beforeAll(async () => {
  tenant = await seedTenant(service.app.provisioning);
});
afterAll(async () => {
  for (const { other, database } of others) {
    await other.close();
    await database.close().catch(() => {});
  }
});

interface Client {
  rest(method: string, path: string, options?: { headers?: Record<string, string>; body?: unknown; raw?: string }): Promise<HttpResult>;
  graphql(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<GraphQLResult>;
}

/** A client of `baseUrl` that remembers every response. */
function client(baseUrl: string): Client {
  const rest: Client['rest'] = async (method, path, { headers = {}, body, raw } = {}) => {
    const sent = body === undefined ? raw : JSON.stringify(body);
    const res = await fetchResult(`${baseUrl}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: sent,
    });
    seen.push({ what: `${method} ${path.slice(0, 80)}`, res });
    return res;
  };
  return {
    rest,
    graphql: (query, variables, headers = {}) => rest('POST', '/graphql', { headers, body: { query, variables } }),
  };
}

const prod = () => client(service.baseUrl);

/** Another app over `database` (default: the test database) with these options. */
async function serve(options: Omit<ServiceOptions, 'database'>, database?: Database): Promise<Client & { app: App }> {
  let other: TestService;
  if (database) {
    other = await startService({ ...options, database });
    others.push({ other, database });
  } else {
    other = await service.start(options);
  }
  return { app: other.app, ...client(other.baseUrl) };
}

const production = (env: Record<string, string> = {}) => appOptionsFromConfig(loadConfig({ NODE_ENV: 'production', ...env }));

/** The helmet headers every JSON response carries (CORP is cross-origin only when CORS is on). */
function expectSecurityHeaders(what: string, res: HttpResult, corp = 'same-origin'): void {
  const h = (name: string) => res.headers.get(name);
  expect({
    what,
    nosniff: h('x-content-type-options'),
    csp: h('content-security-policy'),
    frame: h('x-frame-options'),
    hsts: h('strict-transport-security'),
    referrer: h('referrer-policy'),
    corp: h('cross-origin-resource-policy'),
    poweredBy: h('x-powered-by'),
  }).toEqual({
    what,
    nosniff: 'nosniff',
    csp: "default-src 'none';frame-ancestors 'none'",
    frame: expect.stringMatching(/^(SAMEORIGIN|DENY)$/),
    hsts: expect.stringMatching(/^max-age=\d{8,}; includeSubDomains$/),
    referrer: 'no-referrer',
    corp,
    poweredBy: null,
  });
}

describe('GraphQL in production', () => {
  test('the configuration turns introspection and the explorer off and keeps rate limits on', () => {
    const options = production();
    expect(options).toMatchObject({ introspection: false, explorer: { enabled: false }, trustProxy: false, security: { corsOrigins: undefined } });
    expect(options.rateLimit).toEqual({ windowMs: 60_000, perCredential: 1_200, perAddress: 6_000, onStoreError: 'open' });
  });

  test.each([
    ['the standard introspection query', getIntrospectionQuery()],
    ['__schema', '{ __schema { types { name } } }'],
    ['__type', '{ __type(name: "User") { name fields { name } } }'],
    ['__type inside a real query', '{ userByExternalId(externalUserId: 101) { id } t: __type(name: "ContactInput") { name } }'],
  ])('%s is refused with 400 GRAPHQL_VALIDATION_FAILED (validationErrorCode INTROSPECTION_DISABLED), revealing nothing', async (_name, query) => {
    const res = await prod().graphql(query, undefined, tenant.as.owner);
    expect(res.status).toBe(400);
    expect(res.body).not.toHaveProperty('data');
    expect(res.body.errors![0]!.extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED', validationErrorCode: 'INTROSPECTION_DISABLED' });
    // No type or field of the schema is spelled out.
    expect(res.text).not.toMatch(/ContactInput|DeleteMessagesResult|registeredUsers|fullName/);
  });

  test('__typename is not introspection and still answers', async () => {
    const res = await prod().graphql('{ __typename }');
    expect([res.status, res.body]).toEqual([200, { data: { __typename: 'Query' } }]);
  });

  test('the explorer pages answer 404 in the unknown-path shape', async () => {
    const playground = await prod().rest('GET', '/playground', { headers: { accept: BROWSER_ACCEPT } });
    expect([playground.status, playground.body]).toEqual([404, { errors: ['No route for GET /playground'] }]);
    const variants: Record<string, string>[] = [{ accept: BROWSER_ACCEPT }, { accept: 'text/html' }, { accept: BROWSER_ACCEPT, 'sec-fetch-mode': 'navigate' }];
    for (const headers of variants) {
      const page = await prod().rest('GET', '/graphql', { headers });
      expect([page.status, page.body]).toEqual([404, { errors: ['No route for GET /graphql'] }]);
      expect(page.headers.get('content-type')).toMatch(/^application\/json/);
    }
  });

  const TYPOS: [string, string, Record<string, unknown> | undefined][] = [
    ['a field', '{ userByExternalId(externalUserId: 101) { fullNam } }', undefined],
    ['a root field', '{ userByExternalI(externalUserId: 101) { id } }', undefined],
    ['a mutation field', 'mutation { deleteMessage(ids: ["a"]) { notFound } }', undefined],
    ['an argument', '{ userByExternalId(externalUserI: 101) { id } }', undefined],
    ['a variable type', 'mutation ($c: [ContactInpt!]!) { uploadAddressBook(contacts: $c) { created } }', { c: [] }],
    ['a fragment type', '{ ... on Usr { id } }', undefined],
    ['an input field, literal', 'mutation { uploadAddressBook(contacts: [{name: "x", phon: "+10000000001"}]) { created } }', undefined],
    [
      'an input field, in variables',
      'mutation ($c: [ContactInput!]!) { uploadAddressBook(contacts: $c) { created } }',
      { c: [{ name: 'x', phon: '+10000000001' }] },
    ],
  ];

  test.each(TYPOS)('a typo in %s gets no "Did you mean" (in development it does: see the control below)', async (_name, query, variables) => {
    const res = await prod().graphql(query, variables, tenant.as.owner);
    expect(res.status).toBe(400);
    expect(res.body.errors!.length).toBeGreaterThan(0);
    expect(res.text).not.toMatch(/did you mean/i);
    // graphql-armor replaces the suggestion, so the answer still says one was withheld.
    if (!/Unknown type|variable/.test(_name)) expect(res.text).toContain('[Suggestion hidden]');
  });

  test('the control: development does suggest, so the production check above can fail', async () => {
    const dev = await serve(appOptionsFromConfig(loadConfig({ NODE_ENV: 'development', RATE_LIMIT_ENABLED: 'false' })));
    const res = await dev.graphql(TYPOS[0]![1], undefined, tenant.as.owner);
    expect(res.body.errors![0]!.message).toMatch(/Did you mean "fullName"\?/);
  });

  test('a REST body GraphQL refuses (a contact that is not an object) is 422 without suggestions either', async () => {
    const res = await prod().rest('POST', '/address_book.json', { headers: tenant.as.owner, body: { contacts: ['+10000000001'] } });
    expect([res.status, res.body]).toEqual([422, { errors: [expect.any(String)] }]);
    expect(res.text).not.toMatch(/did you mean/i);
  });
});

describe('failures show no internals', () => {
  test('with the database unreachable, or its pool closed under the app, every route answers 503 in its shape', async () => {
    // A second production app whose database refuses connections, then is closed
    // under it (the pool is ended): both are the database being unavailable.
    const database = await openDatabase({ url: 'postgres://postgres@127.0.0.1:1/unreachable', poolMax: 1, migrate: false, statementTimeoutMs: 2_000 });
    const broken = await serve(production(), database);
    const headers = tenant.as.owner;
    const calls = async () => [
      await broken.rest('GET', '/users/external/101.json', { headers }),
      await broken.rest('GET', '/address_book/registered_users.json', { headers }),
      await broken.rest('POST', '/address_book.json', { headers, body: { contacts: [{ name: 'x', phone: '+10000000001' }] } }),
      await broken.rest('DELETE', '/chat/Message/ffffffffffffffffffffffff.json', { headers }),
      await broken.graphql('{ registeredUsers { id } }', undefined, headers),
    ];

    const unavailable = 'Service temporarily unavailable: the database cannot be reached';
    const down = await calls();
    expect(down.map((r) => [r.status, r.body])).toEqual([
      [503, { code: 'SERVICE_UNAVAILABLE', message: unavailable }],
      [503, { errors: [unavailable] }],
      [503, { errors: [unavailable] }],
      [503, { errors: [unavailable] }],
      [
        200,
        {
          data: null,
          errors: [
            {
              message: unavailable,
              locations: expect.any(Array),
              path: ['registeredUsers'],
              extensions: { code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: 1 },
            },
          ],
        },
      ],
    ]);

    // Every REST 503 says when to retry; GraphQL says it in the error's extensions.
    expect(down.slice(0, 4).map((r) => r.headers.get('retry-after'))).toEqual(['1', '1', '1', '1']);

    await database.close();
    const closed = await calls();
    expect(closed.map((r) => [r.status, r.body])).toEqual(down.map((r) => [r.status, r.body]));
    // /readyz says what is wrong in the service's terms; the driver's message
    // (addresses, ports) goes to the log only.
    const ready = await broken.rest('GET', '/readyz');
    expect([ready.status, ready.body]).toEqual([503, { status: 'unavailable', reason: 'database unreachable' }]);
  });
});

describe('security headers', () => {
  test('every kind of JSON response carries them: success, client errors of each kind, GraphQL, probes, the OpenAPI document', async () => {
    const p = prod();
    const owner = tenant.as.owner;
    const responses: [string, HttpResult][] = [
      ['200 lookup', await p.rest('GET', '/users/external/102.json', { headers: owner })],
      ['200 registered', await p.rest('GET', '/address_book/registered_users.json', { headers: owner })],
      ['200 delete', await p.rest('DELETE', '/chat/Message/ffffffffffffffffffffffff.json', { headers: owner })],
      ['401', await p.rest('GET', '/users/external/102.json')],
      ['400 both credentials', await p.rest('GET', '/users/external/102.json', { headers: { ...owner, ...tenant.as.apiKey } })],
      ['403', await p.rest('GET', '/users/external/102.json', { headers: tenant.as.app })],
      ['404 unknown user', await p.rest('GET', '/users/external/999.json', { headers: owner })],
      ['404 unknown path', await p.rest('GET', '/nowhere')],
      [
        '413',
        await p.rest('POST', '/address_book.json', {
          headers: { ...owner, 'content-type': 'application/json' },
          raw: `{"contacts":[]}${' '.repeat(2 * 1024 * 1024)}`,
        }),
      ],
      ['415', await p.rest('POST', '/address_book.json', { headers: { ...owner, 'content-type': 'text/xml' }, raw: '<contacts/>' })],
      ['422', await p.rest('GET', '/users/external/abc.json', { headers: owner })],
      ['400 bad JSON', await p.rest('POST', '/address_book.json', { headers: { ...owner, 'content-type': 'application/json' }, raw: '{' })],
      ['GraphQL 200', await p.graphql('{ registeredUsers { id } }', undefined, owner)],
      ['GraphQL 400', await p.graphql('{ nope }', undefined, owner)],
      ['GraphQL batch 400', await p.rest('POST', '/graphql', { body: [{ query: '{ __typename }' }] })],
      ['healthz', await p.rest('GET', '/healthz')],
      ['readyz', await p.rest('GET', '/readyz')],
      ['openapi', await p.rest('GET', '/openapi.json')],
    ];
    expect(responses.map(([what, res]) => [what, res.status])).toEqual([
      ['200 lookup', 200],
      ['200 registered', 200],
      ['200 delete', 200],
      ['401', 401],
      ['400 both credentials', 400],
      ['403', 403],
      ['404 unknown user', 404],
      ['404 unknown path', 404],
      ['413', 413],
      ['415', 415],
      ['422', 422],
      ['400 bad JSON', 400],
      ['GraphQL 200', 200],
      ['GraphQL 400', 400],
      ['GraphQL batch 400', 400],
      ['healthz', 200],
      ['readyz', 200],
      ['openapi', 200],
    ]);
    for (const [what, res] of responses) {
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expectSecurityHeaders(what, res);
    }
  });

  test('in development the explorer page sends its own policy, not the API’s (one policy, allowing its script)', async () => {
    const dev = await serve(appOptionsFromConfig(loadConfig({ NODE_ENV: 'development', RATE_LIMIT_ENABLED: 'false' })));
    for (const [path, headers] of [
      ['/playground', {}],
      ['/graphql', { accept: BROWSER_ACCEPT }],
    ] as const) {
      const page = await dev.rest('GET', path, { headers });
      expect([path, page.status, page.headers.get('content-type')]).toEqual([path, 200, 'text/html; charset=utf-8']);
      const csp = page.headers.get('content-security-policy') ?? '';
      // A single policy (fetch joins repeated headers with ", ") that is the page's.
      expect(csp).not.toContain(', ');
      expect(csp).toMatch(/^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+';/);
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    }
    // The API next to it keeps the API's policy.
    expectSecurityHeaders('dev JSON', await dev.rest('GET', '/healthz'));
  });
});

describe('CORS', () => {
  const APP = 'https://app.example.com';
  const preflight = (c: Client, path: string, origin: string, method = 'POST') =>
    c.rest('OPTIONS', path, {
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'content-type,svc-token,authorization,on-behalf-of' },
    });
  const allowed = (res: HttpResult) => res.headers.get('access-control-allow-origin');

  test('not configured (the default): no Access-Control-Allow-Origin anywhere, and preflights are not approved', async () => {
    const p = prod();
    for (const [path, method] of [
      ['/graphql', 'POST'],
      ['/chat/Message/x.json', 'DELETE'],
      ['/users/external/101.json', 'GET'],
    ] as const) {
      const res = await preflight(p, path, APP, method);
      expect([path, res.status < 300, allowed(res), res.headers.get('access-control-allow-headers')]).toEqual([path, false, null, null]);
    }
    const get = await p.rest('GET', '/users/external/102.json', { headers: { ...tenant.as.owner, origin: APP } });
    expect([get.status, allowed(get)]).toEqual([200, null]);
    expect(get.headers.get('cross-origin-resource-policy')).toBe('same-origin');
  });

  test('CORS_ORIGINS=https://app.example.com: that origin’s preflights allow the credential headers; another origin gets nothing', async () => {
    const c = await serve(production({ CORS_ORIGINS: APP }));
    for (const [path, method] of [
      ['/graphql', 'POST'],
      ['/chat/Message/x.json', 'DELETE'],
      ['/address_book.json', 'POST'],
      ['/users/external/101.json', 'GET'],
    ] as const) {
      const res = await preflight(c, path, APP, method);
      expect([path, res.status, allowed(res)]).toEqual([path, 204, APP]);
      const headers = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/);
      expect(headers).toEqual(expect.arrayContaining(['svc-token', 'authorization', 'on-behalf-of', 'content-type']));
      expect((res.headers.get('access-control-allow-methods') ?? '').split(/,\s*/)).toEqual(expect.arrayContaining([method]));
      // Credentials travel in headers, never cookies.
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();

      const other = await preflight(c, path, 'https://evil.example.com', method);
      expect([path, allowed(other)]).toEqual([path, null]);
    }
    const get = await c.rest('GET', '/users/external/102.json', { headers: { ...tenant.as.owner, origin: APP } });
    expect([get.status, allowed(get)]).toEqual([200, APP]);
    expect(get.headers.get('vary')).toMatch(/origin/i);
    expect((get.headers.get('access-control-expose-headers') ?? '').toLowerCase()).toContain('retry-after');
    expectSecurityHeaders('CORS JSON', get, 'cross-origin');
    const otherGet = await c.rest('GET', '/users/external/102.json', { headers: { ...tenant.as.owner, origin: 'https://app.example.com.evil.example' } });
    expect(allowed(otherGet)).toBeNull();
    // A GraphQL POST from the allowed origin is answered with its header too.
    const post = await c.graphql('{ __typename }', undefined, { origin: APP });
    expect([post.status, allowed(post)]).toEqual([200, APP]);
  });

  test('CORS_ORIGINS with two origins allows exactly those two', async () => {
    const c = await serve(production({ CORS_ORIGINS: 'https://a.example.com, https://b.example.com:8443' }));
    expect(allowed(await preflight(c, '/graphql', 'https://a.example.com'))).toBe('https://a.example.com');
    expect(allowed(await preflight(c, '/graphql', 'https://b.example.com:8443'))).toBe('https://b.example.com:8443');
    expect(allowed(await preflight(c, '/graphql', 'https://b.example.com'))).toBeNull();
    expect(allowed(await preflight(c, '/graphql', 'http://a.example.com'))).toBeNull();
  });

  test('CORS_ORIGINS=* allows any origin', async () => {
    const c = await serve(production({ CORS_ORIGINS: '*' }));
    for (const origin of [APP, 'https://anything.example', 'http://localhost:3000']) {
      const res = await preflight(c, '/graphql', origin);
      expect([origin, res.status, allowed(res)]).toEqual([origin, 204, '*']);
    }
    const get = await c.rest('GET', '/users/external/102.json', { headers: { ...tenant.as.owner, origin: 'https://anything.example' } });
    expect([get.status, allowed(get)]).toEqual([200, '*']);
  });
});

describe('configuration of the new variables', () => {
  test.each([
    ['CORS_ORIGINS', 'notaurl'],
    ['CORS_ORIGINS', 'app.example.com'],
    ['CORS_ORIGINS', 'https://app.example.com/path'],
    ['CORS_ORIGINS', 'https://app.example.com,notaurl'],
    ['CORS_ORIGINS', 'ftp://app.example.com'],
    ['RATE_LIMIT_PER_CREDENTIAL', '0'],
    ['RATE_LIMIT_PER_CREDENTIAL', '-1'],
    ['RATE_LIMIT_PER_CREDENTIAL', '1.5'],
    ['RATE_LIMIT_PER_ADDRESS', '0'],
    ['RATE_LIMIT_PER_ADDRESS', 'many'],
    ['RATE_LIMIT_WINDOW_MS', '99'],
    ['RATE_LIMIT_WINDOW_MS', '3600001'],
    ['RATE_LIMIT_ENABLED', 'yes'],
    ['TRUST_PROXY', 'maybe'],
    ['DB_STATEMENT_TIMEOUT_MS', '-1'],
    ['DB_STATEMENT_TIMEOUT_MS', '600001'],
    ['DB_STATEMENT_TIMEOUT_MS', 'soon'],
  ])('%s=%s is refused with a ConfigError naming the variable', (name, value) => {
    let error: unknown;
    try {
      loadConfig({ NODE_ENV: 'production', [name]: value });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(new RegExp(`^Invalid configuration:\\n  ${name}: `));
    // Only that variable is named.
    expect((error as Error).message.split('\n')).toHaveLength(2);
  });

  test('good values are taken as given', () => {
    expect(
      loadConfig({
        CORS_ORIGINS: ' https://a.example.com ,http://localhost:3000 ',
        RATE_LIMIT_PER_CREDENTIAL: '1',
        RATE_LIMIT_PER_ADDRESS: '1',
        RATE_LIMIT_WINDOW_MS: '100',
        DB_STATEMENT_TIMEOUT_MS: '0',
        TRUST_PROXY: '1',
      }),
    ).toMatchObject({
      CORS_ORIGINS: ['https://a.example.com', 'http://localhost:3000'],
      RATE_LIMIT_PER_CREDENTIAL: 1,
      RATE_LIMIT_PER_ADDRESS: 1,
      RATE_LIMIT_WINDOW_MS: 100,
      DB_STATEMENT_TIMEOUT_MS: 0,
      TRUST_PROXY: true,
    });
    expect(loadConfig({ CORS_ORIGINS: '*' }).CORS_ORIGINS).toBe('*');
  });
});

// Last in the file (jest runs tests in order): every response collected above, from the
// production app, the broken ones, the development and CORS variants.
test('no response of this file carries a stack trace or a source path', () => {
  expect(seen.length).toBeGreaterThan(60);
  const stack = /"stack"|stacktrace|\bat \S+ \(|\bat [^\s"]+:\d+:\d+|\/src\/|node_modules|\.ts:\d+/;
  // The API's errors do not repeat the driver's either (/readyz's reason does, by design).
  const internal = /Cannot use a pool|ECONNREFUSED|statement \w+\.\w+ failed/;
  // The explorer page (HTML, development only) is code by nature: JSON answers are checked.
  const json = seen.filter(({ res }) => !(res.headers.get('content-type') ?? '').startsWith('text/html'));
  const leaks = json.filter(({ what, res }) => stack.test(res.text) || (!what.includes('/readyz') && internal.test(res.text)));
  expect(leaks.map(({ what, res }) => `${what} → ${res.status} ${res.text.slice(0, 200)}`)).toEqual([]);
  recordFigures('production', {
    responsesChecked: seen.length,
    byStatus: seen.reduce<Record<number, number>>((counts, { res }) => ({ ...counts, [res.status]: (counts[res.status] ?? 0) + 1 }), {}),
    leaks: leaks.length,
  });
});
