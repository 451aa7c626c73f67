// One session token, many requests at once (REST and GraphQL), with the
// credential cache on (the default: 5 s, touches flushed each second) and off
// (`auth: { cacheMs: 0 }`: every request writes its touch itself).
//
// The README's promises under test (Decisions, Sessions): each request slides
// the expiry and sets the user's last_request_at "with each request's own
// time"; "a late write never revives an expired session nor moves a time
// backwards"; a session removed from the database is honoured at most
// `cacheMs` longer. So, after a burst: the session exists, its expiry is the
// latest request's time + 2 h and last_request_at the latest request's time
// (bounded by when the client sent and read the requests: the service runs in
// this process, on the same clock), and no write in between ever moved either
// backwards (database triggers record every such write, see BackwardsWatch).
// And a session expired (or deleted) in the database mid-burst: every request
// sent cacheMs after that is refused with 401, and the late batched touches do
// not bring it back.
import type { App } from '../../src/app';
import type { Database } from '../../src/db';
import { prismaOf } from '../../src/provisioning/client';
import type { AuthOptions } from '../../src/services/auth';
import { SESSION_TTL_SECONDS } from '../../src/services/auth';
import { hashSecret } from '../../src/services/secrets';
import { BackwardsWatch, countBy, runConcurrently, sleep, type Timed, timed } from '../support/concurrency';
import { percentile } from '../../scripts/lib/percentile';
import { LONG, recordFigures } from '../support/figures';
import { seedTenant, type Tenant } from '../support/seed';
import { fetchResult, type HttpResult, openTestDatabase, startService, usingServer } from '../support/service';

// Bursts on a loaded CI machine (2 cores shared by two jest workers) can outlast jest's 60 s default.
jest.setTimeout(LONG ? 900_000 : 180_000);

const TTL_MS = SESSION_TTL_SECONDS * 1000;
const CONCURRENCY = usingServer() ? 32 : 12;

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database.close();
});

/** An app over the file's database with these auth settings, listening on a free port. */
async function startApp(auth: AuthOptions): Promise<{ app: App; base: string }> {
  // The test closes the app itself (mid-test, to flush), and the file's database after its last test.
  const { app, baseUrl } = await startService({ database, auth });
  return { app, base: baseUrl };
}

type Via = 'rest lookup' | 'rest registered users' | 'graphql lookup' | 'graphql registered users';
const VIAS: Via[] = ['rest lookup', 'rest registered users', 'graphql lookup', 'graphql registered users'];

