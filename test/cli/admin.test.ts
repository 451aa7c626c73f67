// The admin CLI's contract, run as users run it: `npm run -s admin -- ...`,
// one JSON object on stdout and exit 0, or a message on stderr and non-zero.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseSecretsKey } from '../../src/services/secrets';
import { startService } from '../support/service';
import { restForm, signedSessionRequest } from '../support/sessions';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');
const serverUrl = process.env.TEST_RUN_DATABASE_URL;
// Embedded mode: the CLI's own data folder, opened by each CLI process in turn.
const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'admin-cli-')), 'db');

afterAll(() => rmSync(path.dirname(dataDir), { recursive: true, force: true }));

async function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return adminWith({}, ...args);
}

/** `admin` with these settings in its environment. */
async function adminWith(settings: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', PGLITE_DIR: dataDir, ...settings };
  if (serverUrl) env.DATABASE_URL = serverUrl;
  else delete env.DATABASE_URL;
  try {
    const { stdout, stderr } = await run('npm', ['run', '-s', 'admin', '--', ...args], { cwd: root, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function json(...args: string[]): Promise<any> {
  return jsonWith({}, ...args);
}

async function jsonWith(settings: Record<string, string>, ...args: string[]): Promise<any> {
  const result = await adminWith(settings, ...args);
  expect(result).toMatchObject({ code: 0, stderr: '' });
  expect(result.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(result.stdout);
}

// Each CLI run is a process that loads the Prisma client (and, embedded, PGlite):
// seconds apiece, so these tests get minutes, not the default minute.
jest.setTimeout(300_000);

test('every command of the contract prints one JSON object, and the data works over REST', async () => {
  const created = await json('app:create', '--name', 'CLI app');
  expect(created).toEqual({
    application: { id: expect.any(Number), name: 'CLI app', phoneRegion: null },
    apiKey: expect.any(String),
    authKey: expect.any(String),
    authSecret: expect.any(String),
  });
  const app = String(created.application.id);

  const { user: owner } = await json(
    'user:create',
    '--app',
    app,
    '--login',
    'cli-owner',
    '--password',
    'password123',
    '--full-name',
    'Cli Owner',
    '--email',
    'owner@example.com',
    '--phone',
    '+15551110001',
    '--website',
    'https://example.com/owner',
    '--external-user-id',
    '555001',
    '--facebook-id',
    'fb1',
    '--twitter-id',
    'tw1',
    '--user-tags',
    'a,b',
  );
  expect(Object.keys(owner).sort()).toEqual([
    'age_over16',
    'allow_sales_activities',
    'allow_statistics_analysis',
    'blob_id',
    'created_at',
    'custom_data',
    'email',
    'external_user_id',
    'facebook_id',
    'full_name',
    'id',
    'last_request_at',
    'login',
    'parents_contacts',
    'phone',
    'twitter_id',
    'updated_at',
    'user_tags',
    'website',
  ]);
  expect(owner).toMatchObject({ login: 'cli-owner', full_name: 'Cli Owner', external_user_id: 555001, user_tags: 'a,b', phone: '+15551110001' });
  const { user: friend } = await json('user:create', '--app', app, '--login', 'cli-friend', '--password', 'password123', '--phone', '+15551110002');

  const { token } = await json('session:create', '--app', app, '--user', String(owner.id));
  const { token: appToken } = await json('session:create', '--app', app);
  expect(token).not.toEqual(appToken);

  const { dialog } = await json('dialog:create', '--app', app, '--owner', String(owner.id), '--occupants', String(friend.id), '--type', '3');
  expect(dialog).toEqual({ id: expect.stringMatching(/^[0-9a-f]{24}$/), owner_id: owner.id, occupant_ids: [owner.id, friend.id], type: 3 });

  const { message } = await json('message:create', '--dialog', dialog.id, '--sender', String(friend.id), '--body', 'hello');
  expect(message).toEqual({ id: expect.stringMatching(/^[0-9a-f]{24}$/) });
  expect(await json('messages:list', '--dialog', dialog.id, '--as', String(owner.id))).toEqual({
    items: [{ id: message.id, sender_id: friend.id, body: 'hello' }],
  });

  expect(await json('contacts:upload', '--user', String(owner.id), '--contact', 'Friend:+15551110002', '--contact', 'Nobody:+15559990000')).toEqual({
    created: 2,
    updated: 0,
    deleted: 0,
  });
  expect(await json('contacts:upload', '--user', String(owner.id), '--force', '--contact', 'Friend:+15551110002')).toEqual({
    created: 0,
    updated: 0,
    deleted: 1,
  });

  // The CLI's records are the service's: the same user over REST, the token works.
  // The key the CLI generated next to its data folder seals the auth secrets it printed.
  const secretsKey = parseSecretsKey(readFileSync(path.join(path.dirname(dataDir), 'secrets.key'), 'utf8'))!;
  const service = await startService({ database: serverUrl ? { url: serverUrl, migrate: false } : { dataDir }, secretsKey });
  try {
    const base = service.baseUrl;
    const lookup = await fetch(`${base}/users/external/555001.json`, { headers: { 'SVC-Token': token } });
    const body = (await lookup.json()) as { user: Record<string, unknown> };
    expect(lookup.status).toBe(200);
    expect({ ...body.user, last_request_at: null }).toEqual(owner);
    const matched = await fetch(`${base}/address_book/registered_users.json?compact=1`, { headers: { 'SVC-Token': token } });
    expect(await matched.json()).toEqual({ items: [{ user: { id: friend.id, phone: '+15551110002' } }] });
    const deleted = await fetch(`${base}/chat/Message/${message.id}.json`, { method: 'DELETE', headers: { 'SVC-Token': token } });
    expect(await deleted.json()).toEqual({ SuccessfullyDeleted: { ids: [message.id] }, NotFound: { ids: [] } });
    // The printed auth key and secret sign a session request, as an SDK app would.
    const app = { applicationId: created.application.id, authKey: created.authKey, authSecret: created.authSecret };
    const session = await fetch(`${base}/session.json`, {
      method: 'POST',
      body: new URLSearchParams(restForm(signedSessionRequest(app, { login: 'cli-owner', password: 'password123' }))),
    });
    expect(session.status).toBe(201);
    expect(((await session.json()) as { session: { user_id: number } }).session.user_id).toBe(owner.id);
  } finally {
    await service.close();
  }
  // app:rotate-auth: new credentials, and the old secret stops working.
  const rotated = await json('app:rotate-auth', '--app', app);
  expect(rotated).toEqual({ authKey: expect.any(String), authSecret: expect.any(String) });
  const again = await startService({
    database: serverUrl ? { url: serverUrl, migrate: false } : { dataDir },
    secretsKey: parseSecretsKey(readFileSync(path.join(path.dirname(dataDir), 'secrets.key'), 'utf8'))!,
  });
  try {
    const base = again.baseUrl;
    const old = { applicationId: created.application.id, authKey: created.authKey, authSecret: created.authSecret };
    const stale = await fetch(`${base}/session.json`, { method: 'POST', body: new URLSearchParams(restForm(signedSessionRequest(old))) });
    expect(stale.status).toBe(422);
    const fresh = await fetch(`${base}/session.json`, { method: 'POST', body: new URLSearchParams(restForm(signedSessionRequest({ ...old, ...rotated }))) });
    expect(fresh.status).toBe(201);
  } finally {
    await again.close();
  }
  // app:rotate-api-key: a new key; the running instances are told through the database (no REDIS_URL here).
  const rotatedKey = await json('app:rotate-api-key', '--app', app);
  expect(rotatedKey).toEqual({ apiKey: expect.any(String), instancesTold: serverUrl ? 'postgres' : 'none' });
  expect(await json('messages:list', '--dialog', dialog.id, '--as', String(owner.id))).toEqual({ items: [] });
  expect((await json('messages:list', '--dialog', dialog.id, '--as', String(friend.id))).items).toHaveLength(1);
});

test('session:create keeps SESSIONS_PER_USER_MAX and says how many sessions it ended; sweep prints what it removed', async () => {
  const app = String((await json('app:create', '--name', 'CLI cap')).application.id);
  const { user } = await json('user:create', '--app', app, '--login', 'cli-capped', '--password', 'password123');
  const cap = { SESSIONS_PER_USER_MAX: '2' };
  expect(Object.keys(await jsonWith(cap, 'session:create', '--app', app, '--user', String(user.id)))).toEqual(['token']);
  await jsonWith(cap, 'session:create', '--app', app, '--user', String(user.id));
  expect(await jsonWith(cap, 'session:create', '--app', app, '--user', String(user.id))).toEqual({
    token: expect.any(String),
    sessionsEnded: 1,
    instancesTold: serverUrl ? 'postgres' : 'none',
  });
  // On a server the run's database is shared with files that keep expired sessions on purpose: not swept here.
  if (serverUrl) return;
  const swept = await json('sweep');
  expect(swept).toEqual({
    removed: { sessions: expect.any(Number), nonces: expect.any(Number), retained_content: expect.any(Number), live_events: expect.any(Number) },
    batches: expect.any(Number),
  });
  expect(swept.batches).toBeGreaterThanOrEqual(3);
});

test('app:create --region, app:set-region and phones:normalise: national numbers read in the region, stored phones rekeyed', async () => {
  const created = await json('app:create', '--name', 'CLI phones', '--region', 'GB');
  expect(created.application.phoneRegion).toBe('GB');
  const app = String(created.application.id);
  const { user: owner } = await json('user:create', '--app', app, '--login', 'cli-phones-owner', '--password', 'password123');
  const { user: london } = await json('user:create', '--app', app, '--login', 'cli-phones-london', '--password', 'password123', '--phone', '+44 20 7946 0958');
  expect(london.phone).toBe('+44 20 7946 0958');
  // A national number, read in GB: the London user.
  expect(await json('contacts:upload', '--user', String(owner.id), '--contact', 'London:020 7946 0958')).toEqual({ created: 1, updated: 0, deleted: 0 });
  const keys = async () => await json('app:set-region', '--app', app, '--region', 'US');
  expect(await keys()).toEqual({ applicationId: Number(app), region: 'US', usersUpdated: 0, contactsUpdated: 1 });
  expect(await json('app:set-region', '--app', app, '--none')).toEqual({ applicationId: Number(app), region: null, usersUpdated: 0, contactsUpdated: 1 });
  // Nothing left to rekey.
  expect(await json('phones:normalise', '--app', app)).toEqual({
    applications: [{ applicationId: Number(app), region: null, usersUpdated: 0, contactsUpdated: 0 }],
  });
  const bad = await admin('app:set-region', '--app', app, '--region', 'XX');
  expect([bad.code, bad.stdout]).toEqual([1, '']);
  expect(bad.stderr).toMatch(/ISO 3166-1 alpha-2/);
});

test('failures print a message on stderr, nothing on stdout, and exit non-zero', async () => {
  const usage = await admin('user:create', '--app', 'abc', '--login', 'x', '--password', 'password123');
  expect(usage.code).toBe(2);
  expect(usage.stdout).toBe('');
  expect(usage.stderr).toMatch(/positive integer/);

  const unknown = await admin('no:such-command');
  expect(unknown.code).toBe(2);
  expect(unknown.stdout).toBe('');

  const failed = await admin('session:create', '--app', '999999');
  expect(failed.code).toBe(1);
  expect(failed.stdout).toBe('');
  expect(failed.stderr).toMatch(/application 999999 does not exist/);

  const badPhone = await admin('contacts:upload', '--user', '999999', '--contact', 'x:+1555');
  expect(badPhone.code).toBe(1);
  expect(badPhone.stderr).toMatch(/does not exist/);

  // Prisma's constraint errors, in a process where it loaded on first use
  // (src/provisioning/client.ts), are the service's own messages, not Prisma's.
  const { application } = await json('app:create', '--name', 'cli-failures');
  await json('user:create', '--app', String(application.id), '--login', 'cli-taken', '--password', 'password123');
  const taken = await admin('user:create', '--app', String(application.id), '--login', 'cli-taken', '--password', 'password123');
  expect([taken.code, taken.stdout]).toEqual([1, '']);
  expect(taken.stderr).toMatch(/login, email or external user id is already taken in this application/);
  const noApp = await admin('user:create', '--app', '999999', '--login', 'cli-orphan', '--password', 'password123');
  expect([noApp.code, noApp.stdout]).toEqual([1, '']);
  expect(noApp.stderr).toMatch(/application 999999 does not exist/);
});
