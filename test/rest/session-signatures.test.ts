// Session requests as properties (fast-check), on REST (JSON and form bodies)
// and GraphQL (createSession): README's rules for signatures, the timestamp
// window, replays and racing copies, over random parameter values. Requests
// are signed by test/support/sessions.ts, written from the SDK's rule, not
// from the service's code. "Stores nothing" is a digest of every table
// (test/support/digest.ts) unchanged by the request. The server's clock is
// the service's own `sessions.now` option, set per run: nothing mocks Date.
import fc from 'fast-check';
import { z } from 'zod';
import { LIMITS } from '../../src/services/validate';
import { changedTables, diffDigests, digest } from '../support/digest';
import { LONG } from '../support/figures';
import { fuzzParameters, sessionAnswer, sessionBody, sessionInput, validNonce } from '../support/fuzz';
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';
import { restForm, type SignedRequest, signedSessionRequest, type SignOptions } from '../support/sessions';

/** A window shorter than the default hour, so that runs reach past it both ways within a few minutes of clock. */
const WINDOW = 300;

/** The server's clock (ms) for session requests; undefined: the real one. */
let clock: number | undefined;
let tenants: [Tenant, Tenant];

const service = useService({
  // Failed-password budgets out of the way: these properties are about signatures.
  sessions: { timestampWindowSeconds: WINDOW, now: () => clock ?? Date.now(), loginAttempts: { perLogin: 1e9, perAddress: 1e9 } },
  database: 'isolated',
});
beforeAll(async () => {
  tenants = [await seedTenant(service.app.provisioning), await seedTenant(service.app.provisioning)];
});
beforeEach(() => {
  clock = undefined;
});

// ---------------------------------------------------------------------------
// One session request on one surface.

const SURFACES = ['REST JSON', 'REST form', 'GraphQL'] as const;
type Surface = (typeof SURFACES)[number];

interface Answer {
  /** 'created', or the refusal (sessionAnswer's terms on REST, extensions.code on GraphQL). */
  outcome: string;
  session?: { id: number; applicationId: number; userId: number | null; nonce: string; ts: number; token: string };
}

const CREATE = `mutation ($input: SessionRequestInput!) {
  createSession(input: $input) { id applicationId userId nonce signedAt token }
}`;

/**
 * Sends the request's parameters (QuickBlox's names) on a surface. `numbers`:
 * integer texts as JSON numbers, as an SDK that keeps them numbers sends them
 * (the same text is signed).
 */
async function send(surface: Surface, parameters: Record<string, unknown>, numbers = false): Promise<Answer> {
  if (surface === 'GraphQL') {
    const res = await service.graphql(CREATE, { input: sessionInput(parameters, numbers) });
    const created = res.body.data?.createSession;
    if (!created) return { outcome: res.body.errors?.[0]?.extensions?.code ?? `${res.status}` };
    const ts = Date.parse(created.signedAt) / 1000;
    return { outcome: 'created', session: { ...created, ts } };
  }
  const { body, contentType } = sessionBody(parameters, surface === 'REST form' ? 'form' : numbers ? 'json numbers' : 'json nested');
  const res = await service.rest('POST', '/session.json', { raw: body, headers: { 'content-type': contentType } });
  expect(res.status).toBeLessThan(500);
  const outcome = sessionAnswer(res.status, res.body);
  if (outcome !== 'created') return { outcome };
  const s = res.body.session;
  return {
    outcome,
    session: { id: s.id, applicationId: s.application_id, userId: s.user_id === 0 ? null : s.user_id, nonce: String(s.nonce), ts: s.ts, token: s.token },
  };
}

/** The request's parameters under QuickBlox's names, as a form sends them (user ones as `user[login]`). */
const parametersOf = (request: SignedRequest): Record<string, unknown> => restForm(request);

