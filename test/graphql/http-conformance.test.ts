// GraphQL-over-HTTP conformance of /graphql: graphql-http's server audits
// against the real service, one jest test per audit. Every MUST audit passes.
// SHOULD and MAY audits that fail are listed below with the reason; exactly
// those may fail, so a new warning, or one that goes away, fails the suite.
import { type AuditResult, serverAudits } from 'graphql-http';
import { useService } from '../support/service';

/** Non-MUST audits that fail, by audit id, and why. Apollo's CSRF prevention stays on. */
const expectedWarnings: Record<string, string> = {
  '5A70':
    'MAY accept application/x-www-form-urlencoded GET requests: a GET without Content-Type or Apollo-Require-Preflight ' +
    "is blocked (400) by Apollo's CSRF prevention, which stays on.",
  D6D5:
    'MAY allow URL-encoded JSON {variables} in GETs (graphql-response+json): the GET carries no preflight header, so ' +
    "Apollo's CSRF prevention blocks it (400).",
  '6A70': "MAY allow URL-encoded JSON {variables} in GETs (application/json): blocked (400) by Apollo's CSRF prevention, as above.",
  '572B':
    'SHOULD use 200 on document parsing failure with Accept: application/json: Apollo Server answers 400 ' +
    '(GRAPHQL_PARSE_FAILED) whatever the Accept header.',
  FDE2:
    'SHOULD use 200 on document validation failure with Accept: application/json: Apollo Server answers 400 ' +
    "whatever the Accept header (the audit's document, a field name starting with a digit, is rejected by the parser: " +
    'GRAPHQL_PARSE_FAILED).',
  '7B9B':
    'SHOULD use 200 on variable coercion failure with Accept: application/json: Apollo Server answers 400 whatever ' +
    "the Accept header (the audit's operation declares an unused variable: GRAPHQL_VALIDATION_FAILED).",
};

const service = useService();

const audits = serverAudits({
  // Read on each audit: the service's port is known only once beforeAll ran (before, baseUrl throws).
  url: () => `${service.baseUrl}/graphql`,
  fetchFn: fetch,
});

const isMust = (name: string) => name.startsWith('MUST');

/** An audit's unread response body would keep its connection busy; drop it. */
async function discard(result: AuditResult): Promise<void> {
  if (result.status !== 'ok') await result.response.body?.cancel().catch(() => {});
}

describe('MUST audits pass', () => {
  for (const audit of audits.filter((a) => isMust(a.name))) {
    test(`${audit.id} ${audit.name}`, async () => {
      const result = await audit.fn();
      await discard(result);
      if (result.status !== 'ok') throw new Error(`${audit.id} ${audit.name}: ${result.reason}`);
    });
  }
});

describe('SHOULD and MAY audits pass, except the expected warnings', () => {
  for (const audit of audits.filter((a) => !isMust(a.name))) {
    const expected = expectedWarnings[audit.id];
    const title = expected === undefined ? `${audit.id} ${audit.name}` : `${audit.id} ${audit.name} (expected to warn)`;
    test(title, async () => {
      const result = await audit.fn();
      await discard(result);
      if (expected === undefined) {
        if (result.status !== 'ok') throw new Error(`${audit.id} ${audit.name} now fails: ${result.reason}`);
      } else if (result.status === 'ok') {
        throw new Error(`${audit.id} passes now: remove it from expectedWarnings (it was listed because: ${expected})`);
      } else {
        expect(['warn', 'notice']).toContain(result.status);
      }
    });
  }
});

test('every expected warning names a SHOULD or MAY audit of this graphql-http version', () => {
  const byId = new Map(audits.map((a) => [a.id, a.name]));
  for (const id of Object.keys(expectedWarnings)) {
    expect([id, byId.has(id)]).toEqual([id, true]);
    expect([id, isMust(byId.get(id)!)]).toEqual([id, false]);
  }
  expect(audits.filter((a) => isMust(a.name)).length).toBeGreaterThan(0);
});
