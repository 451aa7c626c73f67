// The credential cache and the batched session writes (src/services/auth.ts):
// what they save, and the limits of what they change.
import type { AddressInfo } from 'node:net';
import { type App, createApp } from '../../src/app';
import type { Database } from '../../src/db';
import { hashSecret } from '../../src/services/secrets';
import { openTestDatabase } from '../support/service';
import { seedTenant } from '../support/seed';

// Long enough that two back-to-back requests fall within it on a loaded 2-core machine
// (at 300 ms the second one missed it there); short enough to wait out.
const CACHE_MS = 2_000;
let database: Database;
let app: App;
let base: string;

beforeAll(async () => {
  database = await openTestDatabase();
  app = await createApp({ database, auth: { cacheMs: CACHE_MS, flushMs: 60_000 } });
  await app.fastify.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.fastify.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await app.close();
  await database.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const lookup = (headers: Record<string, string>) => fetch(`${base}/users/external/102.json`, { headers });

async function statementsOf(request: () => Promise<Response>): Promise<{ status: number; statements: number }> {
  const before = database.statementCount();
  const response = await request();
  await response.text();
  return { status: response.status, statements: database.statementCount() - before };
}

test('a lookup costs two statements with fresh credentials and one while they are cached', async () => {
  const t = await seedTenant(app.services);
  expect(await statementsOf(() => lookup(t.as.owner))).toEqual({ status: 200, statements: 2 });
  expect(await statementsOf(() => lookup(t.as.owner))).toEqual({ status: 200, statements: 1 });
  expect(await statementsOf(() => lookup(t.as.apiKey))).toEqual({ status: 200, statements: 2 });
  expect(await statementsOf(() => lookup(t.as.apiKey))).toEqual({ status: 200, statements: 1 });
});

test('batched touches reach the database in one statement, with each request’s own time', async () => {
  const t = await seedTenant(app.services);
  await lookup(t.as.owner);
  await lookup(t.as.member);
  await sleep(20);
  const started = Date.now();
  await lookup(t.as.owner);
  await lookup(t.as.member);
  const before = database.statementCount();
  await app.services.auth.flush();
  expect(database.statementCount() - before).toBe(1);
  const users = await database.prisma.user.findMany({ where: { id: { in: [t.owner.id, t.member.id] } } });
  for (const user of users) expect(user.lastRequestAt!.getTime()).toBeGreaterThanOrEqual(started);
  const session = await database.prisma.session.findUniqueOrThrow({ where: { tokenHash: hashSecret(t.ownerToken) } });
  expect(session.expiresAt.getTime()).toBeGreaterThanOrEqual(started + 2 * 60 * 60 * 1000);
});

test('a late batched write neither brings back a session that expired meanwhile nor moves anything backwards', async () => {
  const t = await seedTenant(app.services);
  await lookup(t.as.owner);
  await lookup(t.as.owner); // cached: its touch waits for the flush
  const expired = new Date(Date.now() - 1_000);
  await database.prisma.session.update({ where: { tokenHash: hashSecret(t.ownerToken) }, data: { expiresAt: expired } });
  const stamped = (await database.prisma.user.findUniqueOrThrow({ where: { id: t.owner.id } })).lastRequestAt!;
  await app.services.auth.flush();
  const session = await database.prisma.session.findUniqueOrThrow({ where: { tokenHash: hashSecret(t.ownerToken) } });
  expect(session.expiresAt.toISOString()).toBe(expired.toISOString());
  expect((await database.prisma.user.findUniqueOrThrow({ where: { id: t.owner.id } })).lastRequestAt).toEqual(stamped);
});

test('a session removed from the database is honoured at most for the cache window, then refused', async () => {
  const t = await seedTenant(app.services);
  expect((await lookup(t.as.owner)).status).toBe(200);
  await database.prisma.session.delete({ where: { tokenHash: hashSecret(t.ownerToken) } });
  const removedAt = Date.now();
  const during = await lookup(t.as.owner);
  if (Date.now() - removedAt < CACHE_MS) expect(during.status).toBe(200);
  await sleep(CACHE_MS + 50);
  expect((await lookup(t.as.owner)).status).toBe(401);
  // Refusals are not cached: nothing to wait for once a session exists again.
  expect((await lookup({ 'SVC-Token': 'never-issued' })).status).toBe(401);
});
