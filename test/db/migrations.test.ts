// The migrations in prisma/migrations build exactly the database that
// prisma/schema.prisma describes, and are recorded the way Prisma records them.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import { openEmbeddedDatabase, type EmbeddedDatabase } from '../../src/db/embedded';
import { MigrationError, migrate, pendingMigrations, readMigrations } from '../../src/db/migrate';
import { diffDatamodels } from '../../src/db/schema-engine';

const opened: { db: EmbeddedDatabase; pool: Pool }[] = [];

async function scratchDatabase(): Promise<Pool> {
  const db = await openEmbeddedDatabase(null);
  // Never closed while idle: PGlite's socket frees its one slot a moment after
  // a client leaves, and a reconnect in that moment is refused.
  const pool = new Pool({ connectionString: db.url, max: 1, idleTimeoutMillis: 0 });
  opened.push({ db, pool });
  return pool;
}

afterAll(async () => {
  for (const { db, pool } of opened) {
    await pool.end();
    await db.close();
  }
});

/** Tables, columns, indexes and constraints of the public schema, Prisma's own table aside. */
async function catalog(pool: Pool) {
  const columns = await pool.query(`
    SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default,
           character_maximum_length, numeric_precision, datetime_precision
      FROM information_schema.columns
     WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
     ORDER BY table_name, column_name`);
  const indexes = await pool.query(`
    SELECT tablename, indexname, indexdef FROM pg_indexes
     WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'
     ORDER BY tablename, indexname`);
  const constraints = await pool.query(`
    SELECT c.conrelid::regclass::text AS table_name, c.conname, pg_get_constraintdef(c.oid) AS definition
      FROM pg_constraint c
     WHERE c.connamespace = 'public'::regnamespace AND c.conrelid::regclass::text <> '_prisma_migrations'
     ORDER BY 1, 2`);
  return { columns: columns.rows, indexes: indexes.rows, constraints: constraints.rows };
}

test('applying the migrations yields the schema that schema.prisma describes', async () => {
  const migrated = await scratchDatabase();
  await migrate(migrated);

  const expected = await scratchDatabase();
  const datamodel = readFileSync(path.resolve(__dirname, '../../prisma/schema.prisma'), 'utf8');
  await expected.query(await diffDatamodels(null, datamodel));

  const actual = await catalog(migrated);
  expect(actual.columns.length).toBeGreaterThan(30);
  expect(actual).toEqual(await catalog(expected));
  // Two embedded databases started, every migration applied, the schema
  // engine's WebAssembly loaded: 31 s (Node 24) / 41 s (Node 20) alone on the
  // shared 2-core machine at load ~20, over jest's 60 s beside another worker
  // (the whole suite on Node 24, 2026-11-26).
}, 180_000);

test('schema.prisma has no change that a new migration would hold', async () => {
  const last = readMigrations().at(-1)!;
  const snapshot = readFileSync(path.resolve(__dirname, '../../prisma/migrations', last.name, 'schema.prisma'), 'utf8');
  const current = readFileSync(path.resolve(__dirname, '../../prisma/schema.prisma'), 'utf8');
  const sql = await diffDatamodels(snapshot, current);
  expect(sql.replace(/^--.*$/gm, '').trim()).toBe('');
});

test("migrations are recorded in Prisma's _prisma_migrations table with sha256 checksums, once", async () => {
  const pool = await scratchDatabase();
  const migrations = readMigrations();
  expect(await pendingMigrations(pool)).toEqual(migrations.map((m) => m.name));
  expect(await migrate(pool)).toEqual(migrations.map((m) => m.name));
  expect(await migrate(pool)).toEqual([]);
  expect(await pendingMigrations(pool)).toEqual([]);

  const { rows } = await pool.query(
    'SELECT migration_name, checksum, finished_at, rolled_back_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name',
  );
  expect(rows).toEqual(
    migrations.map((m) => ({
      migration_name: m.name,
      checksum: createHash('sha256')
        .update(readFileSync(path.resolve(__dirname, '../../prisma/migrations', m.name, 'migration.sql')))
        .digest('hex'),
      finished_at: expect.any(Date),
      rolled_back_at: null,
      applied_steps_count: 1,
    })),
  );
});

test('a migration edited after it was applied is refused, and nothing is applied', async () => {
  const pool = await scratchDatabase();
  await migrate(pool);
  const edited = readMigrations().map((m, i) => (i === 0 ? { ...m, checksum: 'f'.repeat(64) } : m));
  await expect(migrate(pool, edited)).rejects.toThrow(MigrationError);
  await expect(migrate(pool, edited)).rejects.toThrow(/modified after it was applied/);
});

test('a failing migration is rolled back whole and reported', async () => {
  const pool = await scratchDatabase();
  const broken = [...readMigrations(), { name: '29991231000000_broken', sql: 'CREATE TABLE ok_table (id int); SELECT * FROM no_such_table;', checksum: 'x' }];
  await expect(migrate(pool, broken)).rejects.toThrow(/29991231000000_broken failed/);
  const { rows } = await pool.query(
    "SELECT to_regclass('ok_table') IS NULL AS absent, (SELECT count(*)::int FROM _prisma_migrations WHERE migration_name = '29991231000000_broken') AS recorded",
  );
  expect(rows[0]).toEqual({ absent: true, recorded: 0 });
});
