// What the proofs check after the load, each as a named Check: acknowledged
// writes on a server, a standby caught up, read-after-write pairs, every
// failed answer a documented one, the credential budget exact across
// instances, a revoked session refused everywhere.
//
// No check passes on nothing: a run must have acknowledged at least half the
// writes and checked half the pairs its schedule asks for (`enough`), so a
// run whose writes were all refused, or whose load never started, fails.
// test/scale/proof-checks.test.ts runs these checks on made-up results.
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import { openDatabase } from '../../src/db';
import { parseLsn } from '../../src/scale/replicas';
import { createProvisioning } from '../../src/provisioning';
import { createServices } from '../../src/services';
import { type FaultWindow, inWindow } from './faults';
import type { LoadResult, Sample, Write } from './load';
import { sleep, waitFor } from './processes';
import { answeredAt, type Check, countKinds } from './report';

/** How many of `writes` the server behind `pool` has: uploads' phones present, deleted messages gone from their sender's history. */
export async function writesPresent(pool: Pool, writes: Write[]): Promise<number> {
  const phones = writes.flatMap((w) => (w.kind === 'upload' ? [w.phone] : []));
  const deletes = writes.flatMap((w) => (w.kind === 'delete' ? [w] : []));
  const uploads = await pool.query<{ n: number }>('SELECT count(DISTINCT phone)::int AS n FROM contacts WHERE phone = ANY($1::text[])', [phones]);
  const hidden = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM messages m
      WHERE m.id = ANY($1::text[])
        AND (m.deleted_at IS NOT NULL OR EXISTS (SELECT 1 FROM message_hides h WHERE h.message_id = m.id AND h.user_id = m.sender_id))`,
    [deletes.map((d) => d.messageId)],
  );
  return uploads.rows[0]!.n + hidden.rows[0]!.n;
}

/** Waits until the standby behind `standby` has replayed what the primary behind `primary` has written now. */
export async function caughtUp(primary: Pool, standby: Pool, timeoutMs = 30_000): Promise<void> {
  const target = parseLsn((await primary.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!.lsn);
  await waitFor(
    'standby catch-up',
    async () => parseLsn((await standby.query<{ lsn: string }>('SELECT pg_last_wal_replay_lsn()::text AS lsn')).rows[0]!.lsn) >= target,
    timeoutMs,
  );
}

/**
 * The least a run's data checks need to mean anything: half of what its
 * schedule asks for (`scheduled()` in load.ts). The recorded runs reached
 * ~90%: a busy machine leaves some operations unstarted, never half.
 */
export const enough = (scheduledCount: number): number => Math.ceil(scheduledCount / 2);

export const acknowledgedCheck = (where: string, present: number, writes: Write[], minimum: number): Check => ({
  name: `acknowledged writes on the ${where} (at least ${minimum})`,
  ok: writes.length >= minimum && present === writes.length,
  detail: `${present} of ${writes.length}`,
});

export const pairsCheck = (load: Pick<LoadResult, 'stalePairs' | 'checkedPairs'>, minimum: number): Check => ({
  name: `stale read-after-write pairs (at least ${minimum} checked)`,
  ok: load.checkedPairs >= minimum && load.stalePairs === 0,
  detail: `${load.stalePairs} of ${load.checkedPairs} pairs`,
});

/** What a client may be answered when a request fails, as the README documents it: a 503 of the service's, in its shape. */
export const DOCUMENTED_FAILURES: ReadonlySet<string> = new Set([
  '503 SERVICE_UNAVAILABLE',
  '503 DATABASE_TIMEOUT',
  '503 DATABASE_BUSY',
  '503 WRITE_OUTCOME_UNKNOWN',
]);

/**
 * Every failed attempt, retried or final, in every window and outside them:
 * a documented 503 (no 4xx, no 500, no proxy page), or no answer inside the
 * window of a fault that kills a process holding clients' connections.
 */
export function failuresDocumented(samples: Sample[], windows: FaultWindow[]): Check {
  const attempts = samples.flatMap((s) => [...s.failed, ...(s.ok ? [] : [{ at: answeredAt(s), kind: s.kind ?? String(s.status) }])]);
  const dropped = (at: number) => windows.some((w) => w.dropsConnections && inWindow(w, at));
  const undocumented = attempts.filter((a) => !DOCUMENTED_FAILURES.has(a.kind) && !(a.kind.startsWith('no answer') && dropped(a.at)));
  // Where the first few fell: a window's name and how far into it, for the post-mortem.
  const where = (at: number) => {
    const w = windows.find((one) => inWindow(one, at));
    return w ? `${w.name} +${at - w.start} ms` : 'outside the windows';
  };
  const firsts = undocumented.slice(0, 5).map((a) => `${a.kind} (${where(a.at)})`);
  const others = undocumented.length > 0 ? `; others ${JSON.stringify(countKinds(undocumented.map((a) => a.kind)))}: ${firsts.join('; ')}` : '';
  return {
    name: 'every failed attempt a documented 503 (no 4xx, no 500, no proxy page; no answer only while a fault kills a process holding connections)',
    ok: undocumented.length === 0,
    detail: `${attempts.length - undocumented.length} of ${attempts.length}${others}`,
  };
}

/** Waits until each instance counts requests in Redis again (a counted answer carries RateLimit-* headers; a fail-open one does not). */
export async function countingInRedis(ports: number[]): Promise<void> {
  for (const port of ports) {
    await waitFor(`instance :${port} counting in redis`, async () =>
      (await fetch(`http://127.0.0.1:${port}/address_book.json`, { headers: { 'SVC-Token': 'probe' } })).headers.has('ratelimit-limit'),
    );
  }
}