/** Sends, and checks what the request wrote: a session and its nonce when created, nothing when refused. */
async function sendChecked(surface: Surface, parameters: Record<string, unknown>, numbers = false): Promise<Answer> {
  const before = await digest(service.db.pool);
  const answer = await send(surface, parameters, numbers);
  const after = await digest(service.db.pool);
  if (answer.outcome === 'created') {
    // The session and its pair (pairs that left the window may go on the way): nothing else.
    expect(changedTables(before, after).filter((t) => t !== 'session_nonces')).toEqual(['sessions']);
    expect(after.sessions!.rows).toBe(before.sessions!.rows + 1);
  } else {
    expect({ outcome: answer.outcome, diff: diffDigests(before, after) }).toEqual({ outcome: answer.outcome, diff: '' });
  }
  return answer;
}

/** A nonce never used before in this file (the printable ones of validNonce, made unique by a counter). */
let nonces = 0;
const freshNonce = (nonce: string): string => `${nonce.slice(0, 54)}~${(nonces++).toString(36)}`;

const nowSeconds = () => Math.floor((clock ?? Date.now()) / 1000);

/** Text of any characters but NUL (which the service refuses as malformed), `&`, `=`, `[` and unicode among them. */
const anyText = (minLength: number, maxLength: number): fc.Arbitrary<string> =>
  fc
    .oneof(
      fc.string({ unit: 'grapheme', minLength, maxLength }),
      fc.string({ unit: 'binary', minLength, maxLength }),
      fc
        .constantFrom('a&b=c', 'user[login]=x&', '[]=&%20+', ' padded ', '\u00e9l\u00e8ve \u{1F600}', '%41%', 'x'.repeat(maxLength))
        .map((s) => s + '='.repeat(Math.max(0, minLength - [...s].length))),
    )
    // Lengths as the user model counts them: code points.
    .filter((s) => !s.includes('\u0000') && [...s].length >= minLength && s.length <= 255);

/** Emails the user model takes (zod's rule), with '+', '-', '_' and "'" in the local part. */
const email = fc
  .tuple(fc.stringMatching(/^[A-Za-z0-9_'+-]{0,15}[A-Za-z0-9]$/), fc.stringMatching(/^[a-z0-9]{1,10}\.[a-z]{2,6}$/))
  .map(([local, domain]) => `${local}@${domain}`)
  .filter((e) => z.email().safeParse(e).success);

type UserArbitrary = { by: 'login'; login: string; password: string } | { by: 'email'; email: string; password: string } | undefined;

const user: fc.Arbitrary<UserArbitrary> = fc.oneof(
  fc.constant(undefined),
  fc.record({ by: fc.constant('login' as const), login: anyText(1, 60), password: anyText(8, 60) }),
  fc.record({ by: fc.constant('email' as const), email, password: anyText(8, 60) }),
);

const runs = (n: number) => fuzzParameters(n, 2);
/**
 * Properties make hundreds of requests (five times as many with
 * RELIABILITY_LONG) on a machine that may be busy: a timed-out property keeps
 * running after its test and would write into the next one's digests.
 */
const TIMEOUT = LONG ? 1_800_000 : 600_000;

// ---------------------------------------------------------------------------

describe('a correctly signed request', () => {
  test(
    'is accepted on every surface, for any login, email, password and nonce, signed with SHA-1 or SHA-256; its token then reads that session',
    async () => {
      const seen = new Set<Surface>();
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...SURFACES),
          fc.constantFrom('sha1' as const, 'sha256' as const),
          validNonce,
          user,
          fc.boolean(),
          async (surface, algorithm, nonce, u, numbers) => {
            // An application of its own each run: any login is free in it.
            const { application, authKey, authSecret } = await service.app.provisioning.applications.create('signatures');
            let userId: number | null = null;
            if (u) {
              const created = await service.app.provisioning.users.create({
                applicationId: application.id,
                login: u.by === 'login' ? u.login : 'by-email',
                password: u.password,
                ...(u.by === 'email' ? { email: u.email } : {}),
              });
              userId = created.id;
            }
            const credentials = u && (u.by === 'login' ? { login: u.login, password: u.password } : { email: u.email, password: u.password });
            const request = signedSessionRequest({ applicationId: application.id, authKey, authSecret }, credentials, { nonce: freshNonce(nonce), algorithm });
            const answer = await sendChecked(surface, parametersOf(request), numbers);
            expect(answer.outcome).toBe('created');
            expect(answer.session).toMatchObject({ applicationId: application.id, userId, ts: Number(request.timestamp) });
            // REST answers a numeric nonce as a number (QuickBlox's shape): compared as text.
            expect(answer.session!.nonce).toBe(/^[0-9]{1,15}$/.test(request.nonce) ? String(Number(request.nonce)) : request.nonce);
            const shown = await service.rest('GET', '/session.json', { headers: { 'QB-Token': answer.session!.token } });
            expect([shown.status, shown.body.session?.id, shown.body.session?.user_id]).toEqual([200, answer.session!.id, userId ?? 0]);
            seen.add(surface);
          },
        ),
        runs(45),
      );
      expect([...seen].sort()).toEqual([...SURFACES].sort());
    },
    TIMEOUT,
  );
});

