// A disabled application (admin app:disable), written once and run on both
// surfaces: every credential of it — user and application session tokens, the
// API key with and without On-Behalf-Of — and its signed session requests are
// refused with 403 APPLICATION_DISABLED in each surface's shape; nothing of it
// is deleted or changed (sessions are neither ended nor slid); other
// applications are untouched; enabling it gives every credential back.
import { MESSAGES } from '../../src/errors';
import { seedTenant, type Tenant } from '../support/seed';
import { signedSessionRequest } from '../support/sessions';
import { useService } from '../support/service';
import { type Headers, type Result, SURFACES, type Surface, surfaceOf, value } from './surfaces';

// The credential cache on (5 s, as in production): disabling must drop what it holds.
const service = useService({});
const seed = () => seedTenant(service.app.provisioning);

/** What `admin app:disable` / `app:enable` do, in this process: the flag, then the cache told. */
async function disable(t: Tenant): Promise<void> {
  await service.app.provisioning.applications.setDisabled(t.applicationId, true);
  await service.app.services.auth.forgetApplication(t.applicationId);
}
const enable = (t: Tenant) => service.app.provisioning.applications.setDisabled(t.applicationId, false);

/** Everything stored of an application, and its sessions' and users' times: what refusals must leave as it was. */
async function stored(t: Tenant): Promise<unknown> {
  const { rows } = await service.db.pool.query(
    `SELECT (SELECT count(*)::int FROM users WHERE application_id = $1) AS users,
            (SELECT json_agg(json_build_object('id', id, 'user', user_id, 'expires', expires_at, 'updated', updated_at) ORDER BY id)
               FROM sessions WHERE application_id = $1) AS sessions,
            (SELECT json_agg(last_request_at ORDER BY id) FROM users WHERE application_id = $1) AS "lastRequests",
            (SELECT count(*)::int FROM session_nonces WHERE application_id = $1) AS nonces,
            (SELECT count(*)::int FROM dialogs WHERE application_id = $1) AS dialogs,
            (SELECT json_agg(json_build_object('id', m.id, 'body', m.body, 'deleted', m.deleted_at) ORDER BY m.id)
               FROM messages m JOIN dialogs d ON d.id = m.dialog_id WHERE d.application_id = $1) AS messages,
            (SELECT count(*)::int FROM message_hides h JOIN users u ON u.id = h.user_id WHERE u.application_id = $1) AS hides,
            (SELECT count(*)::int FROM contacts c JOIN users u ON u.id = c.user_id WHERE u.application_id = $1) AS contacts`,
    [t.applicationId],
  );
  return rows[0];
}

type Call = [operation: string, send: (surface: Surface, t: Tenant, headers: Headers) => Promise<Result<unknown>>];

/** Every operation that takes credentials, each with inputs it would accept. */
const OPERATIONS: Call[] = [
  ['deleteMessages', (s, t, h) => s.deleteMessages(h, [t.messageIds[0]!])],
  ['userByExternalId', (s, _t, h) => s.userByExternalId(h, 102)],
  ['registeredUsers', (s, _t, h) => s.registeredUsers(h)],
  ['uploadAddressBook', (s, t, h) => s.uploadAddressBook(h, { contacts: [{ name: 'Member', phone: t.member.phone! }] })],
  ['addressBook', (s, _t, h) => s.addressBook(h)],
  ['session', (s, _t, h) => s.session(h)],
  ['endSession', (s, _t, h) => s.endSession(h)],
  ['login', (s, _t, h) => s.login(h, { login: 'member', password: 'password123' })],
  ['logout', (s, _t, h) => s.logout(h)],
];

const LOOKUP = '/users/external/102.json';
/** Each kind of credential an application has, and a path that accepts it. */
const CREDENTIALS: [what: string, headers: (t: Tenant) => Headers, accepted: string][] = [
  ['a user session token', (t) => t.as.owner, LOOKUP],
  // Read-only and without a user: only the operations on the session itself take it.
  ['an application session token', (t) => t.as.app, '/session.json'],
  ['the API key', (t) => t.as.apiKey, LOOKUP],
  ['the API key with On-Behalf-Of', (t) => t.as.onBehalfOf(t.owner.id), LOOKUP],
];

