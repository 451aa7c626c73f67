// Issue 31, item 7: `POST /login.json` with `"login": ""` beside an email
// answered 422 (an SDK sending an empty login field failed), and logins and
// passwords were compared without Unicode normalisation: the NFD spelling of
// `josé`, or of a password with `ä`, was refused. Now an empty login beside
// an email is absent; logins and passwords are NFC on write and on check, and
// rows written before (NFD hashes, NFD logins: the migration nfc_logins)
// still work.
import { hashPassword } from '../../src/services/secrets';
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';

const service = useService({});

const NFC_LOGIN = 'jos\u00e9';
const NFD_LOGIN = 'jose\u0301';
const NFC_PASSWORD = 'p\u00e4sswort-123';
const NFD_PASSWORD = 'pa\u0308sswort-123';

const login = (t: Tenant, body: Record<string, string>) => service.rest('POST', '/login.json', { headers: t.as.app, body });

test('an empty login beside an email is treated as absent: the email logs in', async () => {
  const t = await seedTenant(service.app.provisioning);
  const res = await login(t, { login: '', email: t.owner.email!, password: 'password123' });
  expect(res.status).toBe(200);
  expect(res.body.user.id).toBe(t.owner.id);
  // Neither: still the documented 422.
  expect((await login(t, { login: '', email: '', password: 'password123' })).status).toBe(422);
});

test('a user created with an NFC login and password logs in with their NFD spellings, and the other way round', async () => {
  const t = await seedTenant(service.app.provisioning);
  const nfc = await service.app.provisioning.users.create({ applicationId: t.applicationId, login: NFC_LOGIN, password: NFC_PASSWORD, externalUserId: 501 });
  const res = await login(t, { login: NFD_LOGIN, password: NFD_PASSWORD });
  expect([res.status, res.body.user?.id]).toEqual([200, nfc.id]);
  expect((await login(t, { login: NFC_LOGIN, password: NFC_PASSWORD })).body.user.id).toBe(nfc.id);

  const other = await seedTenant(service.app.provisioning);
  const nfd = await service.app.provisioning.users.create({
    applicationId: other.applicationId,
    login: NFD_LOGIN,
    password: NFD_PASSWORD,
    externalUserId: 502,
  });
  // Stored in NFC.
  expect(nfd.login).toBe(NFC_LOGIN);
  expect((await login(other, { login: NFC_LOGIN, password: NFC_PASSWORD })).body.user.id).toBe(nfd.id);
  // One user per spelling: the NFD one is the NFC one, already taken.
  await expect(
    service.app.provisioning.users.create({ applicationId: other.applicationId, login: NFC_LOGIN, password: 'x-password-1', externalUserId: 503 }),
  ).rejects.toThrow(/already taken/);
  // A wrong password is still wrong in either spelling.
  expect((await login(other, { login: NFD_LOGIN, password: 'pa\u0308sswort-124' })).status).toBe(401);
});

test('a password hashed before as its client sent it (NFD) still logs in, by either spelling', async () => {
  const t = await seedTenant(service.app.provisioning);
  // A row as the service wrote it before issue 31: the NFD text hashed as it was (hashPassword now hashes NFC).
  expect(hashPassword(NFD_PASSWORD)).toMatch(/^scrypt\$/);
  const { scryptSync, randomBytes } = await import('node:crypto');
  const salt = randomBytes(16);
  const stored = `scrypt$${salt.toString('base64url')}$${scryptSync(NFD_PASSWORD, salt, 32).toString('base64url')}`;
  await service.db.pool.query('UPDATE users SET password_hash = $1 WHERE id = $2', [stored, t.member.id]);
  expect((await login(t, { login: 'member', password: NFD_PASSWORD })).body.user.id).toBe(t.member.id);
  expect((await login(t, { login: 'member', password: NFC_PASSWORD })).body.user.id).toBe(t.member.id);
});

test('the migration rewrites NFD logins to NFC, and leaves one whose NFC spelling is taken', async () => {
  const t = await seedTenant(service.app.provisioning);
  const a = await service.app.provisioning.users.create({ applicationId: t.applicationId, login: 'anna-nfd', password: 'password123', externalUserId: 601 });
  const b = await service.app.provisioning.users.create({ applicationId: t.applicationId, login: 'taken-nfd', password: 'password123', externalUserId: 602 });
  await service.app.provisioning.users.create({ applicationId: t.applicationId, login: 'ren\u00e9', password: 'password123', externalUserId: 603 });
  // As rows written before: NFD logins.
  await service.db.pool.query('UPDATE users SET login = $1 WHERE id = $2', ['a\u0308nna', a.id]);
  await service.db.pool.query('UPDATE users SET login = $1 WHERE id = $2', ['rene\u0301', b.id]);
  const { readFileSync, readdirSync } = await import('node:fs');
  const folder = readdirSync('prisma/migrations').find((name) => name.endsWith('_nfc_logins'))!;
  await service.db.pool.query(readFileSync(`prisma/migrations/${folder}/migration.sql`, 'utf8'));
  const { rows } = await service.db.pool.query<{ id: number; login: string }>('SELECT id, login FROM users WHERE id = ANY($1) ORDER BY id', [[a.id, b.id]]);
  expect(rows).toEqual([
    { id: a.id, login: '\u00e4nna' },
    { id: b.id, login: 'rene\u0301' },
  ]);
  expect((await login(t, { login: 'a\u0308nna', password: 'password123' })).body.user.id).toBe(a.id);
});
