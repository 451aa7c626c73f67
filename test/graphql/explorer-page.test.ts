// The explorer page over plain HTTP (the browser suite, test/browser, runs it):
// where it is served, that it loads nothing from other hosts, its response
// headers, the default headers it opens with, that it can be switched off, that
// GraphQL requests on /graphql are untouched, and that its example operations
// run as they are against the demo data.
import { request as httpRequest } from 'node:http';
import { prepareDemo } from '../../src/demo/seed';
import { EXPLORER_EXAMPLES, prefersHtml } from '../../src/http/explorer';
import { type ServiceOptions, useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';

/** What Chromium sends when navigating to a page. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8';
const MEMBER_QUERY = '{ userByExternalId(externalUserId: 102) { login externalUserId } }';

const service = useService();
let tenant: Tenant;
beforeAll(async () => {
  tenant = await seedTenant(service.app.provisioning);
});

/** Another app over the same database, listening on a port of its own. */
async function startApp(options: Omit<ServiceOptions, 'database'>) {
  const other = await service.start(options);
  const { baseUrl } = other;
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${baseUrl}${path}`, { headers });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  return { baseUrl, get, close: () => other.close() };
}

const isPage = (text: string) => text.includes('<div id="root">') && text.includes('renderYogaGraphiQL');

/** The options the page hands GraphiQL (JSON in its script). */
function pageOptions(html: string): Record<string, any> {
  const start = html.indexOf('{', html.indexOf("querySelector('#root'),"));
  const end = html.lastIndexOf('}', html.lastIndexOf('</script>'));
  return JSON.parse(html.slice(start, end + 1));
}

/** A GET with exactly these headers (fetch() sets its own Sec-Fetch-Mode). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    httpRequest(url, { headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => done({ status: response.statusCode ?? 0, text }));
    })
      .on('error', fail)
      .end();
  });
}

describe('GET /playground', () => {
  test('answers a self-contained GraphiQL page pointing at /graphql', async () => {
    const res = await service.rest('GET', '/playground');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(isPage(res.text)).toBe(true);
    expect(pageOptions(res.text).endpoint).toBe('/graphql');
    // No script, stylesheet, icon or other linked resource from anywhere but this origin.
    const external = [...res.text.matchAll(/<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:)?\/\/[^"'\s>]*/gi)];
    expect(external.map((m) => m[0].slice(0, 200))).toEqual([]);
    expect(res.text).toMatch(/<link rel="icon" href="data:/);
    // Header values are credentials: never stored by the browser.
    expect(pageOptions(res.text).shouldPersistHeaders).toBe(false);
  });

  test('opens with one tab per operation, each a named operation with its variables', async () => {
    const res = await service.rest('GET', '/playground');
    const tabs: { query: string; variables?: string }[] = pageOptions(res.text).defaultTabs;
    expect(tabs.map((tab) => /^(query|mutation) (\w+)/m.exec(tab.query)?.[2])).toEqual([
      'UserByExternalId',
      'RegisteredUsers',
      'DeleteMessages',
      'UploadAddressBook',
    ]);
    expect(tabs.map((tab) => [tab.query, tab.variables && JSON.parse(tab.variables)])).toEqual(
      EXPLORER_EXAMPLES.map((example) => [example.query, example.variables]),
    );
  });

  test('sends security headers that still allow its inline script and editor workers', async () => {
    const res = await service.rest('GET', '/playground');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain('worker-src blob:');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    // Without default headers it holds no credential: the same page for everyone (test/security/cache-headers.test.ts).
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  });

  test('has no default headers unless the app is given some', async () => {
    const res = await service.rest('GET', '/playground');
    expect(pageOptions(res.text).headers).toBeUndefined();
  });
});

describe('GET /graphql', () => {
  test('answers the page to a browser (HTML preferred, no query)', async () => {
    const res = await service.rest('GET', '/graphql', { headers: { accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('vary')).toMatch(/accept/i);
    expect(isPage(res.text)).toBe(true);
  });

  test('answers the page to a browser navigation carrying the query GraphiQL keeps in the address', async () => {
    const path = `/graphql?query=${encodeURIComponent(MEMBER_QUERY)}`;
    const res = await rawGet(`${service.baseUrl}${path}`, { accept: BROWSER_ACCEPT, 'sec-fetch-mode': 'navigate' });
    expect(res.status).toBe(200);
    expect(isPage(res.text)).toBe(true);
  });

  test('leaves GET requests with a query to Apollo', async () => {
    const path = `/graphql?query=${encodeURIComponent(MEMBER_QUERY)}`;
    // A GET query passes Apollo's CSRF prevention with a preflight header, and runs.
    const run = await service.call('GET', path, { headers: { ...tenant.as.owner, 'apollo-require-preflight': 'true' } });
    expect(run.status).toBe(200);
    expect(run.body).toEqual({ data: { userByExternalId: { login: 'member', externalUserId: 102 } } });
    // Without one (nor a credential header, which passes too) Apollo refuses it,
    // even when HTML is accepted (no page: it is not a navigation).
    const refused = await service.call('GET', path, { headers: { accept: BROWSER_ACCEPT } });
    expect(refused.status).toBe(400);
    expect(isPage(refused.text)).toBe(false);
  });

  test('does not answer the page to API clients', async () => {
    for (const accept of ['application/json', '*/*', 'application/graphql-response+json, application/json']) {
      const res = await service.call('GET', '/graphql', { headers: { accept } });
      expect(isPage(res.text)).toBe(false);
    }
  });

  test('POST /graphql works as before (JSON, CSRF prevention on)', async () => {
    const res = await service.graphql(MEMBER_QUERY, undefined, tenant.as.owner);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { userByExternalId: { login: 'member', externalUserId: 102 } } });
    // A simple (CSRF-able) request is still refused.
    const simple = await service.rest('POST', '/graphql', {
      headers: { ...tenant.as.owner, 'content-type': 'text/plain' },
      raw: JSON.stringify({ query: MEMBER_QUERY }),
    });
    expect(simple.status).toBeGreaterThanOrEqual(400);
    expect(simple.text).not.toContain('"member"');
  });
});

describe('prefersHtml', () => {
  test.each([
    [BROWSER_ACCEPT, true],
    ['text/html', true],
    ['text/html;q=0.5, application/json', false],
    ['application/json, text/html;q=0.9', false],
    ['text/html;q=0', false],
    ['*/*', false],
    ['', false],
    [undefined, false],
  ])('%p → %p', (accept, expected) => {
    expect(prefersHtml(accept)).toBe(expected);
  });
});

describe('explorer options', () => {
  test('default headers are filled into the page, read on each load', async () => {
    let headers: Record<string, string> = { 'SVC-Token': 'first-token' };
    const { get, close } = await startApp({ explorer: { enabled: true, defaultHeaders: () => headers } });
    try {
      const first = await get('/playground');
      expect(pageOptions(first.text).headers).toBe('{\n  "SVC-Token": "first-token"\n}');
      headers = { 'SVC-Token': 'second-token' };
      const second = await get('/playground');
      expect(JSON.parse(pageOptions(second.text).headers)).toEqual({ 'SVC-Token': 'second-token' });
      expect(second.text.includes('first-token')).toBe(false);
      // A page holding a token is kept by no cache.
      expect([first.headers.get('cache-control'), second.headers.get('cache-control')]).toEqual(['no-store', 'no-store']);
      expect(second.headers.get('etag')).toBeNull();
    } finally {
      await close();
    }
  });

  test('a default header value cannot end the page script', async () => {
    const { get, close } = await startApp({
      explorer: { enabled: true, defaultHeaders: () => ({ 'SVC-Token': '</script><script>alert(1)</script>' }) },
    });
    try {
      const res = await get('/playground');
      expect(res.status).toBe(200);
      expect(res.text.match(/<\/script>/g)).toHaveLength(1);
      // The script still reads the value as it was given.
      expect(JSON.parse(pageOptions(res.text).headers)).toEqual({ 'SVC-Token': '</script><script>alert(1)</script>' });
    } finally {
      await close();
    }
  });

  test('disabled: /playground and the /graphql page answer 404 as unknown paths do; GraphQL still works', async () => {
    const { baseUrl, get, close } = await startApp({ explorer: { enabled: false } });
    try {
      const playground = await get('/playground');
      expect(playground.status).toBe(404);
      expect(JSON.parse(playground.text)).toEqual({ errors: ['No route for GET /playground'] });
      const page = await get('/graphql', { accept: BROWSER_ACCEPT });
      expect(page.status).toBe(404);
      expect(JSON.parse(page.text)).toEqual({ errors: ['No route for GET /graphql'] });

      const post = await fetch(`${baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...tenant.as.owner },
        body: JSON.stringify({ query: MEMBER_QUERY }),
      });
      expect(post.status).toBe(200);
      expect(await post.json()).toEqual({ data: { userByExternalId: { login: 'member', externalUserId: 102 } } });
    } finally {
      await close();
    }
  });
});