describe('a request changed after signing', () => {
  /** One change to a correctly signed request, and the answer README documents for it. */
  type Change =
    | { kind: 'signature'; how: 'replace' | 'insert' | 'delete'; at: number; char: string }
    | { kind: 'parameter'; param: 'timestamp' | 'nonce' | 'user[login]' | 'user[email]' | 'user[password]'; value: string }
    /** A user added to a request signed without one, or the user removed from one signed with it. */
    | { kind: 'user added or removed' }
    | { kind: 'timestamp with a leading zero' }
    | { kind: 'another secret'; secret: string /* or 'the other application’s' */ }
    | { kind: 'application'; which: 'the other application’s id' | 'the other application’s auth key' | 'any auth key'; authKey: string };

  const change: fc.Arbitrary<Change> = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('signature' as const),
        how: fc.constantFrom('replace' as const, 'replace' as const, 'insert' as const, 'delete' as const),
        at: fc.nat(64),
        char: fc.oneof(
          fc.constantFrom(...'0123456789abcdefABCDEF'),
          fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => c !== '\u0000'),
        ),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('parameter' as const),
        param: fc.constantFrom('timestamp' as const, 'nonce' as const, 'user[login]' as const, 'user[email]' as const, 'user[password]' as const),
        value: anyText(1, 40),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'user added or removed' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'timestamp with a leading zero' as const }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('another secret' as const),
        secret: fc.oneof(fc.constant('the other application’s' as const), fc.string({ maxLength: 50 })),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('application' as const),
        which: fc.constantFrom('the other application’s id' as const, 'the other application’s auth key' as const, 'any auth key' as const),
        authKey: anyText(1, 30),
      }),
    },
  );

  /** The request as changed (undefined: the change would leave it as signed), and the answer README documents. */
  function changed(request: SignedRequest, c: Change, t: Tenant, other: Tenant): { parameters: Record<string, unknown>; expected: string } | undefined {
    const parameters = parametersOf(request);
    const hasUser = request.user !== undefined;
    switch (c.kind) {
      case 'signature': {
        const sig = request.signature;
        const at = c.at % (sig.length + (c.how === 'insert' ? 1 : 0));
        // A hex digit in the other case is the same signature (hex is read either way): not a change.
        if (c.how === 'replace' && c.char.toLowerCase() === sig[at]!.toLowerCase()) return undefined;
        const signature = c.how === 'delete' ? sig.slice(0, at) + sig.slice(at + 1) : sig.slice(0, at) + c.char + sig.slice(at + (c.how === 'replace' ? 1 : 0));
        parameters.signature = signature;
        // Longer than any signature (docs/operation.md, Limits): refused as malformed, naming it, before the application is looked up.
        return { parameters, expected: [...signature].length > LIMITS.signatureLength ? 'BAD_USER_INPUT' : 'INVALID_SIGNATURE' };
      }
      case 'parameter': {
        if (c.param.startsWith('user[') && !hasUser) return undefined;
        let value = c.value;
        // Values of a valid form, so that the signature is what fails.
        if (c.param === 'timestamp') value = String(Number(request.timestamp) + 1 + (c.value.length % (WINDOW - 1)));
        if (c.param === 'nonce') value = freshNonce(c.value.replace(/[^\x21-\x7e]/g, 'n'));
        if (parameters[c.param] === value) return undefined;
        // login and email are one or the other: the email field replaces the login (and the other way round).
        if (c.param === 'user[login]') delete parameters['user[email]'];
        if (c.param === 'user[email]') delete parameters['user[login]'];
        parameters[c.param] = value;
        return { parameters, expected: 'INVALID_SIGNATURE' };
      }
      case 'user added or removed':
        if (!hasUser) return { parameters: { ...parameters, 'user[login]': 'owner', 'user[password]': 'password123' }, expected: 'INVALID_SIGNATURE' };
        for (const key of Object.keys(parameters)) if (key.startsWith('user[')) delete parameters[key];
        return { parameters, expected: 'INVALID_SIGNATURE' };
      case 'timestamp with a leading zero':
        // The same instant, another text: the signature covers the text.
        return { parameters: { ...parameters, timestamp: `0${request.timestamp}` }, expected: 'INVALID_SIGNATURE' };
      case 'another secret': {
        const secret = c.secret === 'the other application’s' ? other.authSecret : c.secret;
        if (secret === t.authSecret) return undefined;
        const resigned = signedSessionRequest(t, request.user, { timestamp: request.timestamp, nonce: request.nonce, secret });
        return { parameters: parametersOf(resigned), expected: 'INVALID_SIGNATURE' };
      }
      case 'application':
        // README's order: the application and its auth key are checked before the signature.
        if (c.which === 'the other application’s id')
          return { parameters: { ...parameters, application_id: String(other.applicationId) }, expected: 'UNKNOWN_APPLICATION' };
        if (c.which === 'the other application’s auth key') return { parameters: { ...parameters, auth_key: other.authKey }, expected: 'UNKNOWN_APPLICATION' };
        if (c.authKey === t.authKey) return undefined;
        return { parameters: { ...parameters, auth_key: c.authKey }, expected: 'UNKNOWN_APPLICATION' };
    }
  }

  test(
    'is refused with its documented answer (INVALID_SIGNATURE; UNKNOWN_APPLICATION for the application or key; BAD_USER_INPUT for a signature past 64 characters) and stores nothing, on every surface',
    async () => {
      const kinds = new Set<string>();
      const surfaces = new Set<string>();
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...SURFACES),
          fc.constantFrom(0, 1),
          fc.constantFrom('sha1' as const, 'sha256' as const),
          validNonce,
          fc.constantFrom(undefined, { login: 'member', password: 'password123' }, { email: 'owner@example.com', password: 'password123' }),
          change,
          async (surface, i, algorithm, nonce, u, c) => {
            const [t, other] = i === 0 ? tenants : [tenants[1], tenants[0]];
            const request = signedSessionRequest(t, u, { nonce: freshNonce(nonce), algorithm });
            const wrong = changed(request, c, t, other);
            fc.pre(wrong !== undefined);
            const answer = await sendChecked(surface, wrong.parameters);
            // REST's 422 names its parameter; GraphQL's code is enough.
            expect(answer.outcome).toBe(wrong.expected === 'BAD_USER_INPUT' && surface !== 'GraphQL' ? 'BAD_USER_INPUT signature' : wrong.expected);
            kinds.add(c.kind);
            surfaces.add(surface);
            // The request as signed is still good: the refusal was the change's.
            expect((await sendChecked(surface, parametersOf(request))).outcome).toBe('created');
          },
        ),
        runs(120),
      );
      expect(kinds.size).toBe(6);
      expect(surfaces.size).toBe(SURFACES.length);
    },
    TIMEOUT,
  );
});