describe.each(SURFACES)('%s', (name) => {
  let surface: Surface;
  beforeAll(() => {
    surface = surfaceOf(name, service);
  });

  test.each(CREDENTIALS)(
    '%s of a disabled application is refused by every operation (403), and nothing is deleted or changed',
    async (_what, headers, accepted) => {
      const t = await seed();
      // Cached first (two requests): disabling must drop the cached credential, not wait for its expiry.
      for (let i = 0; i < 2; i++) expect((await service.rest('GET', accepted, { headers: headers(t) })).status).toBe(200);
      await disable(t);
      // What the requests before it owe (their slides, batched) is written; after it, nothing is.
      await service.app.services.auth.flush();
      const before = await stored(t);
      for (const [operation, send] of OPERATIONS) {
        const result = await send(surface, t, headers(t));
        expect([operation, result.ok]).toEqual([operation, false]);
        surface.expectFailure(result, 'APPLICATION_DISABLED', MESSAGES.applicationDisabled);
      }
      expect(await stored(t)).toEqual(before);
    },
  );

  test('signed session requests of a disabled application are refused (403) and store nothing; a wrong signature still says only that', async () => {
    const t = await seed();
    await disable(t);
    const before = await stored(t);
    surface.expectFailure(await surface.createSession(signedSessionRequest(t)), 'APPLICATION_DISABLED', MESSAGES.applicationDisabled);
    surface.expectFailure(
      await surface.createSession(signedSessionRequest(t, { login: 'member', password: 'password123' })),
      'APPLICATION_DISABLED',
      MESSAGES.applicationDisabled,
    );
    // Whoever cannot sign for the application learns nothing of its state.
    surface.expectFailure(
      await surface.createSession(signedSessionRequest(t, undefined, { secret: 'not-the-secret' })),
      'INVALID_SIGNATURE',
      MESSAGES.invalidSignature,
    );
    expect(await stored(t)).toEqual(before);
  });

  test('enabling it again gives back the same tokens, the API key and session requests; other applications never noticed', async () => {
    const [t, other] = [await seed(), await seed()];
    await disable(t);
    surface.expectFailure(await surface.userByExternalId(t.as.owner, 102), 'APPLICATION_DISABLED', MESSAGES.applicationDisabled);
    expect(value(await surface.userByExternalId(other.as.owner, 102)).login).toBe('member');
    expect(value(await surface.userByExternalId(other.as.apiKey, 102)).login).toBe('member');
    await enable(t);
    expect(value(await surface.userByExternalId(t.as.owner, 102)).login).toBe('member');
    expect(value(await surface.userByExternalId(t.as.onBehalfOf(t.member.id), 103)).login).toBe('outsider');
    expect(value(await surface.deleteMessages(t.as.apiKey, [t.messageIds[0]!])).deleted).toEqual([t.messageIds[0]]);
    expect(value(await surface.session(t.as.app)).applicationId).toBe(t.applicationId);
    expect(value(await surface.createSession(signedSessionRequest(t, { login: 'member', password: 'password123' }))).userId).toBe(t.member.id);
  });
});

test('disabling twice keeps the first time; enabling an enabled application changes nothing; an unknown one is an error', async () => {
  const t = await seed();
  const applications = service.app.provisioning.applications;
  expect(await applications.setDisabled(t.applicationId, false)).toEqual({ id: t.applicationId, disabledAt: null });
  const first = await applications.setDisabled(t.applicationId, true);
  expect(first.disabledAt).toBeInstanceOf(Date);
  expect(await applications.setDisabled(t.applicationId, true)).toEqual(first);
  await expect(applications.setDisabled(2_000_000_000, true)).rejects.toThrow('application 2000000000 does not exist');
  // An operator's session for a disabled application would be refused at once: it is not made.
  await expect(applications.createSession(t.applicationId, t.owner.id)).rejects.toThrow(`application ${t.applicationId} is disabled`);
});