/** A request with the token, and whether it answered as authenticated (200 with data) or as 401 in the route's documented shape. */
async function request(base: string, token: string, via: Via): Promise<{ outcome: '200' | '401' | 'unexpected'; res: HttpResult }> {
  const headers = { 'SVC-Token': token };
  let res: HttpResult;
  if (via.startsWith('graphql')) {
    const query = via === 'graphql lookup' ? '{ userByExternalId(externalUserId: 102) { id } }' : '{ registeredUsers { id } }';
    res = await fetchResult(`${base}/graphql`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    const errors = res.body?.errors;
    if (res.status === 200 && res.body?.data && !errors) return { outcome: '200', res };
    if (
      res.status === 200 &&
      errors?.length === 1 &&
      errors[0].extensions?.code === 'UNAUTHENTICATED' &&
      errors[0].message === 'Required session does not exist'
    ) {
      return { outcome: '401', res };
    }
    return { outcome: 'unexpected', res };
  }
  const lookup = via === 'rest lookup';
  res = await fetchResult(`${base}${lookup ? '/users/external/102.json' : '/address_book/registered_users.json'}`, { headers });
  if (res.status === 200) return { outcome: '200', res };
  const refused = lookup ? { errors: { base: ['Required session does not exist'] } } : { errors: ['Required session does not exist'] };
  if (res.status === 401 && JSON.stringify(res.body) === JSON.stringify(refused)) return { outcome: '401', res };
  return { outcome: 'unexpected', res };
}

async function sessionRow(token: string): Promise<{ expiresAt: Date } | null> {
  return prismaOf(database).session.findUnique({ where: { tokenHash: hashSecret(token) }, select: { expiresAt: true } });
}
const lastRequestAt = async (t: Tenant): Promise<Date | null> =>
  (await prismaOf(database).user.findUniqueOrThrow({ where: { id: t.owner.id }, select: { lastRequestAt: true } })).lastRequestAt;

describe.each([
  ['the credential cache on (default)', {}],
  ['the credential cache off', { cacheMs: 0 }],
] as [string, AuthOptions][])('many concurrent requests with one session token, %s', (label, auth) => {
  test('leave the session alive, its expiry and last_request_at at the latest request, never moved backwards', async () => {
    const REQUESTS = LONG ? 3000 : 200;
    const { app, base } = await startApp(auth);
    let closed = false;
    const t = await seedTenant(app.provisioning);
    // Register a contact, so registered users does some work too.
    await database.pool.query(`INSERT INTO contacts (user_id, udid, phone, name) VALUES ($1, '', $2, 'member')`, [t.owner.id, t.member.phone]);
    const before = (await sessionRow(t.ownerToken))!;
    const watch = await BackwardsWatch.start(database.pool, [hashSecret(t.ownerToken)], [t.owner.id]);
    try {
      const calls: Timed<{ outcome: string; res: HttpResult }>[] = await runConcurrently(
        Array.from({ length: REQUESTS }, (_, i) => () => timed(() => request(base, t.ownerToken, VIAS[i % VIAS.length]!))),
        CONCURRENCY,
      );
      // Closing the app writes the touches still pending (the batched flush).
      await app.close();
      closed = true;

      const unexpected = calls.filter((c) => c.result.outcome !== '200').map((c) => `${c.result.res.status} ${c.result.res.text.slice(0, 200)}`);
      expect(unexpected).toEqual([]);
      const latestSent = Math.max(...calls.map((c) => c.startedAt));
      const latestAnswered = Math.max(...calls.map((c) => c.endedAt));

      const after = await sessionRow(t.ownerToken);
      expect(after).not.toBeNull();
      const expiresAt = after!.expiresAt.getTime();
      const stamped = (await lastRequestAt(t))!.getTime();
      const moves = await watch.moves();

      const durations = calls.map((c) => c.endedAt - c.startedAt);
      recordFigures(`concurrency-sessions-burst-${auth.cacheMs === 0 ? 'uncached' : 'cached'}`, {
        settings: label,
        requests: calls.length,
        concurrency: CONCURRENCY,
        byVia: countBy(
          calls.map((_, i) => VIAS[i % VIAS.length]!),
          (v) => v,
        ),
        byOutcome: countBy(calls, (c) => c.result.outcome),
        expiryMinusLatestSentMs: expiresAt - TTL_MS - latestSent,
        lastRequestAtMinusLatestSentMs: stamped - latestSent,
        /** Writes that moved the expiry or last_request_at backwards (must be 0). */
        backwardsWrites: moves.length,
        requestMs: { p50: percentile(durations, 50), p95: percentile(durations, 95), max: percentile(durations, 100) },
      });

      // The latest request's own time lies between the moment the client sent it and the last answer.
      expect(expiresAt - TTL_MS).toBeGreaterThanOrEqual(latestSent);
      expect(expiresAt - TTL_MS).toBeLessThanOrEqual(latestAnswered);
      expect(stamped).toBeGreaterThanOrEqual(latestSent);
      expect(stamped).toBeLessThanOrEqual(latestAnswered);
      expect(expiresAt).toBeGreaterThan(before.expiresAt.getTime());
      // No write, at any point of the burst, moved the expiry or last_request_at backwards.
      expect(moves).toEqual([]);
    } finally {
      if (!closed) await app.close();
      await watch.close();
    }
  });
});

describe.each([
  ['expired', 'a 200 ms credential cache', { cacheMs: 200, flushMs: 50 }],
  ['deleted', 'a 200 ms credential cache', { cacheMs: 200, flushMs: 50 }],
  ['expired', 'no credential cache', { cacheMs: 0 }],
] as ['expired' | 'deleted', string, AuthOptions][])('a session %s in the database while requests run, with %s', (how, label, auth) => {
  test('every request sent after the cache window is refused, and late touches do not revive the session', async () => {
    const cacheMs = auth.cacheMs ?? 0;
    const { app, base } = await startApp(auth);
    let closed = false;
    try {
      const t = await seedTenant(app.provisioning);
      const hash = hashSecret(t.ownerToken);
      const calls: (Timed<{ outcome: string; res: HttpResult }> & { via: Via })[] = [];
      let stop = false;
      const workers = Array.from({ length: CONCURRENCY }, async (_, w) => {
        for (let i = 0; !stop; i++) {
          const via = VIAS[(w + i) % VIAS.length]!;
          calls.push({ via, ...(await timed(() => request(base, t.ownerToken, via))) });
        }
      });
      // Traffic first, so the cache holds the session and touches are pending when it goes.
      await sleep(300);
      const expiringAt = Date.now();
      let pastExpiry: Date | null = null;
      if (how === 'expired') {
        const { rows } = await database.pool.query<{ expires_at: Date }>(
          `UPDATE sessions SET expires_at = date_trunc('milliseconds', now()) - interval '1 hour' WHERE token_hash = $1 RETURNING expires_at`,
          [hash],
        );
        pastExpiry = rows[0]!.expires_at;
      } else {
        await database.pool.query('DELETE FROM sessions WHERE token_hash = $1', [hash]);
      }
      // Committed by now: cached entries were all checked before this moment.
      const goneAt = Date.now();
      // Keep going well past the window (a loaded machine answers slowly), with flushes (every 50 ms)
      // landing after the expiry.
      await sleep(cacheMs + 1_000);
      stop = true;
      await Promise.all(workers);
      await app.close();
      closed = true;

      const unexpected = calls
        .filter((c) => c.result.outcome === 'unexpected')
        .map((c) => `${c.via}: ${c.result.res.status} ${c.result.res.text.slice(0, 200)}`);
      expect(unexpected).toEqual([]);
      // Honoured only within the window: a request sent cacheMs after the session went is refused.
      const lateSuccesses = calls.filter((c) => c.result.outcome === '200' && c.startedAt >= goneAt + cacheMs);
      expect(lateSuccesses.map((c) => `${c.via} sent ${c.startedAt - goneAt} ms after`)).toEqual([]);
      const afterWindow = calls.filter((c) => c.startedAt >= goneAt + cacheMs);
      expect(afterWindow.length).toBeGreaterThan(0);
      // Every request answered before the session went was served.
      expect(calls.filter((c) => c.endedAt < expiringAt && c.result.outcome !== '200').length).toBe(0);

      // The batched touches (flushed every 50 ms and on close) neither revived nor re-created it.
      const row = await sessionRow(t.ownerToken);
      if (how === 'expired') expect(row?.expiresAt.toISOString()).toBe(pastExpiry!.toISOString());
      else expect(row).toBeNull();
      // Nor did any request after it went stamp the user.
      const stamped = await lastRequestAt(t);
      expect(stamped!.getTime()).toBeLessThanOrEqual(goneAt);

      const honouredAfter = calls.filter((c) => c.result.outcome === '200' && c.startedAt >= goneAt);
      recordFigures(`concurrency-sessions-${how}-${cacheMs === 0 ? 'uncached' : 'cached'}`, {
        settings: label,
        cacheMs,
        flushMs: auth.flushMs ?? null,
        requests: calls.length,
        concurrency: CONCURRENCY,
        byOutcome: countBy(calls, (c) => c.result.outcome),
        sentAfterGone: calls.filter((c) => c.startedAt >= goneAt).length,
        honouredAfterGone: honouredAfter.length,
        latestHonouredMsAfterGone: honouredAfter.length ? Math.max(...honouredAfter.map((c) => c.startedAt - goneAt)) : null,
        sentAfterWindow: afterWindow.length,
        refusedAfterWindow: afterWindow.filter((c) => c.result.outcome === '401').length,
      });
    } finally {
      if (!closed) await app.close();
    }
  });
});
