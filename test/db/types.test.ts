// The service's pools parse timestamptz with postgres-date 2 (src/db/types.ts)
// instead of pg's default: the same instant for whatever text PostgreSQL
// sends, whatever the session's time zone, on this run's database.
import fc from 'fast-check';
import { types } from 'pg';
import type { Database } from '../../src/db';
import { openTestDatabase } from '../support/service';

let db: Database;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db.close();
});

// Offsets of whole hours, of minutes, negative ones, and a local mean time
// with seconds (Amsterdam before 1937: +00:19:32).
const ZONES = ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Pacific/Kiritimati', 'Europe/Amsterdam'];
const pgDefault = types.getTypeParser(types.builtins.TIMESTAMPTZ, 'text');

test('every timestamptz reads as the instant pg’s default parser gives, in every time zone', async () => {
  const client = await db.pool.connect();
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ZONES),
        fc.oneof(
          fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString()),
          fc.constantFrom('infinity', '-infinity', '0044-03-15 12:00:00+00 BC', '1890-06-01 12:00:00.123456+00', '2026-11-24 01:17:56.5+00'),
        ),
        async (zone, value) => {
          await client.query(`SET TimeZone = '${zone}'`);
          const { rows } = await client.query<{ parsed: unknown; text: string }>('SELECT $1::timestamptz AS parsed, $1::timestamptz::text AS text', [value]);
          const { parsed, text } = rows[0]!;
          const expected = pgDefault(text) as Date | number;
          expect([text, parsed instanceof Date ? parsed.getTime() : parsed]).toEqual([text, expected instanceof Date ? expected.getTime() : expected]);
        },
      ),
      { numRuns: 300 },
    );
  } finally {
    await client.query('RESET TimeZone');
    client.release();
  }
});
