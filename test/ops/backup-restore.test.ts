// The backup and restore procedure of docs/operation.md ("Backup and
// restore"), run: a database with a tenant, its users, an address book and
// sessions is backed up, restored into a fresh database, and a service over
// the copy with the same SECRETS_KEY answers exactly as before — lookups,
// registered users, a session token, and a signed session request, whose
// auth secret is sealed under SECRETS_KEY (with another key it cannot be
// checked: the key is part of the backup).
//
// On a server (TEST_DATABASE_URL): `pg_dump --format=custom` and `pg_restore`
// into a new database. Embedded: the service stopped, its folder copied
// (with secrets.key beside it), a service started on the copy.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { newSecretsKey } from '../../src/services/secrets';
import { seedTenant, type Tenant } from '../support/seed';
import { startService, type TestService } from '../support/service';
import { restForm, signedSessionRequest } from '../support/sessions';
import { needServer, requires } from '../support/requires';

jest.setTimeout(180_000);

const serverUrl = process.env.TEST_RUN_DATABASE_URL;
const work = mkdtempSync(path.join(tmpdir(), 'backup-restore-'));
const created: string[] = [];
afterAll(async () => {
  if (serverUrl && created.length > 0) {
    const client = new Client({ connectionString: serverUrl });
    await client.connect();
    for (const name of created) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  }
  rmSync(work, { recursive: true, force: true });
});

/** A new empty database on the run's server; its URL. */
async function newDatabase(label: string): Promise<string> {
  const name = `backup_${label}_${process.pid}_${Date.now()}`;
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  created.push(name);
  const url = new URL(serverUrl!);
  url.pathname = `/${name}`;
  return url.toString();
}

/** `last_request_at` moves with every request, these included: not what a restore is judged by. */
const withoutTouches = (value: unknown): unknown => JSON.parse(JSON.stringify(value), (key, v: unknown) => (key === 'last_request_at' ? undefined : v));

/** What the service answers about the tenant: the answers a restore must keep. */
async function answers(service: TestService, t: Tenant): Promise<unknown> {
  const lookup = await service.rest('GET', '/users/external/101.json', { headers: t.as.apiKey });
  const registered = await service.rest('GET', '/address_book/registered_users.json', { headers: { 'SVC-Token': t.ownerToken } });
  const book = await service.rest('GET', '/address_book.json', { headers: { 'SVC-Token': t.ownerToken } });
  const graphql = await service.graphql('{ userByExternalId(externalUserId: 102) { id login fullName phone } }', undefined, t.as.apiKey);
  const history = await service.rest('GET', '/session.json', { headers: { 'SVC-Token': t.memberToken } });
  const signed = await service.rest('POST', '/session.json', { body: restForm(signedSessionRequest(t, { login: t.owner.login, password: 'password123' })) });
  return withoutTouches({
    lookup: [lookup.status, lookup.body],
    registered: [registered.status, registered.body],
    book: [book.status, book.body],
    graphql: [graphql.status, graphql.body],
    session: [history.status, history.body?.session?.user_id],
    // A new session each time: its status and user, not its token.
    signed: [signed.status, signed.body?.session?.user_id],
  });
}

async function seed(service: TestService): Promise<Tenant> {
  const t = await seedTenant(service.app.provisioning);
  const upload = await service.rest('POST', '/address_book.json', {
    headers: { 'SVC-Token': t.ownerToken },
    body: {
      contacts: [
        { name: 'Member', phone: t.member.phone },
        { name: 'Someone', phone: '+15550001111' },
      ],
    },
  });
  expect(upload.status).toBe(200);
  return t;
}

// pg_dump needs a server (skipped on the embedded run, as docs/development.md lists); the embedded
// database's folder is the test's own, whatever the run's database, so that test runs in both.
const onServer = requires(needServer).test;

onServer('pg_dump of the database, restored into a fresh one, answers as before with the same SECRETS_KEY', async () => {
  const secretsKey = newSecretsKey();
  const source = await newDatabase('source');
  const original = await startService({ database: { url: source, migrate: true }, secretsKey });
  let t: Tenant;
  let before: unknown;
  try {
    t = await seed(original);
    before = await answers(original, t);
  } finally {
    await original.close();
  }
  expect((before as { signed: unknown[] }).signed[0]).toBe(201);

  // The procedure (docs/operation.md): a consistent snapshot, then a restore into a new database.
  const dump = path.join(work, 'chat.dump');
  execFileSync('pg_dump', ['--format=custom', '--no-owner', '--file', dump, source]);
  const target = await newDatabase('restored');
  execFileSync('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', target, dump]);

  const restored = await startService({ database: { url: target, migrate: true }, secretsKey });
  try {
    expect(restored.db.applied).toEqual([]);
    expect(await answers(restored, t)).toEqual(before);
  } finally {
    await restored.close();
  }
  // Without its SECRETS_KEY the copy cannot check a signature (500, the log names the key).
  const keyless = await startService({ database: { url: target, migrate: false }, secretsKey: newSecretsKey() });
  try {
    const signed = await keyless.rest('POST', '/session.json', { body: restForm(signedSessionRequest(t, { login: t.owner.login, password: 'password123' })) });
    expect(signed.status).toBe(500);
  } finally {
    await keyless.close();
  }
});

test("the embedded database's folder, copied while the service is stopped, answers as before", async () => {
  const secretsKey = newSecretsKey();
  const folder = path.join(work, 'pglite');
  const original = await startService({ database: { dataDir: folder, migrate: true }, secretsKey });
  let t: Tenant;
  let before: unknown;
  try {
    t = await seed(original);
    before = await answers(original, t);
  } finally {
    // Stopped first: one process owns the folder, and a copy of a running database may be torn.
    await original.close();
  }
  const copy = path.join(work, 'pglite-restored');
  cpSync(folder, copy, { recursive: true });
  rmSync(folder, { recursive: true, force: true });
  const restored = await startService({ database: { dataDir: copy, migrate: true }, secretsKey });
  try {
    expect(restored.db.applied).toEqual([]);
    expect(await answers(restored, t)).toEqual(before);
  } finally {
    await restored.close();
  }
});
