// Clients that send slowly cannot hold a connection open for long: real
// sockets (node:net) trickle headers and bodies, with and without
// credentials, into a service whose bounds are set short here (headers 1 s,
// a silent body 2 s, the whole request 4 s, an idle kept-alive connection
// 1 s); the defaults a deployment gets are checked against the server itself.
// Each bound answers 408 in the documented shape of what was asked and closes
// the connection, nothing of a cut request is stored, and a slow but steady
// upload within the bounds is served.
import { appOptionsFromConfig } from '../../src/app';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/errors';
import { MESSAGES } from '../../src/errors';
import { contactCount, manyContacts } from '../support/address-book';
import { recordFigures } from '../support/figures';
import { startService, useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';
import { requestHead, type SlowAnswer, slowRequest } from '../support/slow-client';
import { restForm, signedSessionRequest } from '../support/sessions';

// The body's idle bound is ten times the trickles' 200 ms: the sender and the
// service share one process, and a loaded machine stalled it for 0.8 s once,
// which a 1 s bound took for silence (a trickle cut at 2.1 s, not at 3 s).
const BOUNDS = { headersMs: 1_000, bodyIdleMs: 2_000, requestMs: 4_000, keepAliveMs: 1_000 };
/** Past every bound and the server's checking interval, with room for a busy machine. */
const GIVE_UP_MS = 10_000;

let t: Tenant;
const figures: Record<string, number | undefined> = {};

const service = useService({ timeouts: BOUNDS });
beforeAll(async () => {
  t = await seedTenant(service.app.provisioning);
});
afterAll(async () => {
  recordFigures('slow-clients', { bounds: BOUNDS, closedAfterMs: figures });
});

/** The 408 was answered, the connection then closed, and neither before the bound. */
function expectCut(answer: SlowAnswer, boundMs: number, figure: string): void {
  figures[figure] = answer.closedAfterMs;
  expect(answer.status).toBe(408);
  expect(answer.headers.connection).toBe('close');
  expect(answer.headers['cache-control']).toMatch(/no-store/);
  expect(answer.closedAfterMs).toBeDefined();
  expect(answer.closedAfterMs!).toBeGreaterThanOrEqual(boundMs - 50);
  expect(answer.closedAfterMs!).toBeLessThan(boundMs + 3_000);
}

const contacts = (count: number) => JSON.stringify({ contacts: manyContacts(count) });

describe('headers sent slowly', () => {
  test('a request whose headers never end (a header byte every 200 ms) is answered 408 and closed after the headers bound', async () => {
    const answer = await slowRequest(service.baseUrl, {
      start: 'GET /address_book/registered_users.json HTTP/1.1\r\nHost: 127.0.0.1\r\nSVC-Token: ',
      rest: `${t.ownerToken}\r\nX-Padding: ${'x'.repeat(200)}`,
      everyMs: 200,
      giveUpMs: GIVE_UP_MS,
    });
    expectCut(answer, BOUNDS.headersMs, 'headers trickled');
    // Nothing of the request was known yet: the generic list shape.
    expect(answer.body).toEqual({ errors: [MESSAGES.requestTimeout] });
  });

  test('a request line alone, then silence, is cut the same way', async () => {
    const answer = await slowRequest(service.baseUrl, { start: 'POST /graphql HTTP/1.1\r\n', giveUpMs: GIVE_UP_MS });
    expectCut(answer, BOUNDS.headersMs, 'headers stalled');
  });
});

describe('a body sent slowly', () => {
  test("with credentials: a byte every 200 ms (never silent for the idle bound) is cut at the whole-request bound, in the route's shape, and nothing is stored", async () => {
    const before = await contactCount(service, t);
    const body = contacts(20);
    const answer = await slowRequest(service.baseUrl, {
      start: requestHead('POST', '/address_book.json', { 'SVC-Token': t.ownerToken, 'Content-Type': 'application/json' }, body.length) + body.slice(0, 10),
      rest: body.slice(10),
      everyMs: 200,
      giveUpMs: GIVE_UP_MS,
    });
    expectCut(answer, BOUNDS.requestMs, 'body trickled, with credentials');
    expect(answer.body).toEqual({ errors: [MESSAGES.requestTimeout] });
    expect(answer.sent).toBeLessThan(body.length - 10);
    expect(await contactCount(service, t)).toBe(before);
  });

  test('without credentials: a session request trickled in is cut the same way, in the object shape', async () => {
    const body = new URLSearchParams(restForm(signedSessionRequest(t))).toString();
    const answer = await slowRequest(service.baseUrl, {
      start: requestHead('POST', '/session.json', { 'Content-Type': 'application/x-www-form-urlencoded' }, body.length),
      rest: body,
      everyMs: 200,
      giveUpMs: GIVE_UP_MS,
    });
    expectCut(answer, BOUNDS.requestMs, 'body trickled, no credentials');
    expect(answer.body).toEqual({ code: 'REQUEST_TIMEOUT', message: MESSAGES.requestTimeout });
  });

  test("GraphQL: a document trickled in is cut with REQUEST_TIMEOUT in GraphQL's shape", async () => {
    const body = JSON.stringify({ query: `{ registeredUsers { id } }${' '.repeat(100)}` });
    const answer = await slowRequest(service.baseUrl, {
      start: requestHead('POST', '/graphql', { 'Content-Type': 'application/json' }, body.length),
      rest: body,
      everyMs: 200,
      giveUpMs: GIVE_UP_MS,
    });
    expectCut(answer, BOUNDS.requestMs, 'graphql body trickled');
    expect(answer.body).toEqual({ errors: [{ message: MESSAGES.requestTimeout, extensions: { code: 'REQUEST_TIMEOUT' } }] });
  });

  test('a body that goes silent is cut after the idle bound, long before the whole-request one', async () => {
    const before = await contactCount(service, t);
    const body = contacts(5);
    const answer = await slowRequest(service.baseUrl, {
      start:
        requestHead('POST', '/address_book.json', { 'SVC-Token': t.ownerToken, 'Content-Type': 'application/json' }, body.length) +
        body.slice(0, body.length - 5),
      giveUpMs: GIVE_UP_MS,
    });
    expectCut(answer, BOUNDS.bodyIdleMs, 'body stalled');
    expect(answer.closedAfterMs!).toBeLessThan(BOUNDS.requestMs);
    expect(answer.body).toEqual({ errors: [MESSAGES.requestTimeout] });
    expect(await contactCount(service, t)).toBe(before);
  });

  test('a silent body on a path with no route is cut too (list shape)', async () => {
    const answer = await slowRequest(service.baseUrl, {
      start: requestHead('POST', '/nowhere.json', { 'Content-Type': 'application/json' }, 100) + '{"a":',
      giveUpMs: GIVE_UP_MS,
    });
    expectCut(answer, BOUNDS.bodyIdleMs, 'body stalled, no route');
  });

  test('a slow but steady upload within the bounds is served, and stored', async () => {
    const before = await contactCount(service, t);
    const body = contacts(40);
    const piece = Math.ceil(body.length / 8);
    const answer = await slowRequest(service.baseUrl, {
      start: requestHead('POST', '/address_book.json', { 'SVC-Token': t.ownerToken, 'Content-Type': 'application/json', Connection: 'close' }, body.length),
      rest: body,
      piece,
      everyMs: 250,
      giveUpMs: GIVE_UP_MS,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.created).toBe(40);
    expect(await contactCount(service, t)).toBe(before + 40);
  });

  test('a large body through fastify.inject (tests, benchmarks: a request with no socket timer) is served, not a 500', async () => {
    // light-my-request streams a body this size after the request starts, so
    // the route sees it incomplete and would arm a socket timer it does not have.
    const before = await contactCount(service, t);
    const answer = await service.app.fastify.inject({
      method: 'POST',
      url: '/address_book.json',
      headers: { 'svc-token': t.ownerToken, 'content-type': 'application/json' },
      // Into a book of its own (a udid): the earlier upload's contacts are in the global one.
      payload: JSON.stringify({ udid: 'injected', contacts: manyContacts(3_000) }),
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.json().created).toBe(3_000);
    expect(await contactCount(service, t)).toBe(before + 3_000);
  });
});

describe('keep-alive', () => {
  test('an idle kept-alive connection is closed after the keep-alive bound; a request within it is served on the same connection', async () => {
    const request = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    const answer = await slowRequest(service.baseUrl, {
      start: request,
      // The second request, whole, 500 ms later: within the bound.
      rest: request,
      piece: request.length,
      everyMs: 500,
      giveUpMs: GIVE_UP_MS,
    });
    figures['kept-alive, idle'] = answer.closedAfterMs;
    expect(answer.status).toBe(200);
    expect(answer.sent).toBe(request.length);
    // Answered twice on one connection, then closed once idle for the bound.
    expect(answer.headers.connection).toBe('keep-alive');
    expect(answer.closedAfterMs!).toBeGreaterThanOrEqual(500 + BOUNDS.keepAliveMs - 50);
    expect(answer.closedAfterMs!).toBeLessThan(500 + BOUNDS.keepAliveMs + 3_000);
  });

  test('a body answered before it arrived (415: a media type no route reads) still leaves the connection to the keep-alive bound', async () => {
    const body = 'x'.repeat(1_024);
    const answer = await slowRequest(service.baseUrl, {
      start: `POST /address_book.json HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/x-unknown\r\nContent-Length: ${body.length}\r\n\r\n`,
      // The body, whole, after the answer: Node reads and drops it.
      rest: body,
      piece: body.length,
      everyMs: 300,
      giveUpMs: GIVE_UP_MS,
    });
    figures['kept-alive after an early answer'] = answer.closedAfterMs;
    expect(answer.status).toBe(415);
    expect(answer.headers.connection).toBe('keep-alive');
    // Closed once idle for the bound after the body, not left open (it was, for good: the body's end cleared the timer).
    expect(answer.closedAfterMs).toBeDefined();
    expect(answer.closedAfterMs!).toBeGreaterThanOrEqual(300 + BOUNDS.keepAliveMs - 50);
    expect(answer.closedAfterMs!).toBeLessThan(300 + BOUNDS.keepAliveMs + 3_000);
  });
});

describe('configuration', () => {
  test('the defaults reach the HTTP server: headers 20 s, a silent body 30 s, the whole request 180 s, keep-alive 72 s', async () => {
    const configured = await startService(appOptionsFromConfig(loadConfig({ RATE_LIMIT_ENABLED: 'false' })));
    try {
      const server = configured.app.fastify.server;
      expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout]).toEqual([20_000, 180_000, 72_000]);
      expect(appOptionsFromConfig(loadConfig({})).timeouts).toEqual({ headersMs: 20_000, bodyIdleMs: 30_000, requestMs: 180_000, keepAliveMs: 72_000 });
    } finally {
      await configured.close();
    }
  });

  test('each setting is read from its variable', () => {
    const config = loadConfig({ HEADERS_TIMEOUT_MS: '5000', BODY_IDLE_TIMEOUT_MS: '6000', REQUEST_TIMEOUT_MS: '7000', KEEP_ALIVE_TIMEOUT_MS: '8000' });
    expect(appOptionsFromConfig(config).timeouts).toEqual({ headersMs: 5_000, bodyIdleMs: 6_000, requestMs: 7_000, keepAliveMs: 8_000 });
  });

  test.each([
    [{ REQUEST_TIMEOUT_MS: '0' }, 'REQUEST_TIMEOUT_MS'],
    [{ BODY_IDLE_TIMEOUT_MS: '999' }, 'BODY_IDLE_TIMEOUT_MS'],
    [{ KEEP_ALIVE_TIMEOUT_MS: '1.5' }, 'KEEP_ALIVE_TIMEOUT_MS'],
    [{ HEADERS_TIMEOUT_MS: 'soon' }, 'HEADERS_TIMEOUT_MS'],
    [{ HEADERS_TIMEOUT_MS: '30000', REQUEST_TIMEOUT_MS: '20000' }, 'HEADERS_TIMEOUT_MS: must not exceed REQUEST_TIMEOUT_MS'],
  ])('%p is refused at start, naming the variable', (env, named) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(named);
  });
});
