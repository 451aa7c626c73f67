// Applies prisma/migrations/<timestamp>_<name>/migration.sql in order and
// records them in Prisma's own `_prisma_migrations` table (same columns, same
// sha256 checksums), so a database migrated here is one `prisma migrate
// deploy` recognises, and vice versa. Prisma's migrate command needs a native
// schema engine that cannot be downloaded on these machines; this needs none.
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import type { Pool, PoolClient } from 'pg';
import { MIGRATIONS_DIR } from '../paths';

/** Prisma's advisory lock key, so this runner and `prisma migrate` exclude each other. */
const MIGRATION_LOCK_KEY = 72707369;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

const CREATE_HISTORY_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface HistoryRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/**
 * Applies the pending migrations; returns the names of those it applied.
 *
 * Any number of instances may start at once: each migration is applied in a
 * transaction that first takes a transaction-level advisory lock and then
 * reads the history again, so one instance applies it and the others, having
 * waited for the lock, find it applied. Transaction-level, not session-level:
 * through PgBouncer in transaction mode a session lock could be taken on one
 * server connection and released (or never released) on another.
 */
export async function migrate(pool: Pool, migrations = readMigrations()): Promise<string[]> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    for (;;) {
      // Migrations (and the wait for another instance's) are not requests:
      // the statement timeout does not apply to them (SET LOCAL: this
      // transaction only, whatever connection a pooler lends).
      await client.query('BEGIN; SET LOCAL statement_timeout = 0');
      let next: Migration | undefined;
      try {
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
        await client.query(CREATE_HISTORY_TABLE);
        next = checkHistory(migrations, await history(client))[0];
        if (next) await applyOne(client, next);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        if (error instanceof MigrationError) throw error;
        throw new MigrationError(`Migration ${next?.name ?? 'history'} failed: ${(error as Error).message}`);
      }
      if (!next) return applied;
      applied.push(next.name);
    }
  } finally {
    client.release();
  }
}

/** Names of the migrations not yet applied (throws on a tampered or failed history). */
export async function pendingMigrations(pool: Pool, migrations = readMigrations()): Promise<string[]> {
  const { rows } = await pool.query<{ exists: boolean }>("SELECT to_regclass('_prisma_migrations') IS NOT NULL AS exists");
  if (!rows[0]?.exists) return migrations.map((m) => m.name);
  const client = await pool.connect();
  try {
    return checkHistory(migrations, await history(client)).map((m) => m.name);
  } finally {
    client.release();
  }
}

async function history(client: PoolClient): Promise<HistoryRow[]> {
  const { rows } = await client.query<HistoryRow>('SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at');
  return rows.filter((row) => row.rolled_back_at === null);
}

function checkHistory(migrations: Migration[], applied: HistoryRow[]): Migration[] {
  const byName = new Map(applied.map((row) => [row.migration_name, row]));
  for (const row of applied) {
    if (row.finished_at === null) {
      throw new MigrationError(`Migration ${row.migration_name} failed earlier and was not rolled back; repair the database first.`);
    }
  }
  for (const migration of migrations) {
    const row = byName.get(migration.name);
    if (row && row.checksum !== migration.checksum) {
      throw new MigrationError(`Migration ${migration.name} was modified after it was applied.`);
    }
  }
  return migrations.filter((m) => !byName.has(m.name));
}

/** Inside the caller's transaction: the migration and its history row commit together or not at all. */
async function applyOne(client: PoolClient, migration: Migration): Promise<void> {
  const id = randomUUID();
  await client.query('INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())', [
    id,
    migration.checksum,
    migration.name,
  ]);
  await client.query(migration.sql);
  await client.query('UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1', [id]);
}
