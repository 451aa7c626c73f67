// A named statement's row description is asked for once per connection
// (src/overrides/described-query.ts): later runs on that connection skip Describe
// and still give the same rows, typed the same; other connections, unnamed
// statements and a connection whose statement failed keep working.
import { type Database, openDatabase } from '../../src/db';
import { query, run, statement } from '../../src/db/sql';
import { openTestDatabase } from '../support/service';
import { needServer, requires } from '../support/requires';

const PAIR = statement({
  name: 'test_described_pair',
  params: ['int4', 'text'],
  text: `SELECT $1::int4 + 1 AS n, $2::text AS s, now() AS at, ARRAY[$1::int4] AS list, NULL::text AS nothing`,
});
const FAILING = statement({
  name: 'test_described_failing',
  params: ['int4'],
  text: `SELECT 10 / $1::int4 AS q, 'x' AS s`,
});

let db: Database;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.close();
});

test('described on its first run on a connection, not on later ones, with the same rows', async () => {
  const client = await db.pool.connect();
  try {
    const connection = (client as unknown as { connection: { on(e: string, f: () => void): void; off(e: string, f: () => void): void } }).connection;
    let count = 0;
    const seen = () => count++;
    connection.on('rowDescription', seen);
    const rows = [];
    for (let i = 0; i < 3; i++) rows.push(await run(client, PAIR, [i, `v${i}`] as never));
    connection.off('rowDescription', seen);
    expect(count).toBe(1);
    rows.forEach((result, i) => {
      expect(result).toHaveLength(1);
      const row = result[0] as { n: number; s: string; at: Date; list: number[]; nothing: null };
      expect(row.n).toBe(i + 1);
      expect(row.s).toBe(`v${i}`);
      expect(row.at).toBeInstanceOf(Date);
      expect(row.list).toEqual([i]);
      expect(row.nothing).toBeNull();
      expect(Object.keys(row)).toEqual(['n', 's', 'at', 'list', 'nothing']);
    });
  } finally {
    client.release();
  }
});

test('a failed run leaves the connection answering, and the kept description right', async () => {
  const client = await db.pool.connect();
  try {
    expect(await run(client, FAILING, [2] as never)).toEqual([{ q: 5, s: 'x' }]);
    await expect(run(client, FAILING, [0] as never)).rejects.toMatchObject({ code: '22012' });
    expect(await run(client, FAILING, [5] as never)).toEqual([{ q: 2, s: 'x' }]);
  } finally {
    client.release();
  }
});

test('every connection of the pool answers (each described once)', async () => {
  const results = await Promise.all(Array.from({ length: 12 }, (_, i) => query(db.pool, PAIR, [i, 'p'] as never)));
  results.forEach((rows, i) => expect((rows[0] as { n: number }).n).toBe(i + 1));
});

requires(needServer).test('unnamed statements (DB_PREPARED_STATEMENTS=unnamed) are described each time and answer the same', async () => {
  const unnamed = await openDatabase({ url: process.env.TEST_RUN_DATABASE_URL!, poolMax: 2, migrate: false, preparedStatements: 'unnamed' });
  try {
    for (let i = 0; i < 3; i++) {
      const rows = await query(unnamed.pool, PAIR, [i, 'u'] as never);
      expect(rows).toHaveLength(1);
      expect((rows[0] as { n: number; s: string }).n).toBe(i + 1);
      expect((rows[0] as { s: string }).s).toBe('u');
    }
  } finally {
    await unnamed.close();
  }
});