describe('the timestamp window', () => {
  test(
    'a timestamp at most the window away from the server’s clock, either way, is accepted; one further is refused TIMESTAMP_OUT_OF_WINDOW and stores nothing',
    async () => {
      const counts = { accepted: 0, refused: 0 };
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...SURFACES),
          // Any instant from 2001 to 2096, to the millisecond.
          fc.integer({ min: 1_000_000_000_000, max: 4_000_000_000_000 }),
          fc.oneof(
            { weight: 3, arbitrary: fc.integer({ min: -WINDOW - 3, max: WINDOW + 3 }) },
            { weight: 1, arbitrary: fc.integer({ min: -10_000_000, max: 10_000_000 }) },
          ),
          validNonce,
          async (surface, now, offset, nonce) => {
            clock = now;
            const timestamp = Math.floor(now / 1000) + offset;
            const request = signedSessionRequest(tenants[0], undefined, { timestamp, nonce: freshNonce(nonce) });
            const answer = await sendChecked(surface, parametersOf(request));
            // README: at most SESSION_TIMESTAMP_WINDOW_S from the server's clock (which has milliseconds).
            const inside = Math.abs(timestamp - now / 1000) <= WINDOW;
            expect({ offset, ms: now % 1000, outcome: answer.outcome }).toEqual({
              offset,
              ms: now % 1000,
              outcome: inside ? 'created' : 'TIMESTAMP_OUT_OF_WINDOW',
            });
            counts[inside ? 'accepted' : 'refused']++;
          },
        ),
        runs(120),
      );
      expect(counts.accepted).toBeGreaterThan(10);
      expect(counts.refused).toBeGreaterThan(10);
    },
    TIMEOUT,
  );

  test('the window’s exact edges: WINDOW seconds either way is accepted, one more is not (a clock on a whole second)', async () => {
    clock = 1_800_000_000_000;
    const at = (offset: number) => signedSessionRequest(tenants[1], undefined, { timestamp: 1_800_000_000 + offset, nonce: freshNonce('edge') });
    expect((await sendChecked('REST form', parametersOf(at(WINDOW)))).outcome).toBe('created');
    expect((await sendChecked('REST JSON', parametersOf(at(-WINDOW)))).outcome).toBe('created');
    expect((await sendChecked('GraphQL', parametersOf(at(WINDOW + 1)))).outcome).toBe('TIMESTAMP_OUT_OF_WINDOW');
    expect((await sendChecked('REST form', parametersOf(at(-WINDOW - 1)))).outcome).toBe('TIMESTAMP_OUT_OF_WINDOW');
  });
});

