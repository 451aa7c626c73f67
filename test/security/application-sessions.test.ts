// Issue 31, item 4: application sessions had no cap. 200 requests of 30
// aliased createSession made 6,000 sessions in 6.4 s, each kept two hours with
// a request budget of its own. A document now opens one session at most
// (test/security/password-checks.test.ts); openings of application sessions
// are budgeted per application and per address (APPLICATION_SESSIONS_PER_*),
// refused past them with 429 and nothing stored. A user's sessions keep their
// own cap (SESSIONS_PER_USER_MAX, test/security/session-cap.test.ts).
import { seedTenant, type Tenant } from '../support/seed';
import { startService, type TestService } from '../support/service';
import { restForm, signedSessionRequest } from '../support/sessions';

const started: TestService[] = [];
afterAll(async () => {
  for (const one of started) await one.close();
});

async function serviceWith(perApplication: number, perAddress: number): Promise<TestService> {
  const one = await startService({ sessions: { applicationSessions: { perApplication, perAddress } } });
  started.push(one);
  return one;
}

const sessionsOf = async (service: TestService, t: Tenant): Promise<number> => {
  const { rows } = await service.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions WHERE application_id = $1', [t.applicationId]);
  return rows[0]!.n;
};

/** POST /session.json as the SDKs send it (form-encoded, signed). */
const open = (service: TestService, t: Tenant, user?: { login: string; password: string }) =>
  service.rest('POST', '/session.json', { body: restForm(signedSessionRequest(t, user)), form: true });

const CREATE_SESSION = 'mutation Open($input: SessionRequestInput!) { createSession(input: $input) { id } }';

test('one address opens APPLICATION_SESSIONS_PER_ADDRESS application sessions in the hour; the next is 429 over REST and GraphQL, and stores nothing', async () => {
  const service = await serviceWith(1_000, 5);
  const t = await seedTenant(service.app.provisioning);
  const before = await sessionsOf(service, t);
  for (let i = 0; i < 5; i++) expect((await open(service, t)).status).toBe(201);
  const over = await open(service, t);
  expect(over.status).toBe(429);
  expect(over.body).toEqual({ code: 'TOO_MANY_REQUESTS', message: expect.stringMatching(/^Too many requests: retry in \d+ s$/) });
  expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  const graphql = await service.graphql(CREATE_SESSION, { input: signedSessionRequest(t) });
  expect(graphql.body.errors?.[0]?.extensions?.code).toBe('TOO_MANY_REQUESTS');
  expect(await sessionsOf(service, t)).toBe(before + 5);
  // A user's session is not an application session: its own cap applies.
  expect((await open(service, t, { login: 'owner', password: 'password123' })).status).toBe(201);
});

test('one application gets APPLICATION_SESSIONS_PER_APPLICATION openings in the hour, whatever the address; other applications keep theirs', async () => {
  const service = await serviceWith(3, 1_000);
  const t = await seedTenant(service.app.provisioning);
  const other = await seedTenant(service.app.provisioning);
  const before = await sessionsOf(service, t);
  for (let i = 0; i < 3; i++) expect((await open(service, t)).status).toBe(201);
  expect((await open(service, t)).status).toBe(429);
  expect(await sessionsOf(service, t)).toBe(before + 3);
  expect((await open(service, other)).status).toBe(201);
});
