// An existing QuickBlox SDK app, unchanged, against this service: the real
// JavaScript SDK (npm `quickblox` 2.23.0) configured with the service's address
// and an application's credentials, driving every call an app of the three
// operations makes, and the session lifecycle they need. The SDK only calls
// https:// URLs, so the service runs over TLS with a certificate for
// localhost that this process trusts (test/support/tls.ts). Nothing of the SDK
// is patched; its HTTP goes out through its own node-fetch.
import QB from 'quickblox';
import { historyIds, seedTenant, type Tenant } from '../support/seed';
import { startService, useService } from '../support/service';
import { localhostCertificate, type TestCertificate, trustInThisProcess } from '../support/tls';

// The SDK's own typings are narrower than what it accepts and answers (e.g.
// users.get({external}), nonce a number): the calls are checked by what the
// service answers, not by those declarations.
type QuickBlox = any;
type Callback<T> = (error: unknown, result: T) => void;

let endpoint: string;
let t: Tenant;
let certificate: TestCertificate;

beforeAll(async () => {
  certificate = await localhostCertificate();
  trustInThisProcess(certificate);
});
// Options read once the certificate is made (the beforeAll above).
const service = useService(() => ({ https: certificate }));
beforeAll(async () => {
  endpoint = new URL(service.baseUrl).host;
  t = await seedTenant(service.app.provisioning);
});

// QB.init prints the platform (and, for a token client, an "accountKey is missing" warning).
beforeEach(() => {
  jest.spyOn(console, 'log').mockImplementation(() => {});
  jest.spyOn(console, 'warn').mockImplementation(() => {});
});
afterEach(() => {
  jest.restoreAllMocks();
});

/** The SDK's callback API as a promise: rejects with the SDK's own error object ({code, status, message, detail}). */
const sdk = <T>(call: (callback: Callback<T>) => void): Promise<T> =>
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the SDK's error object is what the tests check
  new Promise((resolve, reject) => call((error, result) => (error ? reject(error) : resolve(result))));

/** Any non-empty account key: the service has no accounts; the SDK only needs one to stop warning. */
const ACCOUNT_KEY = 'unused-account-key';
/** The chat endpoint an app sets (this service has no chat server; set, it keeps the SDK from asking QuickBlox for one). */
const CHAT_ENDPOINT = 'chat.localhost';

/** A QuickBlox instance as an app configures it: application id, auth key and secret, account key, and both endpoints. */
function appClient(options: { authSecret?: string; authKey?: string; applicationId?: number; hash?: 'sha1' | 'sha256' } = {}): QuickBlox {
  const client = new QB.QuickBlox() as unknown as QuickBlox;
  // As the README advises: an account key (JS SDK 2.23 warns without one) and
  // both endpoints, so that the SDK never asks api.quickblox.com's
  // account_settings.json where to go.
  client.init(options.applicationId ?? t.applicationId, options.authKey ?? t.authKey, options.authSecret ?? t.authSecret, ACCOUNT_KEY, {
    endpoints: { api: endpoint, chat: CHAT_ENDPOINT },
    hash: options.hash ?? 'sha1',
  });
  return client;
}

/** A QuickBlox instance started from an existing session token (QB.init(token, appId)). */
function tokenClient(token: string): QuickBlox {
  const client = new QB.QuickBlox() as unknown as QuickBlox;
  client.init(token, t.applicationId, undefined, { endpoints: { api: endpoint } });
  return client;
}

const tokenOf = (client: QuickBlox): string => (client as unknown as { service: { getSession(): { token: string } } }).service.getSession().token;
const expiryOf = (client: QuickBlox): Date =>
  (client as unknown as { service: { qbInst: { config: { qbTokenExpirationDate: Date } } } }).service.qbInst.config.qbTokenExpirationDate;

interface SdkError {
  code: number;
  detail: unknown;
  message: unknown;
}

async function refusal(promise: Promise<unknown>): Promise<SdkError> {
  try {
    await promise;
  } catch (error) {
    return error as SdkError;
  }
  throw new Error('the SDK call succeeded');
}

