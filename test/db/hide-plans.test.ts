// Delete for me is one call of messages_hide_for_user, whose statements
// PL/pgSQL prepares once per connection. PostgreSQL's plan cache kept
// choosing a custom plan for them, planning every statement again on every
// call (the generic plan of `id = ANY(p_ids)` is costed for ten ids): 1.06 ms
// a call against 0.48 for the same statements prepared by a client, the whole
// of the benchmark's "delete 1 id for me" gap. The function now runs on
// generic plans (migration hide_generic_plans). Seen here as auto_explain logs
// the statements of a call made after the plan cache has had its five custom
// plans to compare: a custom plan names the ids it was made for, a generic
// one the parameter. A generic plan is kept as long as the statistics it was
// made from: made on a small database, it must still be right on a large one.
//
// auto_explain is a module of the PostgreSQL server; the embedded database
// has none loaded, so this runs on a server only (docs/development.md).
import { Client } from 'pg';
import type { Database } from '../../src/db';
import { needServer, requires } from '../support/requires';
import { seedTenant, servicesOver } from '../support/seed';
import { openTestDatabase } from '../support/service';

let db: Database;
let client: Client;

beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await client?.end();
  await db?.close();
});

requires(needServer).test('the hide runs every statement on a generic plan, not planned again on each call', async () => {
  const { services, provisioning } = servicesOver(db);
  const t = await seedTenant(provisioning);
  const bodies = (n: number) => Array.from({ length: n }, (_, i) => `m${i}`);
  const ones = await services.chat.createMany({ dialogId: t.dialogId, senderId: t.owner.id, bodies: bodies(8) });
  const hundred = await services.chat.createMany({ dialogId: t.dialogId, senderId: t.owner.id, bodies: bodies(100) });
  client = new Client({ connectionString: process.env.TEST_RUN_DATABASE_URL });
  await client.connect();
  await client.query("LOAD 'auto_explain'");
  await client.query('SET auto_explain.log_min_duration = 0');
  await client.query('SET auto_explain.log_nested_statements = on');
  await client.query('SET client_min_messages = log');
  let logged: string[] = [];
  client.on('notice', (notice) => logged.push(notice.message ?? ''));
  const hide = async (ids: string[]) => {
    logged = [];
    const { rows } = await client.query<{ ids: string[] }>('SELECT messages_hide_for_user($1, $2, $3, 0) AS ids', [t.applicationId, t.owner.id, ids]);
    expect([...rows[0]!.ids].sort()).toEqual([...ids].sort());
  };
  // Six calls of one id each: the plan cache has compared its custom plans.
  for (const id of ones.slice(0, 6)) await hide([id]);
  for (const ids of [[ones[6]!], hundred]) {
    await hide(ids);
    // Its three statements, each planned once for any call: none names this call's ids.
    const own = ['FOR NO KEY UPDATE OF m', 'INSERT INTO message_hides', 'UPDATE messages m SET body = NULL'].map((text) => {
      const plans = logged.filter((plan) => plan.includes(text));
      expect(plans).toHaveLength(1);
      return plans[0]!;
    });
    for (const plan of logged) for (const id of ids) expect(plan).not.toContain(id);
    // Made on this small database, the plans are those of a large one: the
    // messages by their ids, everything else by its key, no table read whole
    // (a plan that read the hides when they were few would read all of them
    // later, as many as there are).
    const [lock, insert, purge] = own as [string, string, string];
    for (const plan of [lock, purge]) {
      expect(plan).toMatch(/(Index Scan using|Bitmap Index Scan on) messages_pkey/);
      expect(plan).toMatch(/Index Cond: \(id = ANY \(\$\d+\)\)/);
    }
    // The hide inserts what the lock returned: it reads no table.
    expect(insert).toMatch(/Function Scan on unnest/);
    expect(insert).not.toMatch(/Scan (using|on) \w+ on (messages|dialogs|dialog_occupants)\b/);
    for (const plan of logged) expect(plan).not.toMatch(/Seq Scan on (messages|message_hides|dialogs|dialog_occupants)\b/);
    expect(purge).toMatch(/Index Only Scan using message_hides_pkey on message_hides x/);
  }
});
