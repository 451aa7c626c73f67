// Live events over WebSocket (issue 33), through graphql-ws's own client as
// an app would connect: who is told, replays, credentials and close codes.
// Runs on the embedded database and on a server (TEST_DATABASE_URL).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import { needServer, requires } from '../support/requires';
import { startService, useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';
import { connectLive, type LiveClient, sleep, subscribedLive } from '../support/live';

const service = useService({ live: { initTimeoutMs: 500, recheckMs: 1_000 } });
const seed = () => seedTenant(service.app.provisioning);
const open: LiveClient[] = [];
afterEach(async () => {
  for (const client of open.splice(0)) await client.dispose().catch(() => {});
});

const live = (params: Record<string, unknown> | undefined, options?: { headers?: Record<string, string> }): LiveClient => {
  const client = connectLive(service.baseUrl, params, options);
  open.push(client);
  return client;
};

const DELETED = /* GraphQL */ `
  subscription Deleted($dialogId: ID, $after: String) {
    messagesDeleted(dialogId: $dialogId, after: $after) {
      cursor
      dialogId
      scope
      deletedMessageIds
      deletedMessageDatabaseIds
      deletedAt
    }
  }
`;

const deleteForEveryone = (t: Tenant, ids: string[]) => service.call('DELETE', `/chat/Message/${ids.join(',')}.json?force=1`, { headers: t.as.owner });
const deleteForMe = (t: Tenant, ids: string[], as: Record<string, string>) => service.call('DELETE', `/chat/Message/${ids.join(',')}.json`, { headers: as });

/** A subscriber whose subscription is in place (its registration reached the hub). */
const subscribed = (params: Record<string, unknown>, variables: Record<string, unknown> = {}) =>
  subscribedLive(service.baseUrl, open, params, DELETED, variables);

const gid = (type: string, id: string) => Buffer.from(`${type}:${id}`).toString('base64url');

describe('who is told', () => {
  test('a delete for everyone reaches every occupant (session and API key with On-Behalf-Of), not an outsider, not another application', async () => {
    const t = await seed();
    const other = await seed();
    const owner = await subscribed(t.as.owner);
    const member = await subscribed(t.as.onBehalfOf(t.member.id));
    const outsider = await subscribed(t.as.outsider);
    const stranger = await subscribed(other.as.owner);
    const res = await deleteForEveryone(t, [t.messageIds[0]!, t.messageIds[1]!]);
    expect(res.status).toBe(200);
    await owner.subscription.waitFor(1);
    await member.subscription.waitFor(1);
    const event = owner.subscription.events[0].messagesDeleted;
    expect(event).toEqual({
      cursor: expect.any(String),
      dialogId: gid('Dialog', t.dialogId),
      scope: 'FOR_EVERYONE',
      deletedMessageIds: [t.messageIds[0], t.messageIds[1]].sort().map((id) => gid('Message', id!)),
      deletedMessageDatabaseIds: [t.messageIds[0], t.messageIds[1]].sort(),
      deletedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(member.subscription.events).toEqual(owner.subscription.events);
    await sleep(300);
    expect(owner.subscription.results).toHaveLength(1);
    expect(outsider.subscription.results).toHaveLength(0);
    expect(stranger.subscription.results).toHaveLength(0);
  });

  test("the event's dialog is the dialog as its subscriber sees it (chat's Dialog type)", async () => {
    const t = await seed();
    const client = live(t.as.owner);
    await client.connected;
    const subscription = client.subscribe(`subscription { messagesDeleted { dialogId dialog { id databaseId } } }`, {});
    await sleep(150);
    expect((await deleteForEveryone(t, [t.messageIds[0]!])).status).toBe(200);
    await subscription.waitFor(1);
    expect(subscription.events[0].messagesDeleted).toEqual({
      dialogId: gid('Dialog', t.dialogId),
      dialog: { id: gid('Dialog', t.dialogId), databaseId: t.dialogId },
    });
  });

  test("a delete for me reaches only the acting user's own sockets (their other devices), as FOR_ME", async () => {
    const t = await seed();
    const memberPhone = await subscribed(t.as.member);
    const memberLaptop = await subscribed(t.as.onBehalfOf(t.member.id));
    const owner = await subscribed(t.as.owner);
    expect((await deleteForMe(t, [t.messageIds[2]!], t.as.member)).status).toBe(200);
    await memberPhone.subscription.waitFor(1);
    await memberLaptop.subscription.waitFor(1);
    expect(memberPhone.subscription.events[0].messagesDeleted).toMatchObject({ scope: 'FOR_ME', deletedMessageDatabaseIds: [t.messageIds[2]] });
    await sleep(300);
    expect(owner.subscription.results).toHaveLength(0);
  });

  test('dialogId narrows to one dialog; a dialog the user is not in is refused (FORBIDDEN), as is an application session', async () => {
    const t = await seed();
    const narrowed = await subscribed(t.as.owner, { dialogId: gid('Dialog', t.dialogId) });
    const byDatabaseId = await subscribed(t.as.owner, { dialogId: t.dialogId });
    const notMine = await subscribed(t.as.outsider, { dialogId: t.dialogId });
    // An error of the subscription's source: one result with the error, then complete (graphql-ws).
    await notMine.subscription.ended;
    expect(notMine.subscription.results).toEqual([{ errors: [expect.objectContaining({ extensions: { code: 'FORBIDDEN' } })] }]);
    await deleteForEveryone(t, [t.messageIds[0]!]);
    await narrowed.subscription.waitFor(1);
    await byDatabaseId.subscription.waitFor(1);
    const app = live(t.as.app);
    expect((await app.closed).code).toBe(4403);
  });

  test('an occupant removed from the dialog stops receiving its events', async () => {
    const t = await seed();
    const member = await subscribed(t.as.member);
    await service.db.pool.query('DELETE FROM dialog_occupants WHERE dialog_id = $1 AND user_id = $2', [t.dialogId, t.member.id]);
    await deleteForEveryone(t, [t.messageIds[0]!]);
    await sleep(1_500);
    expect(member.subscription.results).toHaveLength(0);
  });
});

describe('every write publishes, once', () => {
  test('a REST delete, a GraphQL delete and a raw SQL update each produce exactly one event', async () => {
    const t = await seed();
    const owner = await subscribed(t.as.owner);
    await deleteForEveryone(t, [t.messageIds[0]!]);
    const gql = await service.graphql(
      `mutation($ids: [ID!]!) { deleteMessages(ids: $ids, force: true) { successfullyDeleted } }`,
      { ids: [t.messageIds[1]] },
      t.as.owner,
    );
    expect(gql.body).toEqual({ data: { deleteMessages: { successfullyDeleted: [t.messageIds[1]] } } });
    // Another program writing the same table.
    await service.db.pool.query('UPDATE messages SET deleted_at = now(), body = NULL WHERE id = $1', [t.messageIds[2]]);
    await owner.subscription.waitFor(3);
    await sleep(1_200);
    expect(owner.subscription.events.map((event) => event.messagesDeleted.deletedMessageDatabaseIds)).toEqual([
      [t.messageIds[0]],
      [t.messageIds[1]],
      [t.messageIds[2]],
    ]);
    // Deleting again changes nothing and tells no one.
    await service.db.pool.query('UPDATE messages SET deleted_at = now() WHERE id = $1', [t.messageIds[2]]);
    await deleteForEveryone(t, [t.messageIds[0]!]);
    await sleep(1_200);
    expect(owner.subscription.results).toHaveLength(3);
  });

  test('a write that rolls back publishes nothing', async () => {
    const t = await seed();
    const owner = await subscribed(t.as.owner);
    const client = await service.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('UPDATE messages SET deleted_at = now() WHERE id = $1', [t.messageIds[0]]);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await deleteForEveryone(t, [t.messageIds[1]!]);
    await owner.subscription.waitFor(1);
    await sleep(1_200);
    expect(owner.subscription.events.map((event) => event.messagesDeleted.deletedMessageDatabaseIds)).toEqual([[t.messageIds[1]]]);
  });
});

describe('after: replays', () => {
  test('a client that reconnects with after receives what it missed, once, then the live events', async () => {
    const t = await seed();
    const first = await subscribed(t.as.owner);
    await deleteForEveryone(t, [t.messageIds[0]!]);
    await first.subscription.waitFor(1);
    const cursor = first.subscription.events[0].messagesDeleted.cursor as string;
    await first.client.dispose();
    // Missed while away.
    await deleteForEveryone(t, [t.messageIds[1]!]);
    await deleteForMe(t, [t.messageIds[2]!], t.as.owner);
    await sleep(1_200);
    const again = await subscribed(t.as.owner, { after: cursor });
    await again.subscription.waitFor(2);
    expect(again.subscription.events.map((event) => [event.messagesDeleted.scope, event.messagesDeleted.deletedMessageDatabaseIds])).toEqual([
      ['FOR_EVERYONE', [t.messageIds[1]]],
      ['FOR_ME', [t.messageIds[2]]],
    ]);
    // Then live.
    await service.db.pool.query('UPDATE messages SET deleted_at = now() WHERE id = $1', [t.messageIds[2]]);
    await again.subscription.waitFor(3);
    await sleep(300);
    expect(again.subscription.results).toHaveLength(3);
  });

  test('a cursor past retention (its event swept) answers RESYNC_REQUIRED; a malformed one BAD_USER_INPUT', async () => {
    const t = await seed();
    const first = await subscribed(t.as.owner);
    await deleteForEveryone(t, [t.messageIds[0]!]);
    await first.subscription.waitFor(1);
    const cursor = first.subscription.events[0].messagesDeleted.cursor as string;
    const [, xid, id] = Buffer.from(cursor, 'base64url').toString().split(':');
    await service.db.pool.query('DELETE FROM live_events WHERE xid = $1 AND id = $2', [xid, id]);
    const stale = await subscribed(t.as.owner, { after: cursor });
    await stale.subscription.ended;
    expect(stale.subscription.results).toEqual([{ errors: [expect.objectContaining({ extensions: { code: 'RESYNC_REQUIRED' } })] }]);
    const bad = await subscribed(t.as.owner, { after: 'not-a-cursor' });
    await bad.subscription.ended;
    expect(bad.subscription.results).toEqual([{ errors: [expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT' } })] }]);
  });
});

test('the sweeper removes events past LIVE_EVENT_RETENTION_S; a cursor of one of them answers RESYNC_REQUIRED, a later one still replays', async () => {
  const t = await seed();
  const first = await subscribed(t.as.owner);
  await deleteForEveryone(t, [t.messageIds[0]!]);
  await first.subscription.waitFor(1);
  await sleep(3_000);
  await deleteForEveryone(t, [t.messageIds[1]!]);
  await deleteForEveryone(t, [t.messageIds[2]!]);
  await first.subscription.waitFor(3);
  const [old, kept] = first.subscription.events.map((event) => event.messagesDeleted.cursor as string);
  const { createServices } = await import('../../src/services');
  // Everything older than two seconds goes: the first event, and every other test's (each test's tenant is its own).
  const services = createServices(service.db, { sweeper: { liveEventRetentionSeconds: 2 } });
  try {
    const result = await services.sweeper.runOnce();
    expect(result.removed.live_events).toBeGreaterThanOrEqual(1);
  } finally {
    await services.close();
  }
  const stale = await subscribed(t.as.owner, { after: old });
  await stale.subscription.ended;
  expect(stale.subscription.results).toEqual([{ errors: [expect.objectContaining({ extensions: { code: 'RESYNC_REQUIRED' } })] }]);
  const fresh = await subscribed(t.as.owner, { after: kept });
  await fresh.subscription.waitFor(1);
  expect(fresh.subscription.events[0].messagesDeleted.deletedMessageDatabaseIds).toEqual([t.messageIds[2]]);
});

describe('credentials and close codes', () => {
  test('refused credentials close the socket with 4403; none at all too', async () => {
    for (const params of [{ 'SVC-Token': 'nope' }, { Authorization: 'ApiKey nope', 'On-Behalf-Of': '1' }, {}]) {
      expect((await live(params).closed).code).toBe(4403);
    }
  });

  test('the upgrade request’s headers are accepted when the payload has none', async () => {
    const t = await seed();
    const client = live(undefined, { headers: t.as.owner });
    await client.connected;
  });

  test('no connection_init in time: 4408', async () => {
    const { default: WebSocket } = await import('ws');
    const socket = new WebSocket(`${service.baseUrl.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    const code = await new Promise<number>((resolve) => socket.on('close', (closeCode) => resolve(closeCode)));
    expect(code).toBe(4408);
  });

  test('the session ending (logout) closes its sockets with 4403 within a second; a session expired in the database at the next check', async () => {
    const t = await seed();
    const owner = live(t.as.owner);
    await owner.connected;
    const started = Date.now();
    expect((await service.call('DELETE', '/session.json', { headers: t.as.owner })).status).toBe(200);
    expect((await owner.closed).code).toBe(4403);
    expect(Date.now() - started).toBeLessThan(1_000);

    const member = live(t.as.member);
    await member.connected;
    await service.db.pool.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [t.member.id]);
    // The credential cache (5 s) and the recheck interval (1 s here).
    expect((await member.closed).code).toBe(4403);
  }, 15_000);

  test('a query over WebSocket is refused (queries and mutations stay on HTTP); a subscription over HTTP answers 400', async () => {
    const t = await seed();
    const client = live(t.as.owner);
    await client.connected;
    const sub = client.subscribe('{ __typename }');
    expect(await sub.ended).toEqual([expect.objectContaining({ extensions: { code: 'BAD_REQUEST' } })]);
    const http = await service.graphql('subscription { messagesDeleted { cursor } }', {}, t.as.owner);
    expect(http.status).toBe(400);
  });

  test('a subscription document over the limits is refused as over HTTP', async () => {
    const t = await seed();
    const client = live(t.as.owner);
    await client.connected;
    const deep = `subscription { messagesDeleted { ${Array.from({ length: 2_100 }, () => '__typename').join(' ')} } }`;
    const sub = client.subscribe(deep);
    expect(await sub.ended).toEqual([expect.objectContaining({ extensions: { code: 'GRAPHQL_PARSE_FAILED' } })]);
  });
});

requires(needServer).describe('transactions that commit out of order', () => {
  test('an event committed while an older transaction still runs waits for it; both arrive, in order, each once', async () => {
    const t = await seed();
    const other = await seed();
    const owner = await subscribed(t.as.owner);
    const early = new PgClient({ connectionString: service.db.url });
    const late = new PgClient({ connectionString: service.db.url });
    await early.connect();
    await late.connect();
    try {
      // The older transaction takes its xid first (its event's), then the younger one commits.
      await early.query('BEGIN');
      await early.query('UPDATE messages SET deleted_at = now() WHERE id = $1', [t.messageIds[0]]);
      await late.query('UPDATE messages SET deleted_at = now() WHERE id = $1', [t.messageIds[1]]);
      // Another tenant's write in between: the order is global.
      await late.query('UPDATE messages SET deleted_at = now() WHERE id = $1', [other.messageIds[0]]);
      await sleep(1_500);
      // Held back: handing it out now would move the listener past the older transaction's event.
      expect(owner.subscription.results).toHaveLength(0);
      await early.query('COMMIT');
      await owner.subscription.waitFor(2);
      await sleep(1_200);
      expect(owner.subscription.events.map((event) => event.messagesDeleted.deletedMessageDatabaseIds)).toEqual([[t.messageIds[0]], [t.messageIds[1]]]);
    } finally {
      await early.end();
      await late.end();
    }
  });
});

requires(needServer).describe('the admin CLI', () => {
  test('a delete through the admin CLI (another process) produces exactly one event', async () => {
    const t = await seed();
    const owner = await subscribed(t.as.owner);
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', DATABASE_URL: service.db.url };
    const { stdout } = await promisify(execFile)(
      'npm',
      [
        'run',
        '-s',
        'admin',
        '--',
        'messages:delete',
        '--app',
        String(t.applicationId),
        '--as',
        String(t.owner.id),
        '--for-everyone',
        '--ids',
        `${t.messageIds[0]},${t.messageIds[1]}`,
      ],
      { cwd: path.resolve(__dirname, '../..'), env },
    );
    expect(JSON.parse(stdout)).toEqual({ successfullyDeleted: [t.messageIds[0], t.messageIds[1]], notFound: [] });
    await owner.subscription.waitFor(1);
    await sleep(1_200);
    expect(owner.subscription.events.map((event) => event.messagesDeleted.deletedMessageDatabaseIds)).toEqual([[t.messageIds[0], t.messageIds[1]].sort()]);
  }, 60_000);
});

requires(needServer).describe('two instances on one database', () => {
  test('an event written through one reaches a subscriber on the other', async () => {
    const t = await seed();
    // A process of its own as far as the database goes: its own pool and LISTEN connection.
    const other = await startService({ live: {} });
    try {
      const client = connectLive(other.baseUrl, t.as.owner);
      open.push(client);
      await client.connected;
      const sub = client.subscribe(DELETED);
      await sleep(150);
      await deleteForEveryone(t, [t.messageIds[0]!]);
      await sub.waitFor(1);
      expect(sub.events[0].messagesDeleted.deletedMessageDatabaseIds).toEqual([t.messageIds[0]]);
      await client.dispose();
    } finally {
      await other.close();
    }
  });

  test('a session ended through one instance closes its sockets on another with 4403 within a second (the revocation bus)', async () => {
    const t = await seed();
    const holding = await startService({ revocation: true });
    const ending = await startService({ revocation: true });
    try {
      const client = connectLive(holding.baseUrl, t.as.owner);
      open.push(client);
      await client.connected;
      const started = Date.now();
      expect((await ending.call('DELETE', '/session.json', { headers: t.as.owner })).status).toBe(200);
      expect((await client.closed).code).toBe(4403);
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      await holding.close();
      await ending.close();
    }
  });
});