describe('sessions as the SDK creates them', () => {
  test('QB.createSession() signs an application session: the token works, user_id is 0, and the SDK learns its expiry', async () => {
    const client = appClient();
    const before = Date.now();
    const session = await sdk<{ token: string; user_id: number; application_id: number; nonce: number; ts: number }>((cb) => client.createSession(cb));
    expect(session).toMatchObject({ application_id: t.applicationId, user_id: 0, token: expect.any(String) });
    expect(tokenOf(client)).toBe(session.token);
    // With an account key and both endpoints set, the SDK kept them (it asked QuickBlox for none).
    expect((client as { service: { qbInst: { config: { endpoints: { api: string } } } } }).service.qbInst.config.endpoints.api).toBe(endpoint);
    // QB-Token-ExpirationDate, as the SDK parsed it (it keeps a minute of margin): two hours ahead.
    const expiry = expiryOf(client).getTime();
    expect(expiry).toBeGreaterThan(before + 2 * 3600_000 - 62_000);
    expect(expiry).toBeLessThan(Date.now() + 2 * 3600_000);
    // An application session reads, and is refused where a user is needed (the documented 403).
    const error = await refusal(sdk((cb) => client.addressbook.getRegisteredUsers(cb)));
    expect(error.code).toBe(403);
    expect(error.detail).toEqual(['Forbidden. Need user.']);
  });

  test('QB.createSession({login, password}) opens a user session, and with hash sha256 too', async () => {
    for (const hash of ['sha1', 'sha256'] as const) {
      const client = appClient({ hash });
      const session = await sdk<{ user_id: number }>((cb) => client.createSession({ login: 'member', password: 'password123' }, cb));
      expect(session.user_id).toBe(t.member.id);
      const user = await sdk<{ id: number; login: string }>((cb) => client.users.get({ external: 102 }, cb));
      expect(user).toMatchObject({ id: t.member.id, login: 'member', external_user_id: 102 });
    }
  });

  test('QB.createSession({email, password}) opens the session of the user with that email', async () => {
    const client = appClient();
    const session = await sdk<{ user_id: number }>((cb) => client.createSession({ email: 'outsider@example.com', password: 'password123' }, cb));
    expect(session.user_id).toBe(t.outsider.id);
  });

  test('QB.getSession shows the current session, and QB.init(token, appId) starts from an existing token', async () => {
    const client = appClient();
    const created = await sdk<{ id: number; token: string }>((cb) => client.createSession({ login: 'owner', password: 'password123' }, cb));
    const resumed = tokenClient(created.token);
    const shown = await sdk<{ session: { id: number; token: string; user_id: number } }>((cb) => resumed.getSession(cb));
    expect(shown.session).toMatchObject({ id: created.id, token: created.token, user_id: t.owner.id });
    // A token the admin CLI made works the same way.
    const cli = tokenClient(t.memberToken);
    const user = await sdk<{ id: number }>((cb) => cli.users.get({ external: 103 }, cb));
    expect(user.id).toBe(t.outsider.id);
  });

  test('QB.login turns an application session into a user session, and QB.logout turns it back', async () => {
    const client = appClient();
    await sdk((cb) => client.createSession(cb));
    const user = await sdk<{ id: number; login: string; phone: string }>((cb) => client.login({ login: 'owner', password: 'password123' }, cb));
    expect(user).toMatchObject({ id: t.owner.id, login: 'owner', phone: t.owner.phone });
    // Now the same token acts as the owner.
    await sdk((cb) => client.addressbook.uploadAddressBook([{ name: 'Member', phone: t.member.phone! }], cb));
    const registered = await sdk<{ items: { user: { id: number } }[] }>((cb) => client.addressbook.getRegisteredUsers(true, cb));
    expect(registered.items.map((i) => i.user.id)).toEqual([t.member.id]);
    await sdk((cb) => client.logout(cb));
    const error = await refusal(sdk((cb) => client.addressbook.getRegisteredUsers(true, cb)));
    expect(error.code).toBe(403);
  });

  test('QB.destroySession ends the session: the token is refused from then on, as an expired one', async () => {
    const client = appClient();
    const session = await sdk<{ token: string }>((cb) => client.createSession({ login: 'member', password: 'password123' }, cb));
    const other = tokenClient(session.token);
    await sdk((cb) => client.destroySession(cb));
    const error = await refusal(sdk((cb) => other.users.get({ external: 101 }, cb)));
    expect(error.code).toBe(401);
    expect(error.detail).toEqual({ base: ['Required session does not exist'] });
  });
});

