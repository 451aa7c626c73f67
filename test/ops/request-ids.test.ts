// X-Request-Id goes both ways: the client's id (when it is a sane token of at
// most 128 characters) or a fresh UUID comes back on every answer, failures
// included, and is the reqId of the request's log line, which also names the
// caller's application and the client's address.
import { Writable } from 'node:stream';
import { REQUEST_ID_MAX } from '../../src/http/request-id';
import { useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let tenant: Tenant;
const lines: Record<string, unknown>[] = [];
const stream = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});
const service = useService({ logger: { level: 'info', stream }, rateLimit: { windowMs: 60_000, perCredential: 3, perAddress: 1_000_000 } });

beforeAll(async () => {
  tenant = await seedTenant(service.app.provisioning);
});

const lineOf = async (reqId: string) => {
  await new Promise((resolve) => setImmediate(resolve));
  return lines.find((line) => line.msg === 'request' && line.reqId === reqId);
};

test("a sane X-Request-Id comes back on every kind of answer and is the log line's reqId", async () => {
  const answers = [
    ['REST lookup, 200', `/users/external/101.json`, { 'SVC-Token': tenant.ownerToken }, 200],
    ['REST lookup, 401', `/users/external/101.json`, { 'SVC-Token': 'no-such-session' }, 401],
    ['REST lookup, 422', `/users/external/abc.json`, { 'SVC-Token': tenant.ownerToken }, 422],
    ['unknown path, 404', `/no/such/path`, {}, 404],
    ['health', `/healthz`, {}, 200],
  ] as const;
  for (const [name, path, headers, status] of answers) {
    const id = `id-${name.replace(/\W+/g, '-')}`;
    const response = await fetch(`${service.baseUrl}${path}`, { headers: { ...headers, 'X-Request-Id': id } });
    expect([name, response.status, response.headers.get('x-request-id')]).toEqual([name, status, id]);
    expect(await lineOf(id)).toMatchObject({ status });
  }
  const graphql = await fetch(`${service.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'gql-1', ...tenant.as.apiKey },
    body: JSON.stringify({ query: '{ userByExternalId(externalUserId: 101) { id } }' }),
  });
  expect(graphql.headers.get('x-request-id')).toBe('gql-1');
});

test('an absent, over-long or odd X-Request-Id is replaced by a fresh UUID, sent back and logged', async () => {
  for (const given of [undefined, 'x'.repeat(REQUEST_ID_MAX + 1), 'has space', 'new\u00e9line']) {
    const response = await fetch(`${service.baseUrl}/healthz`, { headers: given === undefined ? {} : { 'X-Request-Id': given } });
    const id = response.headers.get('x-request-id');
    expect(id).toMatch(UUID);
    expect(await lineOf(id!)).toMatchObject({ route: '/healthz' });
  }
  // The longest id taken as it is.
  const longest = 'y'.repeat(REQUEST_ID_MAX);
  expect((await fetch(`${service.baseUrl}/healthz`, { headers: { 'X-Request-Id': longest } })).headers.get('x-request-id')).toBe(longest);
});

test('a rate-limited answer (429, from a hook before any route) carries the id too', async () => {
  const headers = { 'SVC-Token': `guess-${Date.now()}` };
  let last: Response | undefined;
  for (let i = 0; i < 5; i++) last = await fetch(`${service.baseUrl}/address_book.json`, { headers: { ...headers, 'X-Request-Id': `limited-${i}` } });
  expect(last!.status).toBe(429);
  expect(last!.headers.get('x-request-id')).toBe('limited-4');
  expect(last!.headers.get('retry-after')).toMatch(/^\d+$/);
});

test("a request's log line names the caller's application and the client's address", async () => {
  await fetch(`${service.baseUrl}/users/external/101.json`, { headers: { ...tenant.as.apiKey, 'X-Request-Id': 'who-1' } });
  expect(await lineOf('who-1')).toMatchObject({ applicationId: tenant.applicationId, address: '127.0.0.1', status: 200 });
  // No credentials checked: no application, the address all the same.
  await fetch(`${service.baseUrl}/healthz`, { headers: { 'X-Request-Id': 'who-2' } });
  const anonymous = await lineOf('who-2');
  expect(anonymous).toMatchObject({ address: '127.0.0.1' });
  expect(anonymous).not.toHaveProperty('applicationId');
});
