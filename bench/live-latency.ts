// Live events' delivery latency (issue 33), a first measure: one instance,
// USERS users each on one WebSocket subscribed to all their dialogs, DIALOGS
// dialogs each with every user in it, RATE deletes for everyone a second for
// SECONDS seconds written straight to the database (one UPDATE each, as
// another program would), each reaching every socket. Latency: from the
// UPDATE's sending (so its own round trip and commit included) to the
// event's arrival at a client.
//   DATABASE_URL=postgres://… npx tsx bench/live-latency.ts   (embedded without)
import { createApp } from '../src/app';
import { openDatabase } from '../src/db';
import { newSecretsKey } from '../src/services/secrets';
import { connectLive } from '../test/support/live';
import { percentile } from '../scripts/lib/percentile';

const USERS = Number(process.env.USERS ?? 20);
const DIALOGS = Number(process.env.DIALOGS ?? 50);
const RATE = Number(process.env.RATE ?? 200);
const SECONDS = Number(process.env.SECONDS ?? 5);

async function main(): Promise<void> {
  const database = await openDatabase({ url: process.env.DATABASE_URL, dataDir: null, migrate: true });
  const app = await createApp({ database, secretsKey: newSecretsKey(), metrics: false });
  const address = await app.fastify.listen({ host: '127.0.0.1', port: 0 });
  const p = app.provisioning;
  const { application, apiKey } = await p.applications.create(`live-bench ${Date.now()}`);
  const users = [];
  for (let i = 0; i < USERS; i++) users.push(await p.users.create({ applicationId: application.id, login: `u${i}`, password: 'password123' }));
  const messages: string[] = [];
  const total = RATE * SECONDS;
  for (let d = 0; d < DIALOGS; d++) {
    const dialog = await p.chat.createDialog({ applicationId: application.id, ownerId: users[0]!.id, occupantIds: users.slice(1).map((u) => u.id) });
    messages.push(
      ...(await app.services.chat.createMany({
        dialogId: dialog.id,
        senderId: users[0]!.id,
        bodies: Array.from({ length: Math.ceil(total / DIALOGS) }, (_, i) => `m${i}`),
      })),
    );
  }
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const seen = new Set<string>();
  const perClient: number[] = users.map(() => 0);
  const clients = users.map((user) => connectLive(address, { Authorization: `ApiKey ${apiKey}`, 'On-Behalf-Of': String(user.id) }));
  await Promise.all(clients.map((c) => c.connected));
  for (const [index, client] of clients.entries()) {
    client.client.subscribe(
      { query: 'subscription { messagesDeleted { deletedMessageDatabaseIds } }' },
      {
        next: (result) => {
          const id = (result.data as { messagesDeleted: { deletedMessageDatabaseIds: string[] } }).messagesDeleted.deletedMessageDatabaseIds[0]!;
          latencies.push(performance.now() - sentAt.get(id)!);
          seen.add(id);
          perClient[index]!++;
        },
        error: () => {},
        complete: () => {},
      },
    );
  }
  // Every subscription in place before the first event (a later one is not owed the earlier events).
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  // Spread over the dialogs, at RATE a second.
  const order = messages.slice(0, total);
  const started = performance.now();
  for (let i = 0; i < order.length; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const id = order[i]!;
    sentAt.set(id, performance.now());
    void database.pool.query('UPDATE messages SET deleted_at = now() WHERE id = $1', [id]);
  }
  const expected = order.length * USERS;
  const deadline = performance.now() + 30_000;
  while (latencies.length < expected && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  const sorted = latencies.filter((l) => Number.isFinite(l)).sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      database: database.embedded ? 'embedded' : 'server',
      users: USERS,
      dialogs: DIALOGS,
      eventsPerSecond: RATE,
      events: order.length,
      deliveries: `${latencies.length}/${expected}`,
      p50ms: Math.round(percentile(sorted, 50) * 10) / 10,
      p99ms: Math.round(percentile(sorted, 99) * 10) / 10,
      maxMs: Math.round((sorted.at(-1) ?? NaN) * 10) / 10,
    }),
  );
  if (process.env.DEBUG_LIVE) {
    const missing = order.filter((id) => !seen.has(id));
    console.log('missing', missing.length, 'seen per client', perClient, 'ids', missing.slice(0, 3));
    const rows = await database.pool.query('SELECT xid::text, id::text, kind, message_ids FROM live_events WHERE $1 = ANY(message_ids)', [missing[0] ?? '']);
    console.log(rows.rows);
  }
  for (const client of clients) await client.dispose();
  await app.close();
  await database.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
