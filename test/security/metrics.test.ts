// Issue 31, item 5: /metrics could be inflated by anyone. Open on the public
// port in production, exempt from rate limits, with an operation label built
// from the root fields a client sent: 1,152 anonymous documents grew it from
// 10.7 KB to 1.6 MB and 742 series, and it published the Node version. Now:
// only known operations (a trusted document's, one root field's) have a
// label of their own, everything else `other`; /metrics is rate-limited; in
// production it is served only on METRICS_PORT; the public page names no
// version. Sent as the attacker sent them: anonymous documents on POST /graphql.
import { serveMetrics } from '../../src/http/observability';
import { METRICS_SCRAPES_PER_WINDOW } from '../../src/http/rate-limit';
import { recordFigures } from '../support/figures';
import { seedTenant, type Tenant } from '../support/seed';
import { fetchResult, useService } from '../support/service';

const service = useService({});
const figures: Record<string, unknown> = {};
afterAll(() => recordFigures('metrics', figures));
let tenant: Tenant;
beforeAll(async () => {
  tenant = await seedTenant(service.app.provisioning);
});

const QUERY_FIELDS = ['userByExternalId(externalUserId: 101) { id }', 'session { id }', 'addressBook { phone }', 'registeredUsers { id }', '__typename'];

/** Every document of 1 to 4 root fields drawn from QUERY_FIELDS, aliased and ordered in every way the attacker tried. */
function anonymousDocuments(): string[] {
  const documents: string[] = [];
  for (let mask = 1; mask < 1 << QUERY_FIELDS.length; mask++) {
    const fields = QUERY_FIELDS.filter((_, i) => mask & (1 << i));
    for (let copies = 1; copies <= 3; copies++) {
      documents.push(
        `{ ${fields.flatMap((field) => Array.from({ length: copies }, (_, c) => `f${c}_${field.split('(')[0]!.split(' ')[0]}: ${field}`)).join(' ')} }`,
      );
    }
  }
  return documents;
}

const operationLabels = (page: string): Set<string> =>
  new Set([...page.matchAll(/^http_request_duration_seconds_count\{[^}]*operation="([^"]*)"/gm)].map((m) => m[1]!));

test('anonymous documents of every root-field combination add one `other` series, not one per combination', async () => {
  const before = await service.rest('GET', '/metrics');
  const documents = anonymousDocuments();
  for (const document of documents) await service.graphql(document, {}, tenant.as.owner);
  // One root field each: the operations of the REST routes, labelled by their field.
  await service.graphql('{ userByExternalId(externalUserId: 101) { id } }', {}, tenant.as.owner);
  const after = await service.rest('GET', '/metrics');
  const labels = [...operationLabels(after.text)].filter((label) => label !== '');
  figures.anonymousDocuments = documents.length;
  figures.pageBytesBefore = before.text.length;
  figures.pageBytesAfter = after.text.length;
  figures.operationLabels = labels;
  expect(labels).toContain('other');
  expect(labels).toContain('query userByExternalId');
  expect(labels.every((label) => label === 'other' || /^(query|mutation) [A-Za-z_]+$/.test(label))).toBe(true);
  expect(labels.length).toBeLessThanOrEqual(QUERY_FIELDS.length + 1);
  expect(after.text.length - before.text.length).toBeLessThan(20_000);
});

test('the public page names no version (build_info, nodejs_version_info); the operator’s listener does', async () => {
  const page = (await service.rest('GET', '/metrics')).text;
  expect(page).not.toMatch(/^build_info/m);
  expect(page).not.toMatch(/^nodejs_version_info/m);
  expect(page).not.toContain(process.version);
  expect(page).toMatch(/^http_request_duration_seconds_count/m);
  const operator = await serveMetrics(service.app.metrics, '127.0.0.1', 0);
  try {
    const full = await fetchResult(`http://127.0.0.1:${operator.address.port}/metrics`, {});
    expect(full.status).toBe(200);
    expect(full.text).toMatch(/^build_info\{.*node="v\d+/m);
    expect((await fetchResult(`http://127.0.0.1:${operator.address.port}/graphql`, {})).status).toBe(404);
  } finally {
    await operator.close();
  }
});

describe('configured as main configures it', () => {
  /** As main builds it from environment variables, rate limits on; start() builds others from theirs, over its database. */
  const configured = useService({ env: { RATE_LIMIT_ENABLED: 'true' } });

  test(`/metrics is rate-limited: ${METRICS_SCRAPES_PER_WINDOW} scrapes a window from one address, then 429`, async () => {
    const { baseUrl } = configured;
    const statuses: number[] = [];
    for (let i = 0; i <= METRICS_SCRAPES_PER_WINDOW; i++) statuses.push((await fetchResult(`${baseUrl}/metrics`, {})).status);
    expect(statuses.slice(0, METRICS_SCRAPES_PER_WINDOW).every((status) => status === 200)).toBe(true);
    expect(statuses[METRICS_SCRAPES_PER_WINDOW]).toBe(429);
    // Other paths keep the address's own budget.
    expect((await fetchResult(`${baseUrl}/healthz`, {})).status).toBe(200);
  });

  test('in production /metrics is not on the service port; with METRICS_PORT it is not either', async () => {
    const secrets = { SECRETS_KEY: 'a'.repeat(64) };
    const envs: Record<string, string>[] = [
      { NODE_ENV: 'production', ...secrets },
      { NODE_ENV: 'production', METRICS_PORT: '9464', ...secrets },
      { METRICS_PORT: '9464' },
    ];
    for (const env of envs) {
      const { baseUrl } = await configured.start({ env });
      expect((await fetchResult(`${baseUrl}/metrics`, {})).status).toBe(404);
    }
  });
});