describe('the three operations through the SDK', () => {
  let client: QuickBlox;
  beforeAll(async () => {
    // An application of its own: the session tests above changed the first one's books.
    t = await seedTenant(service.app.provisioning);
    jest.spyOn(console, 'log').mockImplementation(() => {});
    jest.spyOn(console, 'warn').mockImplementation(() => {});
    client = appClient();
    await sdk((cb) => client.createSession({ login: 'owner', password: 'password123' }, cb));
  });

  test('QB.users.get({external}) answers the user record of that external id', async () => {
    const user = await sdk<Record<string, unknown>>((cb) => client.users.get({ external: 102 }, cb));
    expect(user).toMatchObject({ id: t.member.id, login: 'member', full_name: 'member Example', external_user_id: 102, user_tags: '' });
    const missing = await refusal(sdk((cb) => client.users.get({ external: 999 }, cb)));
    expect(missing.code).toBe(404);
    expect(missing.message).toEqual({ code: 'NOT_FOUND', message: 'User not found' });
  });

  test('uploadAddressBook stores the valid contacts, removes destroy:1 ones, reports the rejected by index; get and getRegisteredUsers read them back', async () => {
    const udid = 'sdk-device-1';
    const first = await sdk((cb) =>
      client.addressbook.uploadAddressBook(
        [
          { name: 'Member', phone: t.member.phone! },
          { name: 'Outsider', phone: t.outsider.phone! },
          { name: 'Bad phone', phone: '123' },
          { phone: '+10000000999' },
        ],
        { udid },
        cb,
      ),
    );
    expect(first).toEqual({
      created: 2,
      updated: 0,
      deleted: 0,
      rejected: {
        '2': ['phone must be 10 to 15 digits, optionally with a leading "+" and spaces, dashes, dots or parentheses (at most 32 characters)'],
        '3': ['name must be 1 to 255 characters'],
      },
    });
    // get(udid): the SDK sends the udid as a JSON object in place of the query string.
    expect(await sdk((cb) => client.addressbook.get(udid, cb))).toEqual([
      { name: 'Member', phone: t.member.phone },
      { name: 'Outsider', phone: t.outsider.phone },
    ]);
    const second = await sdk((cb) => client.addressbook.uploadAddressBook([{ phone: t.outsider.phone!, destroy: 1 } as never], { udid }, cb));
    expect(second).toEqual({ created: 0, updated: 0, deleted: 1 });
    expect(await sdk((cb) => client.addressbook.get(udid, cb))).toEqual([{ name: 'Member', phone: t.member.phone }]);
    // The global book is another one, empty so far.
    expect(await sdk((cb) => client.addressbook.get(cb))).toEqual([]);
    await sdk((cb) => client.addressbook.uploadAddressBook([{ name: 'Outsider', phone: t.outsider.phone! }], { force: 1 }, cb));
    const compact = await sdk<{ items: { user: Record<string, unknown> }[] }>((cb) => client.addressbook.getRegisteredUsers(true, cb));
    expect(compact.items).toEqual([{ user: { id: t.outsider.id, phone: t.outsider.phone } }]);
    const full = await sdk<{ items: { user: Record<string, unknown> }[] }>((cb) => client.addressbook.getRegisteredUsers(cb));
    expect(full.items).toEqual([{ user: expect.objectContaining({ id: t.outsider.id, login: 'outsider', external_user_id: 103 }) }]);
  });

  test('QB.chat.message.delete hides a message for the caller, and with {force: 1} deletes it for everyone', async () => {
    const [first, second] = t.messageIds;
    await sdk((cb) => client.chat.message.delete(first!, cb));
    expect(await historyIds(service.app.services, t.dialogId, t.owner.id)).not.toContain(first);
    expect(await historyIds(service.app.services, t.dialogId, t.member.id)).toContain(first);
    await sdk((cb) => client.chat.message.delete(second!, { force: 1 }, cb));
    expect(await historyIds(service.app.services, t.dialogId, t.member.id)).not.toContain(second);
  });

  test('a force delete by a member who does not own the dialog comes back to the app as WrongPermissions', async () => {
    const member = appClient();
    await sdk((cb) => member.createSession({ login: 'member', password: 'password123' }, cb));
    const error = await refusal(sdk((cb) => member.chat.message.delete(t.messageIds[2]!, { force: 1 }, cb)));
    expect(error.code).toBe(403);
    // The SDK reads a delete's answer as text: the body comes back as it was sent.
    expect(JSON.parse(error.message as string)).toEqual({ errors: ['WrongPermissions'] });
    expect(await historyIds(service.app.services, t.dialogId, t.owner.id)).toContain(t.messageIds[2]);
  });
});

