// Issue 31, items 3 and 4: password checks and session openings multiplied
// by aliases. One document of thirty aliased `login`s ran thirty scrypt
// checks (1.2 s) for one request of the rate limiter, and a right password
// spent no budget at all; thirty aliased `createSession`s opened thirty
// sessions. Now: at most one login or createSession per document (refused
// before any runs, nothing stored), and every password check, right or wrong,
// is counted per account and per address (PASSWORD_CHECKS_PER_ACCOUNT,
// PASSWORD_CHECKS_PER_ADDRESS). Sent as the attacker sent them: aliased
// documents on POST /graphql.
import { recordFigures } from '../support/figures';
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';
import { restForm, signedSessionRequest } from '../support/sessions';

const CHECKS_PER_ACCOUNT = 5;
const CHECKS_PER_ADDRESS = 12;
// Failure budgets far from reach: the checks' budgets are what is tested.
const service = useService({
  sessions: {
    loginAttempts: { perLogin: 1_000, perAddress: 10_000, windowMs: 60_000, checksPerAccount: CHECKS_PER_ACCOUNT, checksPerAddress: CHECKS_PER_ADDRESS },
  },
});
const figures: Record<string, unknown> = {};
afterAll(() => recordFigures('password-checks', figures));

const RIGHT = 'password123';
const LOGIN = 'mutation Login($login: String!, $password: String!) { login(login: $login, password: $password) { id } }';

/** Thirty aliased copies of `field` in one mutation. */
const aliased = (field: string, count = 30) => `mutation { ${Array.from({ length: count }, (_, i) => `a${i}: ${field}`).join(' ')} }`;

const sessionsOf = async (t: Tenant): Promise<number> => {
  const { rows } = await service.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions WHERE application_id = $1', [t.applicationId]);
  return rows[0]!.n;
};

const signedInput = (t: Tenant, user?: { login: string; password: string }) => {
  const request = signedSessionRequest(t, user);
  const userPart = user ? `, user: {login: ${JSON.stringify(user.login)}, password: ${JSON.stringify(user.password)}}` : '';
  return `{applicationId: "${request.applicationId}", authKey: "${request.authKey}", timestamp: "${request.timestamp}", nonce: "${request.nonce}", signature: "${request.signature}"${userPart}}`;
};

describe('one login or createSession per document', () => {
  test('thirty aliased logins with the right password are refused before any check runs; the session stays an application session', async () => {
    const t = await seedTenant(service.app.provisioning);
    const started = performance.now();
    const res = await service.graphql(aliased(`login(login: "owner", password: "${RIGHT}") { id }`), {}, t.as.app);
    figures.aliasedLoginsMs = Math.round(performance.now() - started);
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors?.[0]?.extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    expect(res.body.errors?.[0]?.message).toMatch(/at most one login or createSession per document.*got 30/);
    // No check ran: 30 × ~40 ms of scrypt would take over a second.
    expect(figures.aliasedLoginsMs).toBeLessThan(1_000);
    const session = await service.graphql('{ session { userId } }', {}, t.as.app);
    expect(session.body.data.session.userId).toBeNull();
  });

  test('the same through a fragment spread, and a login beside a createSession, are refused too', async () => {
    const t = await seedTenant(service.app.provisioning);
    const fragment = `mutation { ...F } fragment F on Mutation { a: login(login: "owner", password: "${RIGHT}") { id } b: login(login: "owner", password: "x") { id } }`;
    const mixed = `mutation { a: login(login: "owner", password: "${RIGHT}") { id } b: createSession(input: ${signedInput(t)}) { id } }`;
    const before = await sessionsOf(t);
    for (const document of [fragment, mixed]) {
      const res = await service.graphql(document, {}, t.as.app);
      expect([res.status, res.body.errors?.[0]?.extensions?.code]).toEqual([400, 'COST_LIMIT_EXCEEDED']);
    }
    expect(await sessionsOf(t)).toBe(before);
  });

  test('thirty aliased createSession (with a user, or the application alone) open no session', async () => {
    const t = await seedTenant(service.app.provisioning);
    const before = await sessionsOf(t);
    const withUser = `mutation { ${Array.from({ length: 30 }, (_, i) => `a${i}: createSession(input: ${signedInput(t, { login: 'owner', password: RIGHT })}) { id }`).join(' ')} }`;
    const appOnly = `mutation { ${Array.from({ length: 30 }, (_, i) => `a${i}: createSession(input: ${signedInput(t)}) { id }`).join(' ')} }`;
    for (const document of [withUser, appOnly]) {
      const res = await service.graphql(document, {});
      expect([res.status, res.body.errors?.[0]?.extensions?.code]).toEqual([400, 'COST_LIMIT_EXCEEDED']);
      expect(res.body.data).toBeUndefined();
    }
    expect(await sessionsOf(t)).toBe(before);
    // One per document still opens one.
    const one = await service.graphql(`mutation { createSession(input: ${signedInput(t)}) { id } }`, {});
    expect(one.body.data.createSession.id).toEqual(expect.any(Number));
    expect(await sessionsOf(t)).toBe(before + 1);
  });
});

describe('password checks counted whether they succeed or not', () => {
  test(`past ${CHECKS_PER_ACCOUNT} right-password logins by one name of an account in the window, the next is 429 before its check`, async () => {
    const t = await seedTenant(service.app.provisioning);
    for (let i = 0; i < CHECKS_PER_ACCOUNT; i++) {
      const res = await service.graphql(LOGIN, { login: 'owner', password: RIGHT }, t.as.app);
      expect(res.body.data?.login?.id).toBe(t.owner.id);
    }
    const over = await service.graphql(LOGIN, { login: 'owner', password: RIGHT }, t.as.app);
    expect(over.body.errors?.[0]?.extensions?.code).toBe('TOO_MANY_REQUESTS');
    // By a signed session request with the same login too. The email is a name
    // of its own (a 429 by one name must not tell which others share its
    // account, issue 31): one account gets twice the budget at most.
    const byEmail = await service.graphql(LOGIN.replace('login: $login', 'email: $login'), { login: t.owner.email, password: RIGHT }, t.as.app);
    expect(byEmail.body.data?.login?.id).toBe(t.owner.id);
    const rest = await service.rest('POST', '/session.json', { body: restForm(signedSessionRequest(t, { login: 'owner', password: RIGHT })), form: true });
    expect(rest.status).toBe(429);
    // Another account of the application keeps its own budget.
    expect((await service.graphql(LOGIN, { login: 'member', password: RIGHT }, t.as.app)).body.data.login.id).toBe(t.member.id);
  });

  test(`one address gets ${CHECKS_PER_ADDRESS} checks in the window over every account`, async () => {
    // The address's budget is shared by every test of this file: spend what is left of it.
    let refused = false;
    for (let i = 0; i < CHECKS_PER_ADDRESS + 1 && !refused; i++) {
      const t = await seedTenant(service.app.provisioning);
      for (const login of ['owner', 'member', 'outsider']) {
        const res = await service.graphql(LOGIN, { login, password: RIGHT }, t.as.app);
        if (res.body.errors?.[0]?.extensions?.code === 'TOO_MANY_REQUESTS') {
          refused = true;
          break;
        }
        expect(res.body.data.login.id).toEqual(expect.any(Number));
      }
    }
    expect(refused).toBe(true);
  });
});
