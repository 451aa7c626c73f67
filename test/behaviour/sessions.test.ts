// Sessions, written once and run on both surfaces: POST/GET/DELETE
// /session.json and /login.json on REST, createSession/session/endSession/
// login/logout on GraphQL. Signed requests come from test/support/sessions.ts,
// which signs as QuickBlox's SDK does.
import { MESSAGES } from '../../src/errors';
import { seedTenant, type Tenant } from '../support/seed';
import { signedSessionRequest } from '../support/sessions';
import { useService } from '../support/service';
import { SURFACES, type Surface, surfaceOf, value } from './surfaces';

// Small failed-password budgets, so that the 429 is reached in a few requests.
const service = useService({ sessions: { loginAttempts: { perLogin: 3, perAddress: 1_000, windowMs: 60_000 } } });

const seed = () => seedTenant(service.app.provisioning);
const token = (session: { token: string }) => ({ 'SVC-Token': session.token });

/** Sessions and remembered nonces of an application: what a refused request must leave as it was. */
async function stored(t: Tenant): Promise<{ sessions: number; nonces: number }> {
  const { rows } = await service.db.pool.query(
    `SELECT (SELECT count(*)::int FROM sessions WHERE application_id = $1) AS sessions,
            (SELECT count(*)::int FROM session_nonces WHERE application_id = $1) AS nonces`,
    [t.applicationId],
  );
  return rows[0];
}