describe('the chat screens through the SDK: dialog list, message list, message create (issue 32)', () => {
  let chat: Tenant;
  let client: QuickBlox;
  beforeAll(async () => {
    chat = await seedTenant(service.app.provisioning);
    jest.spyOn(console, 'log').mockImplementation(() => {});
    jest.spyOn(console, 'warn').mockImplementation(() => {});
    client = appClient({ applicationId: chat.applicationId, authKey: chat.authKey, authSecret: chat.authSecret });
    await sdk((cb) => client.createSession({ login: 'member', password: 'password123' }, cb));
  });

  test('QB.chat.message.create sends; QB.chat.message.list reads the history (oldest first, and newest first); QB.chat.dialog.list shows the dialog with its last message', async () => {
    const created = await sdk<Record<string, unknown>>((cb) =>
      client.chat.message.create({ chat_dialog_id: chat.dialogId, message: 'hello from the SDK' }, cb),
    );
    expect(created).toEqual({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
      chat_dialog_id: chat.dialogId,
      message: 'hello from the SDK',
      sender_id: chat.member.id,
      date_sent: expect.any(Number),
      created_at: expect.any(String),
      updated_at: expect.any(String),
      attachments: [],
    });
    const list = await sdk<{ skip: number; limit: number; items: { _id: string; message: string }[] }>((cb) =>
      client.chat.message.list({ chat_dialog_id: chat.dialogId, limit: 10, skip: 0 }, cb),
    );
    expect(list.items.map((m) => m._id)).toEqual([...chat.messageIds, created._id]);
    const newest = await sdk<{ items: { message: string }[] }>((cb) =>
      client.chat.message.list({ chat_dialog_id: chat.dialogId, sort_desc: 'date_sent', limit: 2 }, cb),
    );
    expect(newest.items.map((m) => m.message)).toEqual(['hello from the SDK', 'three']);
    const dialogs = await sdk<{ total_entries: number; items: Record<string, unknown>[] }>((cb) => client.chat.dialog.list({ limit: 10, skip: 0 }, cb));
    expect(dialogs.total_entries).toBe(1);
    expect(dialogs.items).toEqual([
      expect.objectContaining({
        _id: chat.dialogId,
        type: 2,
        user_id: chat.owner.id,
        occupants_ids: [chat.owner.id, chat.member.id].sort((a, b) => a - b),
        last_message: 'hello from the SDK',
        last_message_user_id: chat.member.id,
      }),
    ]);
  });

  test('a dialog of another application is not found through the SDK, and nothing is sent to it', async () => {
    const other = await seedTenant(service.app.provisioning);
    const listed = await refusal(sdk((cb) => client.chat.message.list({ chat_dialog_id: other.dialogId }, cb)));
    expect(listed.code).toBe(404);
    const sent = await refusal(sdk((cb) => client.chat.message.create({ chat_dialog_id: other.dialogId, message: 'hi' }, cb)));
    expect(sent.code).toBe(404);
    expect(await historyIds(service.app.services, other.dialogId, other.owner.id)).toEqual(other.messageIds);
  });
});

describe('session requests the service refuses, as the SDK reports them', () => {
  test('a wrong auth secret: 422 Unexpected signature', async () => {
    const error = await refusal(sdk((cb) => appClient({ authSecret: 'not-the-secret' }).createSession(cb)));
    expect(error).toMatchObject({ code: 422, detail: { base: ['Unexpected signature'] } });
  });

  test('an unknown application or auth key: 422 Unknown application or auth key', async () => {
    for (const options of [{ applicationId: 2_000_000_000 }, { authKey: 'not-the-key' }]) {
      const error = await refusal(sdk((cb) => appClient(options).createSession(cb)));
      expect(error).toMatchObject({ code: 422, detail: { base: ['Unknown application or auth key'] } });
    }
  });

  test('a wrong password and an unknown login get the same 401 Unauthorized', async () => {
    for (const credentials of [
      { login: 'owner', password: 'wrong-password' },
      { login: 'nobody', password: 'password123' },
    ]) {
      const error = await refusal(sdk((cb) => appClient().createSession(credentials, cb)));
      expect(error).toMatchObject({ code: 401, detail: { base: ['Unauthorized'] } });
    }
  });

  test('a device clock two hours off: 422 Unexpected timestamp', async () => {
    // The SDK and the service share this process's clock: a second service whose clock runs two hours ahead.
    const ahead = await startService({ https: certificate, sessions: { now: () => Date.now() + 2 * 3600_000 } });
    try {
      const client = new QB.QuickBlox() as unknown as QuickBlox;
      const other = await seedTenant(ahead.app.provisioning);
      client.init(other.applicationId, other.authKey, other.authSecret, { endpoints: { api: new URL(ahead.baseUrl).host } });
      const error = await refusal(sdk((cb) => client.createSession(cb)));
      expect(error.code).toBe(422);
      expect(error.detail).toEqual({ base: [expect.stringMatching(/^Unexpected timestamp: more than 3600 s away from the server's clock/)] });
    } finally {
      await ahead.close();
    }
  });

  test('the same timestamp and nonce twice (a replay): the second is refused with 422 and creates nothing', async () => {
    const now = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(now);
    jest.spyOn(Math, 'random').mockReturnValue(0.4242);
    const client = appClient();
    await sdk((cb) => client.createSession(cb));
    const sessions = await service.db.pool.query('SELECT count(*)::int AS n FROM sessions WHERE application_id = $1', [t.applicationId]);
    const error = await refusal(sdk((cb) => appClient().createSession(cb)));
    expect(error).toMatchObject({ code: 422, detail: { base: ['Unexpected nonce: this timestamp and nonce were already used'] } });
    const after = await service.db.pool.query('SELECT count(*)::int AS n FROM sessions WHERE application_id = $1', [t.applicationId]);
    expect(after.rows[0].n).toBe(sessions.rows[0].n);
  });
});
