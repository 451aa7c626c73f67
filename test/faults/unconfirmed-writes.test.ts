// Writes whose commit the service cannot confirm — what a failover does to
// the writes in flight. With synchronous replication a commit waits for the
// standby, and statement_timeout does not bound that wait (PostgreSQL stops
// its timer before committing): only the service's client-side bound does.
// When the wait ends otherwise — cancelled (PostgreSQL then answers the
// COMMIT as a success, with a warning), or the backend terminated (as a
// Patroni demotion does) — the commit is done locally but nobody has confirmed
// the standby has it, so a failover may lose it. Such a write must answer 503
// WRITE_OUTCOME_UNKNOWN: never a success, never "nothing was written" (the row
// is in fact there). A server that stops answering altogether (a host cut
// off) must fail requests at the client-side bound rather than hang them.
//
// "A standby that never confirms": synchronous_standby_names names a standby
// that does not exist, so every commit that writes waits for it. The
// database is an instance of this file's own (test/support/postgres-instance.ts),
// whatever TEST_DATABASE_URL says; PGlite has no replication: skipped where
// there are no PostgreSQL binaries (a failure under CI=true).
import { execFileSync } from 'node:child_process';
import { Client } from 'pg';
import { clientBoundMs } from '../../src/db';
import { MESSAGES } from '../../src/errors';
import { MEMBER_PHONE } from '../support/address-book';
import { createPostgresInstance, type PostgresInstance } from '../support/postgres-instance';
import { needPostgresBinaries, requires } from '../support/requires';
import { fetchResult, type HttpResult, startService, useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';

const STATEMENT_TIMEOUT_MS = 1_000;
/** The client-side bound (src/db/index.ts clientBoundMs) plus slack for a busy machine. */
const ANSWER_BOUND_MS = clientBoundMs(STATEMENT_TIMEOUT_MS) + 3_000;
/** A request not answered by then hangs. */
const HANG_MS = 20_000;

// Synchronous replication and signals: PGlite has neither.
const withPostgres = requires(needPostgresBinaries());
const available = withPostgres.met;
const maybe = withPostgres.test;

jest.setTimeout(60_000);

let instance: PostgresInstance;
let admin: Client;
let t: Tenant;

beforeAll(async () => {
  if (!available) return;
  instance = createPostgresInstance();
  await instance.start();
  admin = new Client({ connectionString: instance.url });
  await admin.connect();
}, 60_000);
// The afterAll hooks run in this order: commits stop waiting, the service closes, the instance goes.
afterAll(async () => {
  if (!available) return;
  await synchronousStandby(null).catch(() => {});
});
const service = useService(
  () => ({
    database: { url: instance.url, migrate: true, statementTimeoutMs: STATEMENT_TIMEOUT_MS, poolMax: 4 },
    // Credentials checked once are trusted for the whole file: the requests
    // below meet the database only in their own statements.
    auth: { cacheMs: 600_000 },
  }),
  { skip: !available, ignoreCloseErrors: true },
);
afterAll(async () => {
  if (!available) return;
  await admin?.end().catch(() => {});
  await instance?.destroy();
});

beforeAll(async () => {
  if (!available) return;
  t = await seedTenant(service.app.provisioning);
  for (const headers of [t.as.owner, t.as.member]) expect((await rest('GET', '/address_book.json', headers)).status).toBe(200);
}, 60_000);

const rest = (method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<HttpResult> =>
  fetchResult(`${service.baseUrl}${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(HANG_MS),
  });

const graphql = (query: string, headers: Record<string, string>): Promise<HttpResult> =>
  fetchResult(`${service.baseUrl}/graphql`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
    signal: AbortSignal.timeout(HANG_MS),
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Names a synchronous standby (one that never connects), or none; every backend has reloaded when it resolves. */
async function synchronousStandby(name: string | null): Promise<void> {
  await admin.query(name === null ? 'ALTER SYSTEM RESET synchronous_standby_names' : `ALTER SYSTEM SET synchronous_standby_names = '${name}'`);
  await admin.query('SELECT pg_reload_conf()');
  const expected = name ?? '';
  for (let i = 0; i < 100; i++) {
    const { rows } = await admin.query<{ names: string }>("SELECT current_setting('synchronous_standby_names') AS names");
    if (rows[0]!.names === expected) break;
    await sleep(20);
  }
  // The service's idle backends take the reload in before their next statement; a moment for the signal to reach them.
  await sleep(200);
}

/** The phones in the owner's book, read on the database directly. */
async function ownerPhones(): Promise<string[]> {
  const { rows } = await admin.query<{ phone: string }>('SELECT phone FROM contacts WHERE user_id = $1 ORDER BY phone', [t.owner.id]);
  return rows.map((r) => r.phone);
}

const unknownOutcome = { errors: [MESSAGES.writeOutcomeUnknown] };

maybe(
  'an upload whose commit waits for a synchronous standby that never confirms answers 503 WRITE_OUTCOME_UNKNOWN at the client-side bound, though the row is committed here',
  async () => {
    await synchronousStandby('ghost_standby');
    try {
      const upload = await rest('POST', '/address_book.json', t.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
      expect({ status: upload.status, body: upload.body }).toEqual({ status: 503, body: unknownOutcome });
    } finally {
      await synchronousStandby(null);
    }
    // "May or may not": here it was applied (committed locally, never confirmed by a standby).
    expect(await ownerPhones()).toEqual([MEMBER_PHONE]);
  },
);

maybe('a delete in the same position answers WRITE_OUTCOME_UNKNOWN on REST and on GraphQL', async () => {
  // Two tenants: a backend waiting for the standby still holds its
  // transaction's locks (the REST delete's lock on its dialog), which the
  // GraphQL delete of a message of the same dialog would wait for.
  const other = await seedTenant(service.app.provisioning);
  const m0 = t.messageIds[0]!;
  const m1 = other.messageIds[0]!;
  await synchronousStandby('ghost_standby');
  try {
    const restDelete = await rest('DELETE', `/chat/Message/${m0}.json`, t.as.member);
    expect({ status: restDelete.status, body: restDelete.body }).toEqual({ status: 503, body: unknownOutcome });
    const gqlDelete = await graphql(`mutation { deleteMessages(ids: ["${m1}"]) { successfullyDeleted } }`, other.as.member);
    expect(gqlDelete.status).toBe(200);
    expect(gqlDelete.body.data).toBeNull();
    expect(gqlDelete.body.errors.map((e: { message: string; extensions: unknown }) => [e.message, e.extensions])).toEqual([
      [MESSAGES.writeOutcomeUnknown, { code: 'WRITE_OUTCOME_UNKNOWN', retryAfterSeconds: 1 }],
    ]);
  } finally {
    await synchronousStandby(null);
  }
});

maybe(
  'reads while the synchronous standby is missing answer normally: a credential check sliding its session is not a write the client asked for',
  async () => {
    const { token } = await service.app.provisioning.applications.createSession(t.applicationId, t.outsider.id);
    await synchronousStandby('ghost_standby');
    try {
      // Not cached: the check slides the session, a write that would wait for the standby.
      const lookup = await rest('GET', `/users/external/${t.owner.externalUserId}.json`, { 'SVC-Token': token });
      expect({ status: lookup.status, text: lookup.text.slice(0, 200) }).toEqual({ status: 200, text: lookup.status === 200 ? lookup.text.slice(0, 200) : '' });
      expect(lookup.body.user.id).toBe(t.owner.id);
    } finally {
      await synchronousStandby(null);
    }
  },
);

/** A service whose statement timeout outlasts the wait, so that the wait ends as the test ends it. */
async function patientService(): Promise<{ upload(phone: string): Promise<HttpResult>; close(): Promise<void> }> {
  const other = await startService({ database: { url: instance.url, statementTimeoutMs: HANG_MS, poolMax: 2 }, auth: { cacheMs: 600_000 } });
  const otherBase = other.baseUrl;
  return {
    upload: (phone) =>
      fetchResult(`${otherBase}/address_book.json`, {
        method: 'POST',
        headers: { ...t.as.owner, 'content-type': 'application/json' },
        body: JSON.stringify({ contacts: [{ name: 'New', phone }] }),
        signal: AbortSignal.timeout(HANG_MS),
      }),
    close: () => other.close(),
  };
}

const ENDINGS = [
  { how: 'pg_cancel_backend', as: 'an operator cancelling the wait: PostgreSQL answers that COMMIT as a success, with a warning', phone: '+10000000555' },
  { how: 'pg_terminate_backend', as: 'a demotion does', phone: '+10000000556' },
];

for (const ending of ENDINGS) {
  maybe(`an upload whose wait for the synchronous standby is ended by ${ending.how} (${ending.as}) answers 503 WRITE_OUTCOME_UNKNOWN`, async () => {
    const patient = await patientService();
    let answer: HttpResult;
    try {
      // Its credentials checked (and cached) while commits still need no standby.
      expect((await patient.upload(`${ending.phone.slice(0, -1)}0`)).status).toBeLessThan(300);
      await synchronousStandby('ghost_standby');
      const pending = patient.upload(ending.phone);
      let ended = 0;
      for (let i = 0; i < 500 && ended === 0; i++) {
        await sleep(20);
        const { rows } = await admin.query<{ n: number }>(
          `SELECT count(${ending.how}(pid))::int AS n FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND pid <> pg_backend_pid()`,
        );
        ended = rows[0]!.n;
      }
      expect(ended).toBe(1);
      answer = await pending;
    } finally {
      await synchronousStandby(null);
      await patient.close();
    }
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 503, body: unknownOutcome });
    expect(await ownerPhones()).toContain(ending.phone);
  });
}

/** The instance's postmaster and its children (the backends), found through a backend of ours. */
function serverPids(backendPid: number): number[] {
  const postmaster = Number(execFileSync('ps', ['-o', 'ppid=', '-p', String(backendPid)], { encoding: 'utf8' }).trim());
  const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' })
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((pid) => pid > 0);
  return [postmaster, ...children];
}

maybe(
  'a database that stops answering altogether (its processes frozen, as a host cut off) fails each request at the client-side bound with a 503, then serves again',
  async () => {
    const requests = [
      { name: 'lookup', send: () => rest('GET', `/users/external/${t.member.externalUserId}.json`, t.as.owner), codes: ['DATABASE_TIMEOUT'] as unknown[] },
      { name: 'registered users', send: () => rest('GET', '/address_book/registered_users.json', t.as.owner), codes: [MESSAGES.databaseTimeout] },
      {
        name: 'delete',
        send: () => rest('DELETE', `/chat/Message/${t.messageIds[2]}.json`, t.as.owner),
        // On a connection already open the delete was sent: its outcome is unknown. On a new one it never left.
        codes: [MESSAGES.writeOutcomeUnknown, MESSAGES.databaseTimeout],
      },
    ];
    // Every pooled connection open and idle, as under steady traffic.
    await Promise.all(requests.flatMap((r) => [r.send(), r.send()]));
    const { rows } = await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const pids = serverPids(rows[0]!.pid);
    for (const pid of pids) process.kill(pid, 'SIGSTOP');
    let answers: { name: string; ms: number; status: number; code: unknown }[];
    try {
      answers = await Promise.all(
        [...requests, ...requests].map(async (r) => {
          const started = Date.now();
          const answer = await r.send().catch((error: unknown) => ({ status: 0, body: String(error) }) as HttpResult);
          return {
            name: r.name,
            ms: Date.now() - started,
            status: answer.status,
            code: answer.body?.code ?? answer.body?.errors?.[0] ?? answer.text.slice(0, 100),
          };
        }),
      );
    } finally {
      for (const pid of pids) process.kill(pid, 'SIGCONT');
    }
    for (const [i, answer] of answers.entries()) {
      const expected = requests[i % requests.length]!;
      expect({ ...answer, ms: answer.ms < ANSWER_BOUND_MS, code: expected.codes.includes(answer.code) ? 'documented' : answer.code }).toEqual({
        name: expected.name,
        ms: true,
        status: 503,
        code: 'documented',
      });
    }
    // The pools recover by themselves: the same requests answer normally.
    let lookup: HttpResult | undefined;
    for (let i = 0; i < 50 && lookup?.status !== 200; i++) {
      lookup = await requests[0]!.send();
      if (lookup.status !== 200) await sleep(100);
    }
    expect(lookup!.status).toBe(200);
    expect((await requests[1]!.send()).status).toBe(200);
  },
);
