// A digest of every table of the database: its row count and an md5 of its
// rows (as text, in a fixed order). Two digests taken around a request tell
// whether the request wrote anything, whatever table or column it touched;
// diffDigests() says what changed. Tables are listed from the catalogue on
// each call, so a table that disappears (or appears) shows as well.
import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';

/** A pool, or one client of it (inside a transaction). */
export type Queryable = Pool | PoolClient;

export interface TableDigest {
  rows: number;
  md5: string;
}

/** table name → its digest. */
export type Digest = Record<string, TableDigest>;

/**
 * Columns left out of the digest: the bookkeeping a successfully
 * authenticated session request writes on purpose (docs/decisions.md, Decisions:
 * "each request slides the expiry; each request with a user session sets the
 * user's last_request_at"), written either by the request itself (a credential
 * cache miss: src/services/auth.ts TOUCH_SESSION) or by the batched flush up
 * to `flushMs` later (FLUSH_TOUCHES). Both writes belong to authentication,
 * not to the operation: a request that authenticates and then fails (403
 * WrongPermissions, 422 from a resolver, 404 user not found) still writes
 * them, with the cache on or off. Starting the service with
 * `auth: { cacheMs: 0 }` would only make them synchronous: the values would
 * still move on every authenticated request, so a digest that kept them could
 * not tell "this failed request changed nothing". Leaving exactly these two
 * columns out keeps every other column of every table (including the rest of
 * `sessions` and `users`, and their row counts) under the check, and makes
 * the digest independent of when a flush lands, so the service runs with its
 * production auth settings.
 */
export const BOOKKEEPING_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  // expiry_hour: computed by the database from expires_at (the hour it falls in).
  sessions: ['expires_at', 'expiry_hour'],
  users: ['last_request_at'],
};

/** Tables that are not the service's data: the migration runner's own ledger. */
const IGNORED_TABLES = new Set(['_prisma_migrations']);

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const literal = (value: string): string => `'${value.replace(/'/g, "''")}'`;

/** The tables of the current schema, from information_schema (a named statement: planned once per connection). */
const TABLES = {
  name: 'fuzz_digest_tables',
  text: `SELECT table_name::text AS name FROM information_schema.tables
          WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`,
};

/**
 * One statement for the whole digest: one round trip, and on the embedded
 * database the pool's single connection is busy for the shortest time. It is
 * a named (prepared) statement per table list, so the embedded database plans
 * it once; the table list is read on every call, so a dropped or added table
 * shows. A row's text is `t::text`; for a table with bookkeeping columns it is
 * its jsonb form without them (jsonb's text has a fixed key order).
 */
function digestStatement(tables: string[]): { name: string; text: string } {
  const parts = tables.map((table) => {
    const skip = BOOKKEEPING_COLUMNS[table];
    const row = skip ? `(to_jsonb(x) - ARRAY[${skip.map(literal).join(', ')}]::text[])::text` : 'x::text';
    // string_agg over a fixed order: the md5 does not depend on where rows sit (an UPDATE moves them).
    return `SELECT ${literal(table)} AS name, count(*)::int AS rows, md5(coalesce(string_agg(r, ',' ORDER BY r), '')) AS md5
              FROM (SELECT ${row} AS r FROM ${quoteIdent(table)} x) s`;
  });
  const text = parts.join('\nUNION ALL\n');
  return { name: `fuzz_digest_${createHash('md5').update(text).digest('hex').slice(0, 16)}`, text };
}

/** Every table of the current schema (but `_prisma_migrations`): rows and md5, bookkeeping columns left out. */
export async function digest(pool: Queryable): Promise<Digest> {
  const q = pool as Pool;
  const { rows: found } = await q.query<{ name: string }>(TABLES);
  const tables = found.map((t) => t.name).filter((t) => !IGNORED_TABLES.has(t));
  if (tables.length === 0) return {};
  const { rows } = await q.query<{ name: string; rows: number; md5: string }>(digestStatement(tables));
  const out: Digest = {};
  for (const row of rows.sort((a, b) => a.name.localeCompare(b.name))) out[row.name] = { rows: row.rows, md5: row.md5 };
  return out;
}

/** A readable account of what differs between two digests; '' when they are equal. */
export function diffDigests(before: Digest, after: Digest): string {
  const lines: string[] = [];
  for (const table of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const a = before[table];
    const b = after[table];
    if (!a) lines.push(`table ${table} appeared (${b!.rows} rows)`);
    else if (!b) lines.push(`table ${table} disappeared (had ${a.rows} rows)`);
    else if (a.rows !== b.rows) lines.push(`table ${table}: ${a.rows} → ${b.rows} rows`);
    else if (a.md5 !== b.md5) lines.push(`table ${table}: same ${a.rows} rows, contents changed`);
  }
  return lines.join('; ');
}

/** The tables whose digest differs. */
export function changedTables(before: Digest, after: Digest): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((table) => before[table]?.rows !== after[table]?.rows || before[table]?.md5 !== after[table]?.md5)
    .sort();
}

/**
 * A digest of two databases that started as copies, for comparing what the
 * same requests did to each (test/fuzz/differential.test.ts). Values that
 * differ between two correct runs are left out or reduced: a timestamp
 * column says only whether it is set (now() differs from run to run; a
 * message deleted for everyone still differs from one that is not), a
 * session's token hash is left out (a new session's token is random), and
 * the bookkeeping columns are left out as in `digest`.
 */
export async function comparableDigest(pool: Queryable): Promise<Digest> {
  const q = pool as Pool;
  const { rows: columns } = await q.query<{ table: string; column: string; type: string }>({
    name: 'comparable_digest_columns',
    text: `SELECT c.table_name::text AS table, c.column_name::text AS column, c.data_type::text AS type
             FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
            WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' ORDER BY c.table_name, c.ordinal_position`,
  });
  const byTable = new Map<string, string[]>();
  for (const { table, column, type } of columns) {
    // live_events.xid: the writing transaction's id, which two databases number apart (their own background transactions).
    if (IGNORED_TABLES.has(table) || BOOKKEEPING_COLUMNS[table]?.includes(column) || (table === 'sessions' && column === 'token_hash')) continue;
    if (table === 'live_events' && column === 'xid') continue;
    const value = type.startsWith('timestamp') || type === 'date' ? `(x.${quoteIdent(column)} IS NOT NULL)` : `x.${quoteIdent(column)}`;
    (byTable.get(table) ?? byTable.set(table, []).get(table)!).push(`${literal(column)}, ${value}`);
  }
  if (byTable.size === 0) return {};
  const text = [...byTable]
    .map(
      ([table, pairs]) => `SELECT ${literal(table)} AS name, count(*)::int AS rows, md5(coalesce(string_agg(r, ',' ORDER BY r), '')) AS md5
              FROM (SELECT jsonb_build_object(${pairs.join(', ')})::text AS r FROM ${quoteIdent(table)} x) s`,
    )
    .join('\nUNION ALL\n');
  const { rows } = await q.query<{ name: string; rows: number; md5: string }>({
    name: `comparable_${createHash('md5').update(text).digest('hex').slice(0, 16)}`,
    text,
  });
  const out: Digest = {};
  for (const row of rows.sort((a, b) => a.name.localeCompare(b.name))) out[row.name] = { rows: row.rows, md5: row.md5 };
  return out;
}
