// A history page's plan must not depend on how many messages the reader has
// hidden. PostgreSQL plans a named statement generically after a few runs;
// planned as an anti-join, the hides check read every hide of the user for
// every message of the page (a benchmark caller with 50,000 hides: a page in
// 290 ms instead of 0.3, and requests answered 503 behind it). Each
// statement that pages a history is planned generically here and must look
// each message's hide up by message_hides' key, and never join the hides.
import type { PoolClient } from 'pg';
import type { Database } from '../../src/db';
import type { AnyStatement } from '../../src/db/sql';
import * as chat from '../../src/db/statements/chat';
import * as dialogs from '../../src/db/statements/dialogs';
import { type PlanNode, nodes } from '../support/plans';
import { openTestDatabase } from '../support/service';

let db: Database;
let client: PoolClient;

beforeAll(async () => {
  db = await openTestDatabase();
  client = await db.pool.connect();
  await client.query('SET plan_cache_mode = force_generic_plan');
});
afterAll(async () => {
  client?.release();
  await db?.close();
});

const PAGING = [
  chat.HISTORY_FIRST_PAGE,
  chat.HISTORY_LAST_PAGE,
  chat.HISTORY_PAGE_AFTER,
  chat.HISTORY_PAGE_BEFORE,
  dialogs.DIALOG_WITH_FIRST_PAGE,
  dialogs.DIALOG_WITH_LAST_PAGE,
  dialogs.DIALOG_WITH_PAGE_AFTER,
  dialogs.DIALOG_WITH_PAGE_BEFORE,
  dialogs.DIALOGS_PAGE,
  dialogs.DIALOGS_PAGE_BACK,
  dialogs.DIALOG_OF_USER,
] as AnyStatement[];

test.each(PAGING.map((s) => [s.name, s] as const))('%s: under a generic plan, each hide is looked up by key', async (name, statement) => {
  const prepared = `plan_${name.replace(/\W/g, '_')}`;
  await client.query(`PREPARE ${prepared} AS ${statement.text}`);
  try {
    const args = statement.params.map(() => 'NULL').join(', ');
    // force_generic_plan (set above): EXECUTE's plan is the generic one, whatever the arguments.
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) EXECUTE ${prepared}(${args})`);
    const all = [...nodes(rows[0]!['QUERY PLAN'][0].Plan)];
    const hides = all.filter((n) => n['Relation Name'] === 'message_hides');
    expect(hides.length).toBeGreaterThan(0);
    for (const n of hides) expect([n['Node Type'], n['Index Name']]).toEqual([expect.stringMatching(/^Index (Only )?Scan$/), 'message_hides_pkey']);
    expect(all.filter((n) => n['Join Type'] === 'Anti')).toEqual([]);
  } finally {
    await client.query(`DEALLOCATE ${prepared}`);
  }
});
