// A sweeper batch must reach the rows it deletes the same way whatever the
// statistics say. Selected by `id IN (…)`, the DELETE's plan followed them:
// statistics taken while `sessions` was nearly empty, with 1,000,000 expired
// sessions inserted since, made it a nested loop over a sequential scan of the
// whole table (80 s a batch of 1,000 in the benchmark; the sweeper, pausing in
// proportion to its batches, removed 82 sessions a second). A batch now
// deletes by the ctids of the rows it locked: a TID scan under every plan.
// Each plan is read inside a transaction that holds a backlog of 50,000 rows
// (a TID scan is no cheaper than reading a table of a page or two), rolled
// back after.
import type { PoolClient } from 'pg';
import type { Database } from '../../src/db';
import type { AnyStatement } from '../../src/db/sql';
import * as sweeper from '../../src/db/statements/sweeper';
import { type PlanNode, nodes } from '../support/plans';
import { openTestDatabase } from '../support/service';

let db: Database;
let client: PoolClient;

beforeAll(async () => {
  db = await openTestDatabase();
  client = await db.pool.connect();
});
afterAll(async () => {
  client?.release();
  await db?.close();
});

const BY_ROW = [
  [sweeper.SWEEP_SESSIONS, 'sessions'],
  [sweeper.SWEEP_RETAINED_CONTENT, 'retained_message_contents'],
] as [AnyStatement, string][];

/** Expired rows for both statements, foreign keys unchecked (the transaction is rolled back). */
async function backlog(): Promise<void> {
  await client.query('SET LOCAL session_replication_role = replica');
  await client.query(`INSERT INTO sessions (token_hash, application_id, expires_at)
    SELECT 'sweeper-plans-' || g, -1, now() - interval '1 day' FROM generate_series(1, 50000) g`);
  await client.query(`INSERT INTO retained_message_contents (message_id, body, expires_at)
    SELECT 'sweeper-plans-' || g, 'text', now() - interval '1 day' FROM generate_series(1, 50000) g`);
}

describe.each(['force_custom_plan', 'force_generic_plan'])('under %s', (mode) => {
  test.each(BY_ROW.map(([s, table]) => [s.name, s, table] as const))('%s deletes the rows it locked by TID', async (name, statement, table) => {
    const prepared = `plan_${name.replace(/\W/g, '_')}`;
    await client.query('BEGIN');
    await backlog();
    await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
    await client.query(`PREPARE ${prepared} AS ${statement.text}`);
    try {
      const args = statement.params.map((type) => (type === 'timestamptz' ? 'now()' : '1000')).join(', ');
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) EXECUTE ${prepared}(${args})`);
      const all = [...nodes(rows[0]!['QUERY PLAN'][0].Plan)];
      const deletes = all.filter((n) => n['Node Type'] === 'ModifyTable' && n.Operation === 'Delete');
      expect(deletes.map((n) => n['Relation Name'])).toEqual([table]);
      // The DELETE's own scan of the table: its one child that reads the table.
      const targets = deletes[0]!.Plans!.filter((n) => n['Relation Name'] === table);
      expect(targets.map((n) => n['Node Type'])).toEqual(['Tid Scan']);
    } finally {
      await client.query('ROLLBACK');
      await client.query(`DEALLOCATE ${prepared}`);
    }
  });
});
