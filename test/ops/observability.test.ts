// One structured log line per request (request id, route or GraphQL operation,
// status, duration) that never carries a credential; Prometheus metrics.
import { Writable } from 'node:stream';
import { useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';

let tenant: Tenant;
const lines: Record<string, unknown>[] = [];
const raw: string[] = [];
const stream = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) {
      raw.push(line);
      lines.push(JSON.parse(line));
    }
    done();
  },
});
const service = useService({ logger: { level: 'info', stream } });

beforeAll(async () => {
  tenant = await seedTenant(service.app.provisioning);
});

const requestLines = () => lines.filter((line) => line.msg === 'request');

test('each request logs exactly one line with request id, route, status and duration', async () => {
  const before = requestLines().length;
  const response = await fetch(`${service.baseUrl}/users/external/102.json`, {
    headers: { 'SVC-Token': tenant.ownerToken, 'X-Request-Id': 'trace-me-123' },
  });
  expect(response.status).toBe(200);
  await new Promise((resolve) => setImmediate(resolve));
  const logged = requestLines().slice(before);
  expect(logged).toHaveLength(1);
  expect(logged[0]).toMatchObject({
    reqId: 'trace-me-123',
    method: 'GET',
    route: '/users/external/:file',
    operation: 'query userByExternalId',
    status: 200,
    durationMs: expect.any(Number),
  });
});

test('GraphQL requests are logged with their operation, unknown paths as unmatched', async () => {
  const before = requestLines().length;
  await fetch(`${service.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'SVC-Token': tenant.ownerToken },
    body: JSON.stringify({ query: 'query Mine { registeredUsers { id } }' }),
  });
  await fetch(`${service.baseUrl}/no/such/path`);
  await new Promise((resolve) => setImmediate(resolve));
  const logged = requestLines().slice(before);
  expect(logged).toEqual([
    expect.objectContaining({ route: '/graphql', operation: 'query registeredUsers', status: 200, reqId: expect.any(String) }),
    expect.objectContaining({ route: 'unmatched', status: 404 }),
  ]);
});

test('no log line ever holds a token, an API key or a password', async () => {
  const secrets = [tenant.ownerToken, tenant.apiKey, tenant.appToken, 'password123'];
  await fetch(`${service.baseUrl}/users/external/101.json?token=${tenant.memberToken}`, { headers: { Authorization: `ApiKey ${tenant.apiKey}` } });
  await fetch(`${service.baseUrl}/users/external/101.json`, { headers: { 'SVC-Token': tenant.appToken } });
  await fetch(`${service.baseUrl}/chat/Message/${tenant.messageIds[0]}.json`, { method: 'DELETE', headers: { 'SVC-Token': tenant.ownerToken } });
  await fetch(`${service.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', Authorization: `ApiKey ${tenant.apiKey}`, 'On-Behalf-Of': String(tenant.owner.id) },
    body: JSON.stringify({ query: '{ registeredUsers { id } }' }),
  });
  await fetch(`${service.baseUrl}/address_book.json`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'SVC-Token': tenant.ownerToken },
    body: '{bad json',
  });
  await new Promise((resolve) => setImmediate(resolve));
  expect(raw.length).toBeGreaterThan(5);
  for (const secret of [...secrets, tenant.memberToken]) {
    expect(raw.filter((line) => line.includes(secret))).toEqual([]);
  }
});

test('GET /metrics reports request counts and latency per route and operation, and the database pool', async () => {
  await fetch(`${service.baseUrl}/users/external/102.json`, { headers: { 'SVC-Token': tenant.ownerToken } });
  const response = await fetch(`${service.baseUrl}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  const text = await response.text();
  const count = text.match(
    /^http_request_duration_seconds_count\{method="GET",route="\/users\/external\/:file",operation="query userByExternalId",status="200"\} (\d+)$/m,
  );
  expect(Number(count?.[1])).toBeGreaterThanOrEqual(2);
  expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/users\/external\/:file"/m);
  expect(text).toMatch(/^db_pool_connections\{state="total"\} \d+$/m);
  expect(text).toMatch(/^db_pool_connections\{state="max"\} \d+$/m);
  expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
});
