// messageAdded (issue 33): every new message reaches the dialog's current
// occupants once, whatever wrote it, through graphql-ws's own client as an
// app would connect; `after` replays and RESYNC_REQUIRED as messagesDeleted's
// (test/live/subscriptions.test.ts). Runs on the embedded database and on a
// server (TEST_DATABASE_URL); the admin CLI (another process) only on a server.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { needServer, requires } from '../support/requires';
import { useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';
import { type LiveClient, sleep, subscribedLive } from '../support/live';
import { newObjectId } from '../../src/services/object-id';

const service = useService({ live: {} });
const seed = () => seedTenant(service.app.provisioning);
const open: LiveClient[] = [];
afterEach(async () => {
  for (const client of open.splice(0)) await client.dispose().catch(() => {});
});

const ADDED = /* GraphQL */ `
  subscription Added($dialogId: ID, $after: String) {
    messageAdded(dialogId: $dialogId, after: $after) {
      cursor
      message {
        id
        databaseId
        body
        createdAt
        sender {
          login
        }
        dialog {
          databaseId
        }
      }
    }
  }
`;

const subscribed = (params: Record<string, unknown>, variables: Record<string, unknown> = {}) =>
  subscribedLive(service.baseUrl, open, params, ADDED, variables);
// Delivery waits for every older transaction of the server to end (the
// migration live_events): on a shared server another run's held transaction
// delays it, so the bound is well above the milliseconds it takes.
const WAIT = 15_000;
const gid = (type: string, id: string) => Buffer.from(`${type}:${id}`).toString('base64url');
const added = (subscription: { events: any[] }) => subscription.events.map((event) => event.messageAdded);
const bodies = (subscription: { events: any[] }) => added(subscription).map((event) => event.message.body);

/** POST /chat/Message.json as `as`: the new message's 24-hex id. */
async function restSend(t: Tenant, body: string, as: Record<string, string> = t.as.owner): Promise<string> {
  const res = await service.call('POST', '/chat/Message.json', { headers: as, body: { chat_dialog_id: t.dialogId, message: body } });
  expect(res.status).toBe(201);
  return (res.body as { _id: string })._id;
}

describe('who is told', () => {
  test('a message reaches every occupant (the sender on every socket, an API key with On-Behalf-Of), not an outsider, not another application', async () => {
    const t = await seed();
    const other = await seed();
    const sender = await subscribed(t.as.owner);
    const senderLaptop = await subscribed(t.as.onBehalfOf(t.owner.id));
    const member = await subscribed(t.as.onBehalfOf(t.member.id));
    const outsider = await subscribed(t.as.outsider);
    const stranger = await subscribed(other.as.owner);
    const id = await restSend(t, 'hello');
    await sender.subscription.waitFor(1, WAIT);
    await senderLaptop.subscription.waitFor(1, WAIT);
    await member.subscription.waitFor(1, WAIT);
    expect(added(member.subscription)[0]).toEqual({
      cursor: expect.any(String),
      message: {
        id: gid('Message', id),
        databaseId: id,
        body: 'hello',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        sender: { login: 'owner' },
        dialog: { databaseId: t.dialogId },
      },
    });
    expect(sender.subscription.events).toEqual(member.subscription.events);
    expect(senderLaptop.subscription.events).toEqual(member.subscription.events);
    await sleep(300);
    expect(member.subscription.results).toHaveLength(1);
    expect(outsider.subscription.results).toHaveLength(0);
    expect(stranger.subscription.results).toHaveLength(0);
  });

  test('dialogId narrows to one dialog; a dialog the user is not in is refused (FORBIDDEN); an occupant added later is told from then on', async () => {
    const t = await seed();
    const second = await service.app.provisioning.chat.createDialog({ applicationId: t.applicationId, ownerId: t.owner.id, occupantIds: [] });
    const narrowed = await subscribed(t.as.member, { dialogId: gid('Dialog', t.dialogId) });
    const everything = await subscribed(t.as.owner);
    const notMine = await subscribed(t.as.member, { dialogId: second.id });
    await notMine.subscription.ended;
    expect(notMine.subscription.results).toEqual([{ errors: [expect.objectContaining({ extensions: { code: 'FORBIDDEN' } })] }]);
    const outsider = await subscribed(t.as.outsider);
    await service.app.provisioning.chat.createMessage({ dialogId: second.id, senderId: t.owner.id, body: 'elsewhere' });
    await restSend(t, 'here');
    await everything.subscription.waitFor(2, WAIT);
    await narrowed.subscription.waitFor(1, WAIT);
    expect(bodies(everything.subscription)).toEqual(['elsewhere', 'here']);
    // The outsider joins the dialog: its next message reaches them.
    await service.db.pool.query('INSERT INTO dialog_occupants (dialog_id, user_id) VALUES ($1, $2)', [t.dialogId, t.outsider.id]);
    await restSend(t, 'welcome');
    await outsider.subscription.waitFor(1, WAIT);
    await narrowed.subscription.waitFor(2, WAIT);
    await sleep(300);
    expect(bodies(narrowed.subscription)).toEqual(['here', 'welcome']);
    expect(bodies(outsider.subscription)).toEqual(['welcome']);
  });

  test('an occupant removed from the dialog stops receiving its messages', async () => {
    const t = await seed();
    const member = await subscribed(t.as.member);
    await service.db.pool.query('DELETE FROM dialog_occupants WHERE dialog_id = $1 AND user_id = $2', [t.dialogId, t.member.id]);
    await restSend(t, 'not for you');
    await sleep(1_500);
    expect(member.subscription.results).toHaveLength(0);
  });
});

describe('every write publishes, once', () => {
  test('a REST send, a GraphQL messageSend, a provisioning insert and a raw SQL INSERT each produce exactly one event', async () => {
    const t = await seed();
    const member = await subscribed(t.as.member);
    const rest = await restSend(t, 'by REST');
    const gql = await service.graphql(
      `mutation($input: MessageSendInput!) { messageSend(input: $input) { message { databaseId } userErrors { code } } }`,
      { input: { dialogId: gid('Dialog', t.dialogId), body: 'by GraphQL' } },
      t.as.member,
    );
    expect(gql.body.errors).toBeUndefined();
    const viaGraphql: string = gql.body.data.messageSend.message.databaseId;
    // What the admin CLI's message:create runs (its own process: the test below, on a server).
    const provisioned = (await service.app.provisioning.chat.createMessage({ dialogId: t.dialogId, senderId: t.owner.id, body: 'provisioned' })).id;
    // Another program writing the same table; and a row written already deleted, which is no event.
    const [bySql, alreadyDeleted] = [newObjectId(), newObjectId()];
    await service.db.pool.query('INSERT INTO messages (id, dialog_id, sender_id, body) VALUES ($1, $2, $3, $4)', [bySql, t.dialogId, t.member.id, 'by SQL']);
    await service.db.pool.query('INSERT INTO messages (id, dialog_id, sender_id, body, deleted_at) VALUES ($1, $2, $3, NULL, now())', [
      alreadyDeleted,
      t.dialogId,
      t.member.id,
    ]);
    await member.subscription.waitFor(4, WAIT);
    await sleep(1_200);
    expect(added(member.subscription).map((event) => [event.message.databaseId, event.message.body, event.message.sender.login])).toEqual([
      [rest, 'by REST', 'owner'],
      [viaGraphql, 'by GraphQL', 'member'],
      [provisioned, 'provisioned', 'owner'],
      [bySql, 'by SQL', 'member'],
    ]);
    // A refused send writes nothing and tells no one.
    const refused = await service.rest('POST', '/chat/Message.json', { headers: t.as.outsider, body: { chat_dialog_id: t.dialogId, message: 'let me in' } });
    expect(refused.status).toBe(404);
    await sleep(1_200);
    expect(member.subscription.results).toHaveLength(4);
  });

  test('a bulk import of n messages is n events, in order; a send that rolls back is none', async () => {
    const t = await seed();
    const owner = await subscribed(t.as.owner);
    const client = await service.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('INSERT INTO messages (id, dialog_id, sender_id, body) VALUES ($1, $2, $3, $4)', [
        newObjectId(),
        t.dialogId,
        t.owner.id,
        'rolled back',
      ]);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await service.app.services.chat.createMany({ dialogId: t.dialogId, senderId: t.member.id, bodies: ['a', 'b', 'c'] });
    await owner.subscription.waitFor(3, WAIT);
    await sleep(1_200);
    expect(bodies(owner.subscription)).toEqual(['a', 'b', 'c']);
  });
});

describe('after: replays', () => {
  test('a client that reconnects with after receives the messages it missed, once, then the live ones; a cursor of messagesDeleted resumes it too', async () => {
    const t = await seed();
    const first = await subscribed(t.as.member);
    await restSend(t, 'seen');
    await first.subscription.waitFor(1, WAIT);
    const cursor = added(first.subscription)[0].cursor as string;
    await first.client.dispose();
    await restSend(t, 'missed 1');
    await restSend(t, 'missed 2', t.as.member);
    await sleep(300);
    const again = await subscribed(t.as.member, { after: cursor });
    await again.subscription.waitFor(2, WAIT);
    expect(bodies(again.subscription)).toEqual(['missed 1', 'missed 2']);
    await restSend(t, 'live');
    await again.subscription.waitFor(3, WAIT);
    await sleep(300);
    expect(bodies(again.subscription)).toEqual(['missed 1', 'missed 2', 'live']);

    // One order for both fields: a deletion's cursor is a position in it.
    const deletions = await subscribedLive(service.baseUrl, open, t.as.member, 'subscription { messagesDeleted { cursor } }');
    expect((await service.call('DELETE', `/chat/Message/${t.messageIds[0]}.json?force=1`, { headers: t.as.owner })).status).toBe(200);
    await deletions.subscription.waitFor(1, WAIT);
    await restSend(t, 'after the delete');
    const resumed = await subscribed(t.as.member, { after: deletions.subscription.events[0].messagesDeleted.cursor });
    await resumed.subscription.waitFor(1, WAIT);
    await sleep(300);
    expect(bodies(resumed.subscription)).toEqual(['after the delete']);
  });

  test('a message deleted for everyone, or hidden by the subscriber, before delivery arrives once with its body null', async () => {
    const t = await seed();
    const first = await subscribed(t.as.member);
    await restSend(t, 'before');
    await first.subscription.waitFor(1, WAIT);
    const cursor = added(first.subscription)[0].cursor as string;
    await first.client.dispose();
    const deleted = await restSend(t, 'deleted for everyone');
    const hidden = await restSend(t, 'hidden by the member');
    expect((await service.call('DELETE', `/chat/Message/${deleted}.json?force=1`, { headers: t.as.owner })).status).toBe(200);
    expect((await service.call('DELETE', `/chat/Message/${hidden}.json`, { headers: t.as.member })).status).toBe(200);
    const member = await subscribed(t.as.member, { after: cursor });
    const owner = await subscribed(t.as.owner, { after: cursor });
    await member.subscription.waitFor(2, WAIT);
    await owner.subscription.waitFor(2, WAIT);
    await sleep(300);
    expect(added(member.subscription).map((event) => [event.message.databaseId, event.message.body])).toEqual([
      [deleted, null],
      [hidden, null],
    ]);
    // The owner did not hide it: they still see its text.
    expect(added(owner.subscription).map((event) => [event.message.databaseId, event.message.body])).toEqual([
      [deleted, null],
      [hidden, 'hidden by the member'],
    ]);
  });

  test('a cursor past retention (its event swept) answers RESYNC_REQUIRED; a malformed one BAD_USER_INPUT', async () => {
    const t = await seed();
    const first = await subscribed(t.as.owner);
    await restSend(t, 'soon gone');
    await first.subscription.waitFor(1, WAIT);
    const cursor = added(first.subscription)[0].cursor as string;
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

requires(needServer).describe('the admin CLI', () => {
  test('a message created through the admin CLI (another process) produces exactly one event', async () => {
    const t = await seed();
    const member = await subscribed(t.as.member);
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', DATABASE_URL: service.db.url };
    const { stdout } = await promisify(execFile)(
      'npm',
      ['run', '-s', 'admin', '--', 'message:create', '--dialog', t.dialogId, '--sender', String(t.owner.id), '--body', 'from the CLI'],
      { cwd: path.resolve(__dirname, '../..'), env },
    );
    const id = (JSON.parse(stdout) as { message: { id: string } }).message.id;
    await member.subscription.waitFor(1, WAIT);
    await sleep(1_200);
    expect(added(member.subscription).map((event) => [event.message.databaseId, event.message.body])).toEqual([[id, 'from the CLI']]);
  }, 60_000);
});