describe.each(SURFACES)('%s', (name) => {
  let surface: Surface;
  beforeAll(() => {
    surface = surfaceOf(name, service);
  });

  describe('creating a session', () => {
    test('a signed request without a user opens an application session whose token reads the session', async () => {
      const t = await seed();
      const session = value(await surface.createSession(signedSessionRequest(t)));
      expect(session).toEqual({ id: expect.any(Number), applicationId: t.applicationId, userId: null, token: expect.any(String) });
      expect(value(await surface.session(token(session)))).toEqual(session);
      // An application session is read-only and has no user: the address book refuses it.
      expect((await service.rest('GET', '/address_book.json', { headers: token(session) })).status).toBe(403);
    });

    test.each([
      ['login', { login: 'member', password: 'password123' }],
      ['email', { email: 'member@example.com', password: 'password123' }],
    ])('a signed request with a %s and password opens that user’s session', async (_by, user) => {
      const t = await seed();
      const session = value(await surface.createSession(signedSessionRequest(t, user)));
      expect(session.userId).toBe(t.member.id);
      expect((await service.rest('GET', '/users/external/103.json', { headers: token(session) })).status).toBe(200);
    });

    test('HMAC-SHA256 signatures are accepted as well as HMAC-SHA1', async () => {
      const t = await seed();
      const session = value(await surface.createSession(signedSessionRequest(t, { login: 'owner', password: 'password123' }, { algorithm: 'sha256' })));
      expect(session.userId).toBe(t.owner.id);
    });

    test.each([
      ['an unknown application id', { applicationId: '2000000000' }, 'UNKNOWN_APPLICATION', MESSAGES.unknownApplication],
      ['another application’s auth key', { authKey: 'x' }, 'UNKNOWN_APPLICATION', MESSAGES.unknownApplication],
      ['a signature under another secret', { secret: 'not-the-secret' }, 'INVALID_SIGNATURE', 'Unexpected signature'],
      [
        'a timestamp two hours old',
        { timestamp: Math.floor(Date.now() / 1000) - 7200 },
        'TIMESTAMP_OUT_OF_WINDOW',
        /^Unexpected timestamp: more than 3600 s away/,
      ],
      ['a timestamp two hours ahead', { timestamp: Math.floor(Date.now() / 1000) + 7200 }, 'TIMESTAMP_OUT_OF_WINDOW', /^Unexpected timestamp/],
      ['a timestamp that is not Unix seconds', { timestamp: '2026-11-23' }, 'BAD_USER_INPUT', 'timestamp must be a Unix time in seconds'],
      ['a nonce of 65 characters', { nonce: 'n'.repeat(65) }, 'BAD_USER_INPUT', 'nonce must be 1 to 64 printable characters'],
      ['an application id that is not a number', { applicationId: 'app' }, 'BAD_USER_INPUT', 'application_id must be a positive integer'],
    ] as const)('%s is refused (%s) and stores nothing', async (_what, options, code, message) => {
      const t = await seed();
      // The other application's auth key (a real key, of the wrong application).
      const other = options === undefined ? undefined : 'authKey' in options ? (await seed()).authKey : undefined;
      const before = await stored(t);
      const request = signedSessionRequest(t, undefined, { ...options, ...(other ? { authKey: other } : {}) });
      surface.expectFailure(await surface.createSession(request), code, message);
      expect(await stored(t)).toEqual(before);
    });

    test('an application without auth credentials (made before they existed) is unknown', async () => {
      const t = await seed();
      await service.db.pool.query('UPDATE applications SET auth_key = NULL, auth_secret_sealed = NULL WHERE id = $1', [t.applicationId]);
      surface.expectFailure(await surface.createSession(signedSessionRequest(t)), 'UNKNOWN_APPLICATION', MESSAGES.unknownApplication);
    });

    test.each<[string, { login?: string; email?: string; password: string; other?: boolean }]>([
      ['a wrong password', { login: 'member', password: 'wrong-password' }],
      ['an unknown login', { login: 'nobody', password: 'password123' }],
      ['an unknown email', { email: 'nobody@example.com', password: 'password123' }],
      ['a login that is another application’s user only', { login: 'member', password: 'password123', other: true }],
      // Login and email together (the Android SDK's request): an email that is not the login's user's is a wrong credential.
      ['a login with another user’s email', { login: 'member', email: 'outsider@example.com', password: 'password123' }],
      ['a login with an unknown email', { login: 'member', email: 'nobody@example.com', password: 'password123' }],
      ['an unknown login with a user’s email', { login: 'nobody', email: 'member@example.com', password: 'password123' }],
    ])('%s gets the same 401 Unauthorized and stores nothing', async (_what, { other, ...user }) => {
      const t = await seed();
      if (other) await service.db.pool.query('DELETE FROM users WHERE id = $1', [t.member.id]);
      const before = await stored(t);
      surface.expectFailure(await surface.createSession(signedSessionRequest(t, user)), 'UNAUTHENTICATED', MESSAGES.badLogin);
      expect(await stored(t)).toEqual(before);
    });

    test('login and email together, both the user’s (as the Android SDK sends them), open the user’s session', async () => {
      const t = await seed();
      expect(
        value(await surface.createSession(signedSessionRequest(t, { login: 'member', email: 'member@example.com', password: 'password123' }))).userId,
      ).toBe(t.member.id);
      expect(value(await surface.login(t.as.app, { login: 'member', email: 'member@example.com', password: 'password123' })).id).toBe(t.member.id);
      surface.expectFailure(
        await surface.login(t.as.app, { login: 'member', email: 'outsider@example.com', password: 'password123' }),
        'UNAUTHENTICATED',
        MESSAGES.badLogin,
      );
    });

    test.each([
      ['no password', { login: 'member' }, 'password is required'],
      ['a password but no login', { password: 'password123' }, 'login or email is required'],
    ])('a user with %s is refused with 422', async (_what, user, message) => {
      const t = await seed();
      surface.expectFailure(await surface.createSession(signedSessionRequest(t, user)), 'BAD_USER_INPUT', message);
    });

    test('the same timestamp and nonce twice is a replay: the second is refused, the same nonce at another second is not', async () => {
      const t = await seed();
      const now = Math.floor(Date.now() / 1000);
      value(await surface.createSession(signedSessionRequest(t, undefined, { timestamp: now, nonce: '4242' })));
      const before = await stored(t);
      surface.expectFailure(
        await surface.createSession(signedSessionRequest(t, undefined, { timestamp: now, nonce: '4242' })),
        'NONCE_REUSED',
        MESSAGES.nonceReused,
      );
      expect(await stored(t)).toEqual(before);
      value(await surface.createSession(signedSessionRequest(t, undefined, { timestamp: now - 1, nonce: '4242' })));
      // Another application may use the same pair.
      value(await surface.createSession(signedSessionRequest(await seed(), undefined, { timestamp: now, nonce: '4242' })));
    });
  });

  describe('the session of the request', () => {
    test('an API key has no session: show, end, login and logout answer 403', async () => {
      const t = await seed();
      for (const result of [
        await surface.session(t.as.apiKey),
        await surface.endSession(t.as.apiKey),
        await surface.login(t.as.apiKey, { login: 'member', password: 'password123' }),
        await surface.logout(t.as.apiKey),
      ]) {
        surface.expectFailure(result, 'FORBIDDEN', MESSAGES.sessionRequired);
      }
    });

    test('ending the session refuses its token from then on, this instance included at once', async () => {
      const t = await seed();
      const session = value(await surface.createSession(signedSessionRequest(t, { login: 'owner', password: 'password123' })));
      // A request first, so that the credential cache holds the token.
      value(await surface.session(token(session)));
      value(await surface.endSession(token(session)));
      surface.expectFailure(await surface.session(token(session)), 'UNAUTHENTICATED', MESSAGES.sessionMissing);
      surface.expectFailure(await surface.endSession(token(session)), 'UNAUTHENTICATED', MESSAGES.sessionMissing);
    });

    test('login turns an application session into the user’s, logout turns it back; the token stays the same', async () => {
      const t = await seed();
      const session = value(await surface.createSession(signedSessionRequest(t)));
      expect(value(await surface.login(token(session), { login: 'member', password: 'password123' }))).toEqual({ id: t.member.id, login: 'member' });
      expect(value(await surface.session(token(session))).userId).toBe(t.member.id);
      expect((await service.rest('GET', '/address_book.json', { headers: token(session) })).status).toBe(200);
      value(await surface.logout(token(session)));
      expect(value(await surface.session(token(session))).userId).toBeNull();
      expect((await service.rest('GET', '/address_book.json', { headers: token(session) })).status).toBe(403);
      // Logging out an application session changes nothing.
      value(await surface.logout(token(session)));
    });

    test('login with an email, and from a user session as another user', async () => {
      const t = await seed();
      const session = value(await surface.createSession(signedSessionRequest(t, { login: 'owner', password: 'password123' })));
      expect(value(await surface.login(token(session), { email: 'outsider@example.com', password: 'password123' })).id).toBe(t.outsider.id);
      expect(value(await surface.session(token(session))).userId).toBe(t.outsider.id);
    });

    test('a wrong password at login is 401 and leaves the session as it was', async () => {
      const t = await seed();
      const session = value(await surface.createSession(signedSessionRequest(t)));
      surface.expectFailure(await surface.login(token(session), { login: 'member', password: 'nope-nope' }), 'UNAUTHENTICATED', MESSAGES.badLogin);
      expect(value(await surface.session(token(session))).userId).toBeNull();
    });

    test('past the failed-password budget of a login, even the right password is refused with 429 until the window ends', async () => {
      const t = await seed();
      const session = value(await surface.createSession(signedSessionRequest(t)));
      for (let i = 0; i < 3; i++) {
        surface.expectFailure(await surface.login(token(session), { login: 'owner', password: `wrong-${i}` }), 'UNAUTHENTICATED', MESSAGES.badLogin);
      }
      surface.expectFailure(
        await surface.login(token(session), { login: 'owner', password: 'password123' }),
        'TOO_MANY_REQUESTS',
        /^Too many requests: retry in \d+ s$/,
      );
      surface.expectFailure(
        await surface.createSession(signedSessionRequest(t, { login: 'owner', password: 'password123' })),
        'TOO_MANY_REQUESTS',
        /^Too many requests/,
      );
      // Another login of the same application is not affected.
      expect(value(await surface.login(token(session), { login: 'member', password: 'password123' })).id).toBe(t.member.id);
    });
  });
});
