// Behind PgBouncer in transaction mode (Debian's pgbouncer, started here in
// front of the run's PostgreSQL server; skipped with a message on the
// embedded database, and where there is no pgbouncer binary, which is a
// failure under CI=true): named statements and the statement_timeout startup
// parameter fail, as the issue found; DB_PREPARED_STATEMENTS=unnamed works,
// its statement timeout included.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/db';
import { query, statement } from '../../src/db/sql';
import { writePgbouncerConfig } from '../../scripts/lib/pgbouncer';
import { freePort } from '../../scripts/lib/ports';
import { needOnPath, needServer, requires } from '../support/requires';

const serverUrl = process.env.TEST_RUN_DATABASE_URL;
const withBouncer = requires(needServer, needOnPath('pgbouncer', 'apt-get install pgbouncer'));

const ONE = statement({ name: 'test.bouncer_one', params: ['int4'], columns: {}, text: 'SELECT $1::int AS one' });
const SLEEP = statement({ name: 'test.bouncer_sleep', params: [], columns: {}, text: 'SELECT pg_sleep(2)' });

let bouncer: ChildProcess | undefined;
let dir: string | undefined;
let bouncerUrl = '';

beforeAll(async () => {
  if (!withBouncer.met) return;
  const port = await freePort();
  const server = new URL(serverUrl!);
  const database = server.pathname.slice(1);
  dir = mkdtempSync(path.join(tmpdir(), 'chatsvc-pgbouncer-'));
  const { command, args } = writePgbouncerConfig({
    dir,
    listenPort: port,
    server: { host: server.hostname, port: Number(server.port || 5432), database, user: server.username || 'postgres' },
    // One server connection: every client shares it, as under load.
    poolSize: 1,
  });
  bouncer = spawn(command, args, { stdio: 'ignore' });
  bouncerUrl = `postgres://${server.username || 'postgres'}@127.0.0.1:${port}/${database}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const probe = await openDatabase({ url: bouncerUrl, migrate: false, poolMax: 1, preparedStatements: 'unnamed', statementTimeoutMs: 0 }).catch(
      () => undefined,
    );
    if (probe) {
      const ok = await probe.pool.query('SELECT 1').then(
        () => true,
        () => false,
      );
      await probe.close();
      if (ok) break;
    }
    if (Date.now() > deadline) throw new Error('pgbouncer did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
});

afterAll(() => {
  bouncer?.kill('SIGTERM');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Several clients at once, each running the same statement: through one server connection. */
async function concurrently(preparedStatements: 'named' | 'unnamed', statementTimeoutMs: number): Promise<unknown[]> {
  const db = await openDatabase({ url: bouncerUrl, migrate: false, poolMax: 4, preparedStatements, statementTimeoutMs });
  try {
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => query(db.pool, ONE, [i])));
    return results.filter((r) => r.status === 'rejected').map((r) => r.reason);
  } finally {
    await db.close();
  }
}

withBouncer.test('named statements collide through a transaction pooler; unnamed ones do not', async () => {
  const failures = await concurrently('named', 0);
  expect(failures.length).toBeGreaterThan(0);
  expect(String((failures[0] as { message?: unknown }).message)).toMatch(/prepared statement .* (already exists|does not exist)/);
  expect(await concurrently('unnamed', 0)).toEqual([]);
});

withBouncer.test('the statement timeout as a startup parameter is refused; SET LOCAL is accepted and bounds statements', async () => {
  const failures = await concurrently('named', 5_000);
  expect(failures.length).toBe(40);
  expect(String((failures[0] as { message?: unknown }).message)).toMatch(/statement_timeout/);
  expect(await concurrently('unnamed', 5_000)).toEqual([]);

  const db = await openDatabase({ url: bouncerUrl, migrate: false, poolMax: 2, preparedStatements: 'unnamed', statementTimeoutMs: 300 });
  try {
    await expect(query(db.pool, SLEEP, [])).rejects.toMatchObject({ code: '57014' });
  } finally {
    await db.close();
  }
});
