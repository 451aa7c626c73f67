// Database outage and dropped connections, under a steady load on both
// surfaces: the service keeps answering — fast, with the documented 503 in
// each route's shape, never a 500, never a stack trace — while its database
// is down, reports itself unready, and recovers by itself (no restart) once
// the database is back, with nothing stored lost.
//
// The database is an instance this file starts and stops itself
// (test/support/postgres-instance.ts: this machine's PostgreSQL, else PGlite
// in a child process), whatever TEST_DATABASE_URL says: the run's shared
// server cannot be taken down under the other test files.
import { Client } from 'pg';
import { percentile } from '../../scripts/lib/percentile';
import { MESSAGES } from '../../src/errors';
import { prismaOf } from '../../src/provisioning/client';
import { LONG, recordFigures } from '../support/figures';
import { UNKNOWN } from '../support/chat';
import { createPostgresInstance, type PostgresInstance } from '../support/postgres-instance';
import { useService } from '../support/service';
import { historyIds, seedTenant, type Tenant } from '../support/seed';

/** The service's bound on a statement and on the wait for a pooled connection. */
const STATEMENT_TIMEOUT_MS = 1_000;
/** A failing request must answer within this (the brief's bound: the timeout plus a second of slack). */
const FAIL_BOUND_MS = STATEMENT_TIMEOUT_MS + 1_000;
/** How long the database stays down. LONG outlives the 5 s credential cache, so cached callers meet the outage in auth too. */
const OUTAGE_MS = LONG ? 7_000 : 2_000;
/** Requests in flight at any time. */
const CONCURRENCY = 6;
const DROP_ROUNDS = LONG ? 10 : 3;

jest.setTimeout(90_000);

let instance: PostgresInstance;
let t: Tenant;

beforeAll(async () => {
  instance = createPostgresInstance();
  await instance.start();
});
// The afterAll hooks run in this order: the database is restarted, the service closed, the instance destroyed.
afterAll(async () => {
  // Whatever a test left behind, the database is up for the last writes.
  if (instance && !instance.running) await instance.start();
});
const service = useService(
  () => ({ database: { url: instance.url, migrate: true, statementTimeoutMs: STATEMENT_TIMEOUT_MS, poolMax: Math.min(instance.poolMax, 4) } }),
  // app.close() writes the pending session touches; its own failure is the
  // subject of a test below, not a reason to leave the instance running.
  { ignoreCloseErrors: true },
);
afterAll(async () => {
  await instance?.destroy();
});

beforeAll(async () => {
  t = await seedTenant(service.app.provisioning);
  // The owner's book holds the member's phone: registered users lists the member.
  await service.app.services.addressBook.upload(
    { kind: 'user', applicationId: t.applicationId, userId: t.owner.id, via: 'session' },
    [{ name: 'Member', phone: t.member.phone! }],
    null,
    false,
  );
  // Steady traffic before the trouble: the pool's connections open and every
  // credential checked. One request at a time, retried: on a machine busy
  // with other test files, setting up a connection may outlast the bound.
  for (const kind of KINDS) {
    let outcome = await send(kind);
    for (let attempt = 0; outcome.result !== 'normal' && attempt < 50; attempt++) {
      await sleep(100);
      outcome = await send(kind);
    }
    if (outcome.result !== 'normal') throw new Error(`not answered normally before the test: ${describeOutcome(outcome)}`);
  }
}, 60_000);

// ---------------------------------------------------------------------------
// The request mix and the answers each request may get

type Style = 'list' | 'object' | 'graphql';

interface Kind {
  name: string;
  style: Style;
  send(): Promise<Response>;
  /** A write: a connection lost after it was sent leaves its outcome unknown (503 WRITE_OUTCOME_UNKNOWN), which a read never answers. */
  writes?: boolean;
  /** Whether the body is this request's normal answer (its status is checked separately). */
  normal(status: number, body: any): boolean;
}

const gql = (query: string, headers: Record<string, string>) =>
  fetch(`${service.baseUrl}/graphql`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });

