// The admin commands an operator runs a deployment with (issue 35): the
// migration job's `migrate` and `migrate:status`, `--version`, listing
// applications and sessions, ending sessions and disabling applications at
// once — the running service's cache included. Run as the image runs them: `node dist/cli/admin.js`.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { ADMIN_CLI } from '../../scripts/lib/compiled';
import { readMigrations } from '../../src/db/migrate';
import { startService } from '../support/service';

const exec = promisify(execFile);
const serverUrl = process.env.TEST_RUN_DATABASE_URL;
const work = mkdtempSync(path.join(tmpdir(), 'admin-ops-'));
const SECRETS_KEY = 'b'.repeat(64);

jest.setTimeout(300_000);

/** A database of this file's own: a fresh one on the run's server, else an embedded folder. */
let url: string | undefined;
let dropDatabase: (() => Promise<void>) | undefined;
beforeAll(async () => {
  if (!serverUrl) return;
  const name = `admin_ops_${process.pid}_${Date.now()}`;
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const parsed = new URL(serverUrl);
  parsed.pathname = `/${name}`;
  url = parsed.toString();
  dropDatabase = async () => {
    const c = new Client({ connectionString: serverUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  };
});
afterAll(async () => {
  await dropDatabase?.();
  rmSync(work, { recursive: true, force: true });
});

async function admin(settings: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', PGLITE_DIR: path.join(work, 'db'), SECRETS_KEY, ...settings };
  if (url) env.DATABASE_URL = url;
  else delete env.DATABASE_URL;
  try {
    const { stdout, stderr } = await exec(process.execPath, [ADMIN_CLI, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function json(...args: string[]): Promise<any> {
  const result = await admin({}, ...args);
  expect(result).toMatchObject({ code: 0, stderr: '' });
  return JSON.parse(result.stdout);
}

test('--version prints the build as one JSON object', async () => {
  const result = await admin({}, '--version');
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+$/), revision: expect.any(String), node: process.version });
});

test('migrate:status reports pending migrations (exit 3), migrate applies them once, a second migrate applies none', async () => {
  const names = readMigrations().map((m) => m.name);
  // As the migration job runs: instances (and this CLI) do not migrate on their own.
  const off = { MIGRATE_ON_START: 'false' };
  const before = await admin(off, 'migrate:status');
  expect(before.code).toBe(3);
  expect(JSON.parse(before.stdout)).toEqual({ applied: [], pending: names });
  const [first, second] = await Promise.all([admin(off, 'migrate'), url ? admin(off, 'migrate') : Promise.resolve(undefined)]);
  expect(first.code).toBe(0);
  // Two jobs at once (on a server): the advisory lock lets one apply each migration, the other waits and finds it done.
  const appliedByBoth = [...JSON.parse(first.stdout).applied, ...(second ? JSON.parse(second.stdout).applied : [])];
  expect(appliedByBoth.sort()).toEqual(names);
  const after = await admin(off, 'migrate:status');
  expect(after.code).toBe(0);
  expect(JSON.parse(after.stdout)).toEqual({ applied: names, pending: [] });
  expect(JSON.parse((await admin(off, 'migrate')).stdout)).toEqual({ applied: [], pending: [] });
});

test('apps:list and sessions:list show ids and counts, never a key, secret, token or hash; session:revoke ends sessions on the running service at once', async () => {
  const created = await json('app:create', '--name', 'ops app');
  const app = String(created.application.id);
  const { user } = await json('user:create', '--app', app, '--login', 'ops-user', '--password', 'password123', '--external-user-id', '7');
  const first = (await json('session:create', '--app', app, '--user', String(user.id))).token as string;
  const second = (await json('session:create', '--app', app, '--user', String(user.id))).token as string;

  const { applications } = await json('apps:list');
  const listed = applications.find((a: { id: number }) => a.id === created.application.id);
  expect(listed).toEqual({
    id: created.application.id,
    name: 'ops app',
    phoneRegion: null,
    createdAt: expect.any(String),
    disabledAt: null,
    users: 1,
    liveSessions: 2,
  });
  const { sessions } = await json('sessions:list', '--user', String(user.id));
  expect(sessions).toHaveLength(2);
  expect(Object.keys(sessions[0]).sort()).toEqual(['applicationId', 'createdAt', 'expiresAt', 'id', 'userId']);
  const everything = JSON.stringify([applications, sessions]);
  for (const secret of [created.apiKey, created.authSecret, first, second]) expect(everything).not.toContain(secret);

  // The service runs beside the CLI only on a server (the embedded database belongs to one process).
  const service = url ? await startService({ database: { url, migrate: false }, revocation: true }) : undefined;
  try {
    const lookup = async (token: string) => (await service!.rest('GET', '/users/external/7.json', { headers: { 'SVC-Token': token } })).status;
    if (service) expect([await lookup(first), await lookup(second)]).toEqual([200, 200]);
    // The newest first: the second session was used last (created last).
    const byId = await json(
      'session:revoke',
      '--id',
      String(sessions.find((s: { id: number }) => s.id === Math.min(...sessions.map((x: { id: number }) => x.id))).id),
    );
    expect(byId).toEqual({ sessionsEnded: 1, instancesTold: url ? 'postgres' : 'none' });
    if (service) {
      // Cached for 5 s by the service, dropped at once through the revocation bus (NOTIFY).
      let status = 200;
      for (let i = 0; i < 50 && status === 200; i++) {
        status = await lookup(first);
        if (status === 200) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect([status, await lookup(second)]).toEqual([401, 200]);
    }
    expect((await json('session:revoke', '--user', String(user.id))).sessionsEnded).toBe(1);
    expect((await json('sessions:list', '--app', app)).sessions).toEqual([]);
    const usage = await admin({}, 'session:revoke', '--user', String(user.id), '--app', app);
    expect(usage.code).toBe(1);
    expect(usage.stderr).toMatch(/exactly one of --id, --user, --app/);
  } finally {
    await service?.close();
  }
});

test('app:disable refuses an application on the running service at once and keeps everything; app:enable gives it back', async () => {
  const created = await json('app:create', '--name', 'disabled app');
  const app = String(created.application.id);
  const { user } = await json('user:create', '--app', app, '--login', 'd-user', '--password', 'password123', '--external-user-id', '8');
  const { token } = await json('session:create', '--app', app, '--user', String(user.id));
  const service = url ? await startService({ database: { url, migrate: false }, revocation: true }) : undefined;
  try {
    const lookups = async () =>
      Promise.all(
        ([{ 'SVC-Token': token as string }, { Authorization: `ApiKey ${created.apiKey}` }] as Record<string, string>[]).map(
          async (headers: Record<string, string>) => (await service!.rest('GET', '/users/external/8.json', { headers })).status,
        ),
      );
    // Twice: both cached by the service (5 s).
    if (service) for (let i = 0; i < 2; i++) expect(await lookups()).toEqual([200, 200]);

    const disabled = await json('apps:disable', '--app', app);
    expect(disabled).toEqual({ application: { id: created.application.id, disabledAt: expect.any(String) }, instancesTold: url ? 'postgres' : 'none' });
    if (service) {
      // Dropped from the service's cache through the revocation bus (NOTIFY), not after 5 s.
      let statuses = await lookups();
      for (let i = 0; i < 50 && statuses.includes(200); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        statuses = await lookups();
      }
      expect(statuses).toEqual([403, 403]);
    }
    const listed = (await json('apps:list')).applications.find((a: { id: number }) => a.id === created.application.id);
    // Nothing deleted: the user and the live session are still there.
    expect(listed).toMatchObject({ disabledAt: disabled.application.disabledAt, users: 1, liveSessions: 1 });
    const refused = await admin({}, 'session:create', '--app', app, '--user', String(user.id));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`application ${app} is disabled`);

    expect(await json('app:enable', '--app', app)).toEqual({ application: { id: created.application.id, disabledAt: null } });
    // The service caches no refusal: the same token and key work at once.
    if (service) expect(await lookups()).toEqual([200, 200]);
    const unknown = await admin({}, 'app:disable', '--app', '2000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('application 2000000000 does not exist');
  } finally {
    await service?.close();
  }
});