describe('replays', () => {
  test(
    'the same (timestamp, nonce) again is refused NONCE_REUSED on any surface and stores nothing; the same nonce at another timestamp, or in another application, is accepted',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.tuple(fc.constantFrom(...SURFACES), fc.constantFrom(...SURFACES), fc.constantFrom(...SURFACES)),
          validNonce,
          fc.integer({ min: -(WINDOW - 10), max: WINDOW - 10 }),
          fc.integer({ min: 1, max: 9 }).chain((k) => fc.constantFrom(k, -k)),
          fc.constantFrom(undefined, { login: 'outsider', password: 'password123' }),
          async ([first, second, third], nonce, offset, shift, u) => {
            const n = freshNonce(nonce);
            const timestamp = nowSeconds() + offset;
            const original = signedSessionRequest(tenants[0], u, { timestamp, nonce: n, algorithm: 'sha256' });
            expect((await sendChecked(first, parametersOf(original))).outcome).toBe('created');
            // Signed again, the same parameters are the same request (HMAC is deterministic): a replay, whatever the encoding.
            const again = signedSessionRequest(tenants[0], u, { timestamp, nonce: n, algorithm: 'sha1' });
            expect((await sendChecked(second, parametersOf(again))).outcome).toBe('NONCE_REUSED');
            expect((await sendChecked(third, parametersOf(signedSessionRequest(tenants[0], u, { timestamp: timestamp + shift, nonce: n })))).outcome).toBe(
              'created',
            );
            expect((await sendChecked(second, parametersOf(signedSessionRequest(tenants[1], undefined, { timestamp, nonce: n })))).outcome).toBe('created');
          },
        ),
        runs(30),
      );
    },
    TIMEOUT,
  );

  test(
    'a replay is never accepted however the clock moves: NONCE_REUSED while its timestamp is inside the window, TIMESTAMP_OUT_OF_WINDOW after; each refusal stores nothing',
    async () => {
      // One application for the whole property, its clock only moving forward:
      // pairs of earlier runs leave the window while later replays are refused.
      const t = await seedTenant(service.app.provisioning);
      let now = 2_000_000_000_000;
      await fc.assert(
        fc.asyncProperty(
          validNonce,
          fc.integer({ min: -(WINDOW - 1), max: WINDOW - 1 }),
          fc.array(fc.integer({ min: 0, max: WINDOW }), { minLength: 1, maxLength: 6 }),
          fc.constantFrom(...SURFACES),
          async (nonce, offset, steps, surface) => {
            clock = now;
            const request = signedSessionRequest(t, undefined, { timestamp: Math.floor(now / 1000) + offset, nonce: freshNonce(nonce) });
            expect((await sendChecked(surface, parametersOf(request))).outcome).toBe('created');
            for (const step of steps) {
              now += step * 1000;
              clock = now;
              const inside = Math.abs(Number(request.timestamp) - now / 1000) <= WINDOW;
              expect((await sendChecked(surface, parametersOf(request))).outcome).toBe(inside ? 'NONCE_REUSED' : 'TIMESTAMP_OUT_OF_WINDOW');
            }
          },
        ),
        runs(40),
      );
    },
    TIMEOUT,
  );

  // Was a src bug (src/db/statements/sessions.ts CREATE): the statement that
  // records a pair forgot the application's pairs that had left the window in
  // a data-modifying CTE, which PostgreSQL runs whether or not the insert
  // does, so a replay refused NONCE_REUSED deleted those rows: a refused
  // request wrote.
  test('a replay refused after older pairs have left the window deletes none of them', async () => {
    const t = await seedTenant(service.app.provisioning);
    const start = 2_100_000_000;
    const at = (seconds: number, nonce: string) => {
      clock = seconds * 1000;
      return signedSessionRequest(t, undefined, { timestamp: seconds, nonce });
    };
    expect((await sendChecked('REST form', parametersOf(at(start, freshNonce('old'))))).outcome).toBe('created');
    const recent = at(start + WINDOW - 5, freshNonce('recent'));
    expect((await sendChecked('REST form', parametersOf(recent))).outcome).toBe('created');
    // The first pair has now left the window; the second has not.
    clock = (start + WINDOW + 5) * 1000;
    expect((await sendChecked('REST JSON', parametersOf(recent))).outcome).toBe('NONCE_REUSED');
    expect((await sendChecked('GraphQL', parametersOf(recent))).outcome).toBe('NONCE_REUSED');
  });
});