const KINDS: Kind[] = [
  {
    name: 'REST lookup',
    style: 'object',
    send: () => fetch(`${service.baseUrl}/users/external/101.json`, { headers: t.as.apiKey }),
    normal: (status, body) => status === 200 && body?.user?.id === t.owner.id,
  },
  {
    name: 'REST delete',
    style: 'list',
    writes: true,
    send: () => fetch(`${service.baseUrl}/chat/Message/${UNKNOWN}.json`, { method: 'DELETE', headers: t.as.member }),
    normal: (status, body) => status === 200 && body?.NotFound?.ids?.[0] === UNKNOWN && body?.SuccessfullyDeleted?.ids?.length === 0,
  },
  {
    name: 'REST registered users',
    style: 'list',
    send: () => fetch(`${service.baseUrl}/address_book/registered_users.json?compact=1`, { headers: t.as.owner }),
    normal: (status, body) => status === 200 && body?.items?.length === 1 && body.items[0].user.id === t.member.id,
  },
  {
    // Negative answers are never cached: every one of these asks the database.
    name: 'REST lookup, unknown session',
    style: 'object',
    send: () => fetch(`${service.baseUrl}/users/external/101.json`, { headers: { 'SVC-Token': 'no-such-session' } }),
    normal: (status, body) => status === 401 && body?.errors?.base?.[0] === MESSAGES.sessionMissing,
  },
  {
    name: 'GraphQL userByExternalId',
    style: 'graphql',
    send: () => gql('{ userByExternalId(externalUserId: 101) { id } }', t.as.apiKey),
    normal: (status, body) => status === 200 && body?.data?.userByExternalId?.id === t.owner.id && !body.errors,
  },
  {
    name: 'GraphQL deleteMessages',
    style: 'graphql',
    writes: true,
    send: () => gql(`mutation { deleteMessages(ids: ["${UNKNOWN}"]) { successfullyDeleted notFound } }`, t.as.member),
    normal: (status, body) => status === 200 && body?.data?.deleteMessages?.notFound?.[0] === UNKNOWN && !body.errors,
  },
  {
    name: 'GraphQL registeredUsers',
    style: 'graphql',
    send: () => gql('{ registeredUsers { id } }', t.as.owner),
    normal: (status, body) => status === 200 && body?.data?.registeredUsers?.[0]?.id === t.member.id && !body.errors,
  },
];

const MESSAGE_OF = {
  SERVICE_UNAVAILABLE: MESSAGES.databaseUnavailable,
  DATABASE_TIMEOUT: MESSAGES.databaseTimeout,
  WRITE_OUTCOME_UNKNOWN: MESSAGES.writeOutcomeUnknown,
} as const;
type OutageCode = keyof typeof MESSAGE_OF;

/**
 * The documented answer to a request the database could not serve (README,
 * Errors): 503 with `{"errors":[message]}` on the delete and address-book
 * paths, 503 with `{"code","message"}` on the lookup, both with Retry-After,
 * and on /graphql HTTP 200 with the code in `errors[].extensions.code`, when
 * to retry in `extensions.retryAfterSeconds`, and the field null. Returns the
 * code, or null when the answer is not that.
 */
function outageCode(style: Style, status: number, body: any, retryAfter: string | null): OutageCode | null {
  const codeOfMessage = (message: unknown) => (Object.keys(MESSAGE_OF) as OutageCode[]).find((code) => MESSAGE_OF[code] === message) ?? null;
  // REST: when to retry, in the header (ERRORS' retryAfterSeconds).
  if (style !== 'graphql' && !(Number(retryAfter) >= 1)) return null;
  if (style === 'list') {
    if (status !== 503 || Object.keys(body ?? {}).join() !== 'errors' || body.errors.length !== 1) return null;
    return codeOfMessage(body.errors[0]);
  }
  if (style === 'object') {
    if (
      status !== 503 ||
      Object.keys(body ?? {})
        .sort()
        .join() !== 'code,message'
    )
      return null;
    return codeOfMessage(body.message) === body.code ? (body.code as OutageCode) : null;
  }
  const errors = body?.errors;
  if (status !== 200 || !Array.isArray(errors) || errors.length !== 1) return null;
  const [error] = errors;
  const field = Object.keys(body.data ?? {})[0];
  if (body.data !== null && (field === undefined || body.data[field] !== null)) return null;
  if (Object.keys(error.extensions ?? {}).join() !== 'code,retryAfterSeconds' || !(error.extensions.retryAfterSeconds >= 1)) return null;
  return codeOfMessage(error.message) === error.extensions.code ? (error.extensions.code as OutageCode) : null;
}

