// Every "the database cannot take this now" condition answers 503 with
// Retry-After in each surface's documented shape (docs/errors.md), never 500:
// each one provoked on a real PostgreSQL server that this file starts itself
// (test/support/postgres-instance.ts: a throwaway cluster; the machine's own
// server is never reconfigured). The service connects as a role of its own,
// so that the role's and the database's settings can be changed under it:
//
// - 53300 too many connections: the role's CONNECTION LIMIT 0;
// - 55000 not accepting connections: the database's ALLOW_CONNECTIONS false;
// - 57P01 admin shutdown: the backend running the request terminated;
// - connection refused: the server stopped;
// - 57P02 crash shutdown: another backend killed with SIGKILL (the server
//   resets every connection and recovers);
// - 57P03 cannot connect now: a smart shutdown in progress ("the database
//   system is shutting down"), while a session holds it open.
//
// Each time the service's log names the cause, so the test knows which
// condition it met, and the service answers normally again once it is over
// (the last one excepted: the server is gone).
import { Writable } from 'node:stream';
import { Client } from 'pg';
import { MESSAGES } from '../../src/errors';
import { recordFigures } from '../support/figures';
import { createPostgresInstance, type PostgresInstance, realPostgresAvailable } from '../support/postgres-instance';
import { startService, type TestService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';
import { needPostgresBinaries, requires } from '../support/requires';

jest.setTimeout(120_000);

let instance: PostgresInstance;
let service: TestService;
let t: Tenant;
let admin: Client;
const logged: string[] = [];
const stream = new Writable({
  write(chunk, _encoding, done) {
    logged.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});

const real = process.env.TEST_PG_INSTANCE !== 'pglite' && realPostgresAvailable();
const maybe = requires(needPostgresBinaries()).describe;

/** The instance's `chatsvc` database as `role`. */
const urlAs = (role: string) => instance.url.replace('postgres://postgres@', `postgres://${role}@`).replace(/\/postgres$/, '/chatsvc');

beforeAll(async () => {
  if (!real) return;
  instance = createPostgresInstance();
  await instance.start();
  if (instance.kind !== 'postgresql') return;
  const setup = new Client({ connectionString: instance.url });
  await setup.connect();
  await setup.query('CREATE ROLE svc LOGIN');
  await setup.query('CREATE DATABASE chatsvc OWNER svc');
  await setup.end();
  admin = new Client({ connectionString: urlAs('postgres') });
  await admin.connect();
  service = await startService({
    database: { url: urlAs('svc'), migrate: true, poolMax: 3, statementTimeoutMs: 20_000 },
    logger: { level: 'error', stream },
  });
  t = await seedTenant(service.app.provisioning);
}, 90_000);

afterAll(async () => {
  await admin?.end().catch(() => {});
  await service?.close().catch(() => {});
  await instance?.destroy().catch(() => {});
});

interface Answers {
  list: { status: number; retryAfter: string | null; body: unknown };
  object: { status: number; retryAfter: string | null; body: unknown };
  graphql: { status: number; body: any };
}

/** One request of each shape: list (registered users), object (the lookup), GraphQL. */
async function ask(): Promise<Answers> {
  const list = await service.rest('GET', '/address_book/registered_users.json?compact=1', { headers: t.as.onBehalfOf(t.owner.id) });
  const object = await service.rest('GET', '/users/external/101.json', { headers: t.as.apiKey });
  const graphql = await service.graphql('{ userByExternalId(externalUserId: 101) { id } }', undefined, t.as.apiKey);
  return {
    list: { status: list.status, retryAfter: list.headers.get('retry-after'), body: list.body },
    object: { status: object.status, retryAfter: object.headers.get('retry-after'), body: object.body },
    graphql: { status: graphql.status, body: graphql.body },
  };
}

const unavailable = MESSAGES.databaseUnavailable;
/** The documented SERVICE_UNAVAILABLE answer of each shape. */
const UNAVAILABLE = {
  list: { status: 503, retryAfter: '1', body: { errors: [unavailable] } },
  object: { status: 503, retryAfter: '1', body: { code: 'SERVICE_UNAVAILABLE', message: unavailable } },
  graphql: {
    status: 200,
    body: {
      data: { userByExternalId: null },
      errors: [expect.objectContaining({ message: unavailable, extensions: { code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: 1 } })],
    },
  },
};

async function expectNormal(): Promise<void> {
  const answers = await ask();
  expect([answers.list.status, answers.object.status, answers.graphql.body.data?.userByExternalId?.id]).toEqual([200, 200, t.owner.id]);
}

/** The service's connections to chatsvc, ended: the next request needs a new one. */
async function endServiceConnections(): Promise<void> {
  await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'svc' AND pid <> pg_backend_pid()");
  // The pool hears of it (an 'error' on each idle client) before the next request.
  await new Promise((resolve) => setTimeout(resolve, 200));
}

/** The log lines written since `from` (the causes of the 503s). */
const logSince = (from: number) => logged.slice(from).join('\n');

const figures: Record<string, unknown> = {};
afterAll(() => {
  if (Object.keys(figures).length > 0) recordFigures('faults-database-unavailable', { database: instance?.description, conditions: figures });
});

maybe('every condition of a database that cannot take the request answers 503 with Retry-After', () => {
  beforeAll(async () => {
    await expectNormal();
  });

  test('53300 too many connections (the role CONNECTION LIMIT 0)', async () => {
    await admin.query('ALTER ROLE svc CONNECTION LIMIT 0');
    try {
      await endServiceConnections();
      const from = logged.length;
      expect(await ask()).toEqual(UNAVAILABLE);
      expect(logSince(from)).toContain('53300');
      figures['53300'] = 'answered 503 SERVICE_UNAVAILABLE, Retry-After: 1';
    } finally {
      await admin.query('ALTER ROLE svc CONNECTION LIMIT -1');
    }
    await expectNormal();
  });

  test('55000 not accepting connections (the database ALLOW_CONNECTIONS false)', async () => {
    // From another database: chatsvc is the one being closed.
    const other = new Client({ connectionString: instance.url });
    await other.connect();
    try {
      await other.query('ALTER DATABASE chatsvc ALLOW_CONNECTIONS false');
      await endServiceConnections();
      const from = logged.length;
      expect(await ask()).toEqual(UNAVAILABLE);
      expect(logSince(from)).toContain('55000');
      figures['55000'] = 'answered 503 SERVICE_UNAVAILABLE, Retry-After: 1';
    } finally {
      await other.query('ALTER DATABASE chatsvc ALLOW_CONNECTIONS true');
      await other.end();
    }
    await expectNormal();
  });

  test('57P01 the backend running the request terminated by an administrator', async () => {
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
    const from = logged.length;
    try {
      // The lookup waits for the lock; its backend is then terminated.
      const pending = service.rest('GET', '/users/external/101.json', { headers: t.as.apiKey });
      let terminated = 0;
      for (let i = 0; i < 100 && terminated === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const { rows } = await admin.query<{ n: number }>(
          "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE usename = 'svc' AND wait_event_type = 'Lock'",
        );
        terminated = rows[0]!.n;
      }
      expect(terminated).toBe(1);
      const answer = await pending;
      expect({ status: answer.status, retryAfter: answer.headers.get('retry-after'), body: answer.body }).toEqual(UNAVAILABLE.object);
    } finally {
      await admin.query('ROLLBACK');
    }
    expect(logSince(from)).toContain('57P01');
    figures['57P01'] = 'answered 503 SERVICE_UNAVAILABLE, Retry-After: 1';
    await expectNormal();
  });

  test('connection refused (the server stopped)', async () => {
    await admin.end();
    await instance.stop({ mode: 'fast' });
    const from = logged.length;
    try {
      expect(await ask()).toEqual(UNAVAILABLE);
      expect(logSince(from)).toContain('ECONNREFUSED');
      figures.ECONNREFUSED = 'answered 503 SERVICE_UNAVAILABLE, Retry-After: 1';
    } finally {
      await instance.start();
      admin = new Client({ connectionString: urlAs('postgres') });
      await admin.connect();
    }
    await expectNormal();
  });

  test('57P02 a crash of another server process (SIGKILL of a backend): every connection reset, then recovery', async () => {
    const victim = new Client({ connectionString: instance.url });
    victim.on('error', () => {});
    admin.on('error', () => {});
    await victim.connect();
    const { rows } = await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    // Held open by a lock, so that the reset meets a request in flight.
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
    const pending = service.rest('GET', '/users/external/101.json', { headers: t.as.apiKey });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const from = logged.length;
    process.kill(rows[0]!.pid, 'SIGKILL');
    const answer = await pending;
    expect({ status: answer.status, retryAfter: answer.headers.get('retry-after'), body: answer.body }).toEqual(UNAVAILABLE.object);
    // Until the server has recovered, every answer is the 503 or the normal one.
    const during: string[] = [];
    for (let i = 0; i < 200; i++) {
      const again = await service.rest('GET', '/users/external/101.json', { headers: t.as.apiKey });
      during.push(String(again.status));
      if (again.status === 200) break;
      expect({ status: again.status, retryAfter: again.headers.get('retry-after'), body: again.body }).toEqual(UNAVAILABLE.object);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(during.at(-1)).toBe('200');
    figures['57P02'] = {
      answer: 'answered 503 SERVICE_UNAVAILABLE, Retry-After: 1',
      causesLogged: [...new Set(logSince(from).match(/57P0\d|Connection terminated[\w ]*|in recovery mode|ECONNREFUSED/g) ?? [])],
      answersUntilRecovered: during.length,
    };
    await victim.end().catch(() => {});
    await admin.end().catch(() => {});
    admin = new Client({ connectionString: urlAs('postgres') });
    await admin.connect();
    await expectNormal();
  });

  test('57P03 the database system is shutting down (a smart shutdown held open by a session)', async () => {
    await endServiceConnections();
    // A smart shutdown (SIGTERM to the postmaster) waits for sessions to end
    // and refuses new ones meanwhile; the admin session keeps it waiting.
    const postmaster = instance.postmasterPid!()!;
    process.kill(postmaster, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const from = logged.length;
    expect(await ask()).toEqual(UNAVAILABLE);
    expect(logSince(from)).toMatch(/57P03/);
    figures['57P03'] = 'answered 503 SERVICE_UNAVAILABLE, Retry-After: 1';
    // The server goes once the last session ends; destroy() removes what is left.
    await admin.end();
    for (let i = 0; i < 100 && instance.postmasterPid!() !== undefined; i++) await new Promise((resolve) => setTimeout(resolve, 100));
  });
});
