// Running behind a transaction pooler (PgBouncer in transaction mode):
// unnamed statements, the statement timeout set per transaction, migrations
// that any number of instances may start at once, and session-touch flushes
// that neither deadlock each other nor give up on the first deadlock.
import { Client, Pool } from 'pg';
import { openDatabase } from '../../src/db';
import { migrate, readMigrations } from '../../src/db/migrate';
import { query, statement, transaction } from '../../src/db/sql';
import { prismaOf } from '../../src/provisioning/client';
import { AuthService } from '../../src/services/auth';
import { needServer, requires } from '../support/requires';

const serverUrl = process.env.TEST_RUN_DATABASE_URL;
// The embedded database serves one connection and has no timer to cancel a
// statement with: what these tests check only exists on a server.
const onServer = requires(needServer).test;

const PREPARED = statement({ name: 'test.poolers_one', params: ['int4'], columns: {}, text: 'SELECT $1::int AS one' });
const SLEEP = statement({ name: 'test.poolers_sleep', params: [], columns: {}, text: 'SELECT pg_sleep(2)' });

test('unnamed: no statement is left prepared on the connection; named: it is', async () => {
  for (const mode of ['named', 'unnamed'] as const) {
    const db = serverUrl
      ? await openDatabase({ url: serverUrl, poolMax: 1, migrate: false, preparedStatements: mode })
      : await openDatabase({ dataDir: null, preparedStatements: mode });
    try {
      await query(db.pool, PREPARED, [1]);
      await query(db.pool, PREPARED, [2]);
      const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'test.poolers_one'");
      expect(rows[0].n).toBe(mode === 'named' ? 1 : 0);
    } finally {
      await db.close();
    }
  }
});

onServer('unnamed: the statement timeout is SET LOCAL per transaction, never a session setting', async () => {
  const db = await openDatabase({ url: serverUrl!, poolMax: 1, migrate: false, preparedStatements: 'unnamed', statementTimeoutMs: 300 });
  try {
    // The connection's own setting is the server's default (no startup parameter).
    const { rows } = await db.pool.query('SHOW statement_timeout');
    expect(rows[0].statement_timeout).toBe('0');
    // Cancelled (57014) by the 300 ms timeout: uncancelled, the 2 s sleep would have answered.
    await expect(query(db.pool, SLEEP, [])).rejects.toMatchObject({ code: '57014' });
    await expect(transaction(db.pool, 'sleep', (client) => client.query('SELECT pg_sleep(2)'))).rejects.toMatchObject({ code: '57014' });
    // And it did not stay on the connection once the transaction ended.
    const after = await db.pool.query('SHOW statement_timeout');
    expect(after.rows[0].statement_timeout).toBe('0');
  } finally {
    await db.close();
  }
});

onServer('four instances migrating one fresh database at once apply each migration once', async () => {
  const name = `chatsvc_migrate_${process.pid}_${Date.now()}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl!);
  url.pathname = `/${name}`;
  const pools = Array.from({ length: 4 }, () => new Pool({ connectionString: url.toString(), max: 1 }));
  for (const pool of pools) pool.on('error', () => {});
  try {
    const results = await Promise.all(pools.map((pool) => migrate(pool)));
    const all = readMigrations().map((m) => m.name);
    expect(results.flat().sort()).toEqual(all);
    const { rows } = await pools[0]!.query('SELECT count(*)::int AS n FROM _prisma_migrations');
    expect(rows[0].n).toBe(all.length);
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.end();
  }
});

onServer('two instances flushing touches of the same sessions in opposite orders do not deadlock', async () => {
  const db = await openDatabase({ url: serverUrl!, poolMax: 4, migrate: false });
  const app = await prismaOf(db).application.create({ data: { name: 'poolers flush test', apiKeyHash: `poolers-${process.pid}-${Date.now()}` } });
  const count = 2_000;
  const hashes = Array.from({ length: count }, (_, i) => `poolers-${process.pid}-${String(i).padStart(6, '0')}`);
  await db.pool.query(
    `INSERT INTO sessions (application_id, token_hash, expires_at, created_at, updated_at)
     SELECT $1, h, now() + interval '1 hour', now(), now() FROM unnest($2::text[]) h`,
    [app.id, hashes],
  );
  const a = new AuthService(db.pool, { cacheMs: 0 });
  const b = new AuthService(db.pool, { cacheMs: 0 });
  try {
    for (let round = 0; round < 10; round++) {
      const now = Date.now();
      // Each instance's pending touches in its own insertion order: the flush sorts them.
      for (const hash of hashes) (a as unknown as { touches: Map<string, number> }).touches.set(hash, now);
      for (const hash of [...hashes].reverse()) (b as unknown as { touches: Map<string, number> }).touches.set(hash, now);
      await Promise.all([a.flush(), b.flush()]);
    }
    expect(a.deadlockRetries + b.deadlockRetries).toBe(0);
  } finally {
    await db.pool.query('DELETE FROM sessions WHERE application_id = $1', [app.id]);
    await prismaOf(db).application.delete({ where: { id: app.id } });
    await db.close();
  }
});