/** What no answer may contain: a stack frame, a source path, a driver's message. */
const LEAK = /\bat [\w.<>]+ \(|node_modules|\.ts:\d+|ECONNREFUSED|StatementError|terminating connection/;

interface Outcome {
  kind: string;
  startedAt: number;
  endedAt: number;
  status: number;
  /** 'normal', the 503's code, or 'unexpected'. */
  result: 'normal' | OutageCode | 'unexpected';
  text: string;
}

async function send(kind: Kind): Promise<Outcome> {
  const startedAt = Date.now();
  let status = 0;
  let text: string;
  let retryAfter: string | null = null;
  try {
    const response = await kind.send();
    status = response.status;
    retryAfter = response.headers.get('retry-after');
    text = await response.text();
  } catch (error) {
    // The service itself must never drop a connection.
    text = `client error: ${String((error as Error).cause ?? error)}`;
  }
  const endedAt = Date.now();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  let result: Outcome['result'] = 'unexpected';
  if (!LEAK.test(text)) {
    if (kind.normal(status, body)) result = 'normal';
    else result = outageCode(kind.style, status, body, retryAfter) ?? 'unexpected';
    if (result === 'WRITE_OUTCOME_UNKNOWN' && !kind.writes) result = 'unexpected';
  }
  return { kind: kind.name, startedAt, endedAt, status, result, text };
}

/** CONCURRENCY loops, each sending the kinds in turn, until stopped. */
function startLoad() {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = Array.from({ length: CONCURRENCY }, async (_, i) => {
    for (let n = i; running; n++) {
      outcomes.push(await send(KINDS[n % KINDS.length]!));
      // A failing request answers in a millisecond: pace the loops so the
      // counts stay those of a steady load, not of a busy loop.
      await sleep(10);
    }
  });
  return {
    outcomes,
    async stop(): Promise<Outcome[]> {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits at least `minMs`, then until `condition` holds (at most 20 s more: the assertions then say what is missing). */
async function until(condition: () => boolean, minMs: number): Promise<void> {
  const started = Date.now();
  await sleep(minMs);
  while (!condition() && Date.now() - started < minMs + 20_000) await sleep(20);
}
const between = (outcomes: Outcome[], from: number, to: number) => outcomes.filter((o) => o.startedAt >= from && o.startedAt < to);
const describeOutcome = (o: Outcome) => `${o.kind}: ${o.status} ${o.text.slice(0, 300)}`;

function countBy(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) {
    const key = `${o.status} ${o.result}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

const failLatencies = (outcomes: Outcome[]) => outcomes.filter((o) => o.result !== 'normal').map((o) => o.endedAt - o.startedAt);

async function status(path: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${service.baseUrl}${path}`);
  return { status: response.status, body: await response.json() };
}

/** Polls `probe` until it is true; returns when it first was (ms since epoch). */
async function firstTime(probe: () => Promise<boolean>, limitMs = 30_000): Promise<number> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    if (await probe()) return Date.now();
    await sleep(10);
  }
  throw new Error(`not within ${limitMs} ms`);
}

const figures: Record<string, unknown> = {};
afterAll(() => {
  if (Object.keys(figures).length > 0) {
    recordFigures('faults-outage', {
      instance: instance.description,
      statementTimeoutMs: STATEMENT_TIMEOUT_MS,
      failBoundMs: FAIL_BOUND_MS,
      concurrency: CONCURRENCY,
      ...figures,
    });
  }
});

// ---------------------------------------------------------------------------

describe('the database goes down under load and comes back', () => {
  test('requests fail fast with the documented 503s while it is down, /readyz says so, and the service recovers by itself with nothing lost', async () => {
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    // A write acknowledged before the outage: the owner hides m0 from their history.
    const hidden = await fetch(`${service.baseUrl}/chat/Message/${m0}.json`, { method: 'DELETE', headers: t.as.owner });
    expect(await hidden.json()).toEqual({ SuccessfullyDeleted: { ids: [m0] }, NotFound: { ids: [] } });

    const load = startLoad();
    // Up long enough for every kind to have answered a few times (a busy machine answers slower).
    await until(() => KINDS.every((kind) => load.outcomes.filter((o) => o.kind === kind.name).length >= 3), 1_000);
    const stopBegan = Date.now();
    await instance.stop({ mode: 'fast' });
    const stoppedAt = Date.now();

    // While it is down: the process is alive, but not ready.
    await sleep(OUTAGE_MS / 2);
    const health = await status('/healthz');
    const ready = await status('/readyz');
    expect(health).toEqual({ status: 200, body: { status: 'ok' } });
    expect(ready).toEqual({ status: 503, body: { status: 'unavailable', reason: expect.any(String) } });
    await sleep(OUTAGE_MS / 2);
    // Down long enough for every kind to have been sent a few times while down.
    await until(() => KINDS.every((kind) => between(load.outcomes, stoppedAt, Infinity).filter((o) => o.kind === kind.name).length >= 3), 0);

    const startBegan = Date.now();
    await instance.start();
    const readyAt = Date.now();
    // Recovery: from the instance accepting connections to the service's first
    // normal answer on each route, and to /readyz answering 200.
    const readyzAt = await firstTime(async () => (await status('/readyz')).status === 200);
    // Back long enough for every kind to have answered normally, and then some.
    await until(() => KINDS.every((kind) => between(load.outcomes, readyAt, Infinity).some((o) => o.kind === kind.name && o.result === 'normal')), 0);
    await sleep(1_000);
    const outcomes = await load.stop();

    // Up: answered before the stop began (a request in flight when it began may fail).
    const before = outcomes.filter((o) => o.endedAt < stopBegan);
    const stopping = between(outcomes, stopBegan, stoppedAt);
    // Down: sent and answered while the database was down.
    const down = between(outcomes, stoppedAt, startBegan).filter((o) => o.endedAt < startBegan);
    const recovering = between(outcomes, readyAt, Infinity);

    // Nothing unexpected at any time: every answer is the normal one or a documented 503.
    expect(outcomes.filter((o) => o.result === 'unexpected').map(describeOutcome)).toEqual([]);
    expect(outcomes.filter((o) => o.status === 500)).toEqual([]);
    // Up: every answer normal.
    expect(before.length).toBeGreaterThanOrEqual(KINDS.length);
    expect(before.filter((o) => o.result !== 'normal').map(describeOutcome)).toEqual([]);
    // Down: every request, of every kind, fails, and fast.
    expect(down.length).toBeGreaterThan(KINDS.length * 3);
    expect(down.filter((o) => o.result === 'normal').map(describeOutcome)).toEqual([]);
    expect(new Set(down.map((o) => o.kind)).size).toBe(KINDS.length);
    const maxFailLatencyMs = Math.max(...failLatencies(outcomes));
    expect(maxFailLatencyMs).toBeLessThan(FAIL_BOUND_MS);
    // Back: each kind answers normally again, and keeps doing so.
    const firstNormal = Object.fromEntries(KINDS.map((kind) => [kind.name, recovering.find((o) => o.kind === kind.name && o.result === 'normal')?.endedAt]));
    for (const [kind, at] of Object.entries(firstNormal)) expect({ kind, recovered: at !== undefined }).toEqual({ kind, recovered: true });
    const recoveredAt = Math.max(...(Object.values(firstNormal) as number[]));
    expect(
      between(outcomes, recoveredAt, Infinity)
        .filter((o) => o.result !== 'normal')
        .map(describeOutcome),
    ).toEqual([]);
    expect(recoveredAt - readyAt).toBeLessThan(5_000);

    // Nothing stored was lost: the acknowledged hide holds, the rest is intact.
    expect(await historyIds(service.app.services, t.dialogId, t.owner.id)).toEqual([m1, m2]);
    expect(await historyIds(service.app.services, t.dialogId, t.member.id)).toEqual([m0, m1, m2]);
    const lookup = await fetch(`${service.baseUrl}/users/external/102.json`, { headers: t.as.apiKey });
    expect(await lookup.json()).toMatchObject({ user: { id: t.member.id, login: 'member', phone: t.member.phone } });

    const outage = between(outcomes, stopBegan, readyAt);
    Object.assign(figures, {
      outageMs: readyAt - stopBegan,
      stopMs: stoppedAt - stopBegan,
      startMs: readyAt - startBegan,
      requestsBeforeOutage: before.length,
      requestsDuringOutage: outage.length,
      requestsDuringStop: stopping.length,
      byStatus: countBy(outage),
      failLatencyMs: { p50: percentile(failLatencies(outage), 50), p99: percentile(failLatencies(outage), 99), max: maxFailLatencyMs },
      recoveryMs: {
        firstNormalAnswer: Math.min(...(Object.values(firstNormal) as number[])) - readyAt,
        everyRoute: recoveredAt - readyAt,
        readyz: readyzAt - readyAt,
        byRoute: Object.fromEntries(Object.entries(firstNormal).map(([kind, at]) => [kind, (at as number) - readyAt])),
      },
      requestsAfterRecovery: between(outcomes, recoveredAt, Infinity).length,
      readyzWhileDown: ready,
    });
  });

  test('session touches made after the outage are still written within the flush interval', async () => {
    // The load above left batched session touches whose flush failed while
    // the database was down. After it is back, a touch must reach the
    // database within the flush interval (1 s) as before.
    const { token } = await service.app.provisioning.applications.createSession(t.applicationId, t.outsider.id);
    const lookup = () => fetch(`${service.baseUrl}/users/external/101.json`, { headers: { 'SVC-Token': token } }).then((r) => r.status);
    expect(await lookup()).toBe(200); // checked: written at once
    await sleep(100);
    const touchedAt = Date.now();
    expect(await lookup()).toBe(200); // cached: written by the next flush
    await sleep(2_500);
    const user = await prismaOf(service.db).user.findUniqueOrThrow({ where: { id: t.outsider.id } });
    expect(user.lastRequestAt?.getTime()).toBeGreaterThanOrEqual(touchedAt);
    // And a flush now (what shutdown does) succeeds: the database is up.
    await expect(service.app.services.auth.flush()).resolves.toBeUndefined();
  });
});

describe('the database drops the service’s connections', () => {
  test('requests after a dropped connection succeed, or fail with a documented 503 and then succeed', async () => {
    const load = startLoad();
    await sleep(500);
    /** When each drop happened, and when the database accepted connections again. */
    const drops: { at: number; backAt: number; backends: number }[] = [];
    for (let round = 0; round < DROP_ROUNDS; round++) {
      const at = Date.now();
      if (instance.kind === 'postgresql') {
        // A separate client ends every other backend of the database: the pool's idle and busy connections alike.
        const admin = new Client({ connectionString: instance.url });
        await admin.connect();
        const { rows } = await admin.query(
          'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database()',
        );
        await admin.end();
        drops.push({ at, backAt: at, backends: rows.length });
      } else {
        // PGlite has no pg_terminate_backend: its connection ends with the process.
        await instance.restart({ mode: 'immediate' });
        drops.push({ at, backAt: Date.now(), backends: 1 });
      }
      await sleep(700);
    }
    const lastBack = drops.at(-1)!.backAt;
    await until(() => between(load.outcomes, lastBack + 2_000, Infinity).length >= 2 * KINDS.length, 2_500);
    const outcomes = await load.stop();

    expect(outcomes.filter((o) => o.result === 'unexpected').map(describeOutcome)).toEqual([]);
    expect(Math.max(0, ...failLatencies(outcomes))).toBeLessThan(FAIL_BOUND_MS);
    // Every connection the service lost was replaced: two seconds after the
    // last drop (after the database was back, on PGlite) every request is normal.
    const settled = between(outcomes, lastBack + 2_000, Infinity);
    expect(settled.length).toBeGreaterThan(KINDS.length);
    expect(settled.filter((o) => o.result !== 'normal').map(describeOutcome)).toEqual([]);
    if (instance.kind === 'postgresql') expect(drops.some((d) => d.backends > 0)).toBe(true);

    const failed = outcomes.filter((o) => o.result !== 'normal');
    // After each drop, the time from the database being reachable again to the service's last failure.
    const recoveries = drops.map((drop, i) => {
      const next = drops[i + 1]?.at ?? Infinity;
      const window = between(outcomes, drop.at, next);
      const lastFailure = Math.max(drop.backAt, ...window.filter((o) => o.result !== 'normal').map((o) => o.endedAt));
      return lastFailure - drop.backAt;
    });
    figures.droppedConnections = {
      method: instance.kind === 'postgresql' ? 'pg_terminate_backend from a separate client' : 'instance killed (SIGKILL) and restarted',
      rounds: DROP_ROUNDS,
      backendsTerminated: drops.map((d) => d.backends),
      requests: outcomes.length,
      failed: failed.length,
      byStatus: countBy(failed),
      maxFailLatencyMs: Math.max(0, ...failLatencies(outcomes)),
      msFromReachableToLastFailure: recoveries,
    };
  });
});
