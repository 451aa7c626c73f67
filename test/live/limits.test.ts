// The bounds of live subscriptions (issue 33, item 5): sockets per user and
// per instance, subscriptions per socket, message size, the slow consumer,
// and the HTTP timeouts, which never cut an upgraded socket. Sent as clients
// would send it: graphql-ws's client, or the protocol by hand on a ws socket
// where the client must misbehave.
import WebSocket from 'ws';
import { useService } from '../support/service';
import { seedTenant } from '../support/seed';
import { connectLive, type LiveClient, sleep, wsUrlOf } from '../support/live';

const service = useService({
  live: { socketsPerUser: 2, socketsMax: 6, subscriptionsPerSocket: 2, messageBytesMax: 1024, socketBufferBytes: 64 * 1024, keepAliveMs: 1_000 },
  // Every HTTP bound far below how long the sockets below stay open.
  timeouts: { headersMs: 1_000, bodyIdleMs: 1_000, requestMs: 1_000, keepAliveMs: 1_000 },
});
const seed = () => seedTenant(service.app.provisioning);
const open: LiveClient[] = [];
afterEach(async () => {
  for (const client of open.splice(0)) await client.dispose().catch(() => {});
  await sleep(100);
});
const live = (params: Record<string, unknown>): LiveClient => {
  const client = connectLive(service.baseUrl, params);
  open.push(client);
  return client;
};

const DELETED = 'subscription { messagesDeleted { cursor deletedMessageDatabaseIds } }';

const metric = (name: string): Promise<number> => metricOf(service, name);

async function metricOf(of: { rest: typeof service.rest }, name: string): Promise<number> {
  const text = (await of.rest('GET', '/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? NaN);
}

test('sockets per user: the one over the limit is closed with 1008; another user still connects', async () => {
  const t = await seed();
  const first = live(t.as.owner);
  const second = live(t.as.owner);
  await first.connected;
  await second.connected;
  const third = live(t.as.owner);
  expect(await third.closed).toEqual({ code: 1008, reason: 'At most 2 sockets per user' });
  await live(t.as.member).connected;
});

test('sockets per instance: past the limit a socket is closed with 1013 before anything else', async () => {
  const t = await seed();
  const users = [t.as.owner, t.as.member, t.as.outsider, t.as.onBehalfOf(t.owner.id), t.as.onBehalfOf(t.member.id), t.as.onBehalfOf(t.outsider.id)];
  const clients = users.map((as) => live(as));
  const outcomes = await Promise.all(
    clients.map((c) =>
      c.connected.then(
        () => 'ok',
        () => 'closed',
      ),
    ),
  );
  expect(outcomes.filter((o) => o === 'ok').length).toBeLessThanOrEqual(6);
  const over = live(t.as.member);
  expect((await over.closed).code).toBe(1013);
  expect(await metric('graphql_ws_connections')).toBeLessThanOrEqual(6);
});

test('subscriptions per socket: the one over the limit fails with TOO_MANY_REQUESTS; the others run', async () => {
  const t = await seed();
  const client = live(t.as.owner);
  await client.connected;
  const a = client.subscribe(DELETED);
  const b = client.subscribe(DELETED);
  await sleep(200);
  const c = client.subscribe(DELETED);
  await c.ended;
  expect(c.results).toEqual([{ errors: [expect.objectContaining({ extensions: { code: 'TOO_MANY_REQUESTS' } })] }]);
  expect(await metric('graphql_ws_subscriptions')).toBe(2);
  await service.call('DELETE', `/chat/Message/${t.messageIds[0]}.json?force=1`, { headers: t.as.owner });
  await a.waitFor(1);
  await b.waitFor(1);
});

test('a message over LIVE_MESSAGE_BYTES_MAX closes the socket with 1009', async () => {
  const t = await seed();
  const client = live(t.as.owner);
  await client.connected;
  client.subscribe(`subscription { messagesDeleted { cursor ${'__typename '.repeat(200)} } }`);
  expect((await client.closed).code).toBe(1009);
});

test('the HTTP timeouts never cut an upgraded socket: idle past all of them (pings answered), it still receives events', async () => {
  const t = await seed();
  const client = live(t.as.owner);
  await client.connected;
  const sub = client.subscribe(DELETED);
  await sleep(3_500);
  await service.call('DELETE', `/chat/Message/${t.messageIds[0]}.json?force=1`, { headers: t.as.owner });
  await sub.waitFor(1);
});

describe('the slow consumer', () => {
  // Pings far apart: a client that stops reading also stops answering them, and would be dropped for that first.
  const slowService = useService({ live: { socketBufferBytes: 64 * 1024, socketQueueMax: 600, keepAliveMs: 120_000 } });

  test('a slow consumer is closed (1013) when its bound fills, never growing the process; the others go on', async () => {
    const t = await seedTenant(slowService.app.provisioning);
    const fast = connectLive(slowService.baseUrl, t.as.member);
    open.push(fast);
    await fast.connected;
    const fastSub = fast.subscribe(DELETED);
    // The slow one, by hand: it stops reading once subscribed.
    const socket = new WebSocket(wsUrlOf(slowService.baseUrl), 'graphql-transport-ws');
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: t.as.owner }));
    await new Promise((resolve) => socket.once('message', resolve));
    socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: DELETED } }));
    await sleep(200);
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    (socket as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    const dropped = await metricOf(slowService, 'graphql_ws_dropped_consumers_total');
    // Another program writing events: 3,000 deletions of 100 ids each (~7 KB a message), well past what the kernel's buffers and the bounds hold.
    await slowService.db.pool.query(
      `INSERT INTO live_events (application_id, dialog_id, kind, message_ids)
       SELECT $1, $2, 'deleted', ARRAY(SELECT lpad(to_hex(g * 1000 + i), 24, '0') FROM generate_series(1, 100) i) FROM generate_series(1, 3000) g`,
      [t.applicationId, t.dialogId],
    );
    const deadline = Date.now() + 20_000;
    while ((await metricOf(slowService, 'graphql_ws_dropped_consumers_total')) === dropped && Date.now() < deadline) await sleep(200);
    expect(await metricOf(slowService, 'graphql_ws_dropped_consumers_total')).toBe(dropped + 1);
    (socket as unknown as { _socket: { resume(): void } })._socket.resume();
    expect(await closed).toBe(1013);
    // The member's socket took every event.
    await fastSub.waitFor(3_000, 60_000);
  }, 60_000);
});
