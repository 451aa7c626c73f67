// The credential cache and the batched session writes (src/services/auth.ts):
// what they save, and the limits of what they change.
import { prismaOf } from '../../src/provisioning/client';
import { hashSecret } from '../../src/services/secrets';
import { type TestService, useService } from '../support/service';
import { seedTenant } from '../support/seed';

// Far longer than any test here: a request after another is served from the cache however slow the
// machine (at 300 ms, then 2 s, the second request missed the window now and then on a loaded one).
const service = useService({ auth: { cacheMs: 600_000, flushMs: 60_000 } });
/** The window of the instance that shows a cache entry running out: short enough to wait out. */
const SHORT_CACHE_MS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// Without a socket (inject): what is measured is the app's statements and the cache's window.
const lookupOn = async (on: Pick<TestService, 'inject'>, headers: Record<string, string>) => ({
  status: (await on.inject({ method: 'GET', url: '/users/external/102.json', headers })).statusCode,
});
const lookup = (headers: Record<string, string>) => lookupOn(service, headers);

async function statementsOf(request: () => Promise<{ status: number }>): Promise<{ status: number; statements: number }> {
  const before = service.db.statementCount();
  const response = await request();
  return { status: response.status, statements: service.db.statementCount() - before };
}

test('a lookup costs two statements with fresh credentials and one while they are cached', async () => {
  const t = await seedTenant(service.app.provisioning);
  expect(await statementsOf(() => lookup(t.as.owner))).toEqual({ status: 200, statements: 2 });
  expect(await statementsOf(() => lookup(t.as.owner))).toEqual({ status: 200, statements: 1 });
  expect(await statementsOf(() => lookup(t.as.apiKey))).toEqual({ status: 200, statements: 2 });
  expect(await statementsOf(() => lookup(t.as.apiKey))).toEqual({ status: 200, statements: 1 });
});

test('a check that a revocation overtakes is answered but not cached: the next request asks the database again', async () => {
  const t = await seedTenant(service.app.provisioning);
  const auth = service.app.services.auth;
  const checking = auth.authenticate({ token: t.ownerToken });
  // Arrives while the check's statement is in flight: the answer read may predate what it revokes (here, another session).
  auth.forgetLocally(hashSecret(t.memberToken));
  await checking;
  expect(await statementsOf(() => lookup(t.as.owner))).toEqual({ status: 200, statements: 2 });
  expect(await statementsOf(() => lookup(t.as.owner))).toEqual({ status: 200, statements: 1 });
});

test('batched touches reach the database in one statement, with each request’s own time', async () => {
  const t = await seedTenant(service.app.provisioning);
  await lookup(t.as.owner);
  await lookup(t.as.member);
  await sleep(20);
  const started = Date.now();
  await lookup(t.as.owner);
  await lookup(t.as.member);
  const before = service.db.statementCount();
  await service.app.services.auth.flush();
  expect(service.db.statementCount() - before).toBe(1);
  const users = await prismaOf(service.db).user.findMany({ where: { id: { in: [t.owner.id, t.member.id] } } });
  for (const user of users) expect(user.lastRequestAt!.getTime()).toBeGreaterThanOrEqual(started);
  const session = await prismaOf(service.db).session.findUniqueOrThrow({ where: { tokenHash: hashSecret(t.ownerToken) } });
  expect(session.expiresAt.getTime()).toBeGreaterThanOrEqual(started + 2 * 60 * 60 * 1000);
});

test('a late batched write neither brings back a session that expired meanwhile nor moves anything backwards', async () => {
  const t = await seedTenant(service.app.provisioning);
  await lookup(t.as.owner);
  await lookup(t.as.owner); // cached: its touch waits for the flush
  const expired = new Date(Date.now() - 1_000);
  await prismaOf(service.db).session.update({ where: { tokenHash: hashSecret(t.ownerToken) }, data: { expiresAt: expired } });
  const stamped = (await prismaOf(service.db).user.findUniqueOrThrow({ where: { id: t.owner.id } })).lastRequestAt!;
  await service.app.services.auth.flush();
  const session = await prismaOf(service.db).session.findUniqueOrThrow({ where: { tokenHash: hashSecret(t.ownerToken) } });
  expect(session.expiresAt.toISOString()).toBe(expired.toISOString());
  expect((await prismaOf(service.db).user.findUniqueOrThrow({ where: { id: t.owner.id } })).lastRequestAt).toEqual(stamped);
});

test('a session removed from the database is honoured while its cache entry lasts, and refused once it has run out', async () => {
  const t = await seedTenant(service.app.provisioning);
  const short = await service.start({ auth: { cacheMs: SHORT_CACHE_MS, flushMs: 60_000 } });
  expect((await lookup(t.as.owner)).status).toBe(200);
  expect((await lookupOn(short, t.as.owner)).status).toBe(200);
  // The short instance's entry was made before this moment: it has run out SHORT_CACHE_MS after it, at the latest.
  const cachedBy = Date.now();
  await prismaOf(service.db).session.delete({ where: { tokenHash: hashSecret(t.ownerToken) } });
  // Within its entry's life (this test cannot outlast the file's window), the cache answers.
  expect((await lookup(t.as.owner)).status).toBe(200);
  await sleep(Math.max(0, cachedBy + SHORT_CACHE_MS + 50 - Date.now()));
  expect((await lookupOn(short, t.as.owner)).status).toBe(401);
  // Refusals are not cached: nothing to wait for once a session exists again.
  expect((await lookup({ 'SVC-Token': 'never-issued' })).status).toBe(401);
});