describe('racing copies', () => {
  test(
    'identical requests sent at once create exactly one session; the others are refused NONCE_REUSED',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom(...SURFACES), { minLength: 2, maxLength: 10 }),
          validNonce,
          fc.constantFrom(undefined, { login: 'member', password: 'password123' }),
          async (surfaces, nonce, u) => {
            const t = tenants[1];
            const request = signedSessionRequest(t, u, { nonce: freshNonce(nonce) } satisfies SignOptions);
            const before = await digest(service.db.pool);
            const answers = await Promise.all(surfaces.map((surface) => send(surface, parametersOf(request))));
            const outcomes = answers.map((a) => a.outcome).sort();
            expect(outcomes).toEqual(['created', ...Array<string>(surfaces.length - 1).fill('NONCE_REUSED')].sort());
            const { rows } = await service.db.pool.query<{ sessions: number; nonces: number }>(
              `SELECT (SELECT count(*)::int FROM sessions WHERE application_id = $1 AND nonce = $2) AS sessions,
                  (SELECT count(*)::int FROM session_nonces WHERE application_id = $1 AND nonce = $2) AS nonces`,
              [t.applicationId, request.nonce],
            );
            expect(rows[0]).toEqual({ sessions: 1, nonces: 1 });
            const after = await digest(service.db.pool);
            expect(after.sessions!.rows).toBe(before.sessions!.rows + 1);
          },
        ),
        runs(15),
      );
    },
    TIMEOUT,
  );
});