describe('example operations', () => {
  test('run as they are against the demo data, as the demo user alice', async () => {
    const demo = await prepareDemo(service.app.provisioning, service.app.services);
    const headers = { 'SVC-Token': demo.userToken };
    const results = [];
    for (const example of EXPLORER_EXAMPLES) {
      const res = await service.graphql(example.query, example.variables, headers);
      expect(res.status).toBe(200);
      expect(res.body.errors).toBeUndefined();
      results.push(res.body.data);
    }
    const [user, registered, deleted, uploaded] = results;
    expect(user.userByExternalId).toMatchObject({ login: 'bob', externalUserId: 1002 });
    expect(registered.registeredUsers.map((u: { login: string }) => u.login)).toEqual(['bob', 'carol']);
    expect(deleted.deleteMessages).toEqual({ successfullyDeleted: [], notFound: ['ffffffffffffffffffffffff'] });
    // created: 1 on a fresh demo (0 if the browser suite ran it first on a shared database).
    expect(uploaded.uploadAddressBook).toEqual({ created: expect.any(Number), updated: 0, deleted: 0 });
    // As the upload's comment says: device phone-1's book now finds dave.
    const device = await service.graphql('{ registeredUsers(udid: "phone-1") { login } }', undefined, headers);
    expect(device.body.data.registeredUsers).toEqual([{ login: 'dave' }]);
  });
});