/** A guessed credential hammered round-robin on the instances directly: exactly `budget` served, the rest 429. */
export async function credentialBudget(ports: number[], budget: number): Promise<Check> {
  const guess = `budget-${randomBytes(12).toString('hex')}`;
  let served = 0;
  let limited = 0;
  for (let i = 0; i < budget + 30; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: 10 }, (_, k) =>
        fetch(`http://127.0.0.1:${ports[(i + k) % ports.length]}/address_book.json`, { headers: { 'SVC-Token': guess } }).then((r) => r.status),
      ),
    );
    for (const status of batch) {
      if (status === 429) limited++;
      else served++;
    }
  }
  return {
    name: `credential budget exact across ${ports.length} instances`,
    ok: served === budget,
    detail: `${served} served of ${budget + 30} (budget ${budget}), ${limited} refused 429`,
  };
}

/** How long an instance trusts a checked credential: the services' default (src/services/auth.ts), which the proofs' instances keep. */
export const CREDENTIAL_CACHE_MS = 5_000;

/**
 * A session made on the primary, cached by every instance, ended on the
 * first: refused by each while its cache entry would still have held it,
 * which only the revocation bus can do, however slow the machine. How soon
 * each refused it is a figure of the run.
 */
export async function revocation(ports: number[], primaryUrl: string, applicationId: number, userId: number, secretsKey: Buffer): Promise<Check> {
  const db = await openDatabase({ url: primaryUrl, migrate: false, poolMax: 1 });
  const services = createServices(db, { auth: { cacheMs: 0 }, secretsKey });
  const { token } = await createProvisioning(db, { secretsKey, services }).applications.createSession(applicationId, userId);
  await services.close();
  await db.close();
  const headers = { 'SVC-Token': token };
  const status = async (port: number) => (await fetch(`http://127.0.0.1:${port}/address_book.json`, { headers })).status;
  // Each instance checks it once (its cache entry dates from before that request), then answers from its cache.
  const cachedBefore: number[] = [];
  for (const port of ports) {
    cachedBefore.push(Date.now());
    for (let k = 0; k < 2; k++) await status(port);
  }
  const ended = await fetch(`http://127.0.0.1:${ports[0]}/session.json`, { method: 'DELETE', headers });
  const endedAt = Date.now();
  const refused = await Promise.all(
    ports.map(async (port, i) => {
      for (;;) {
        if ((await status(port)) === 401) return { afterMs: Date.now() - endedAt, inTime: Date.now() < cachedBefore[i]! + CREDENTIAL_CACHE_MS };
        if (Date.now() > cachedBefore[i]! + CREDENTIAL_CACHE_MS) return { afterMs: null, inTime: false };
        await sleep(10);
      }
    }),
  );
  return {
    name: `revoked session refused on every instance while its ${CREDENTIAL_CACHE_MS / 1000} s credential cache would still have held it`,
    ok: ended.status < 300 && refused.every((r) => r.inTime),
    detail: `after ${refused.map((r) => r.afterMs ?? 'never').join(', ')} ms`,
  };
}

/** Deadlocks PostgreSQL has counted in the database so far. */
export async function deadlocks(pool: Pool): Promise<number> {
  return Number((await pool.query<{ deadlocks: string }>("SELECT deadlocks FROM pg_stat_database WHERE datname = 'postgres'")).rows[0]!.deadlocks);
}
