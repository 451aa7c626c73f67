// examples/frontend's subscriptions against the real service, as a frontend
// app runs them: Apollo Client with GraphQLWsLink and urql with
// subscriptionExchange over one graphql-ws socket each, every document by
// hash only, to a service enforcing the example's trusted documents. A
// deletion event takes the messages out of Apollo's cache with no request
// made; a new message reaches both clients.
import path from 'node:path';
import WebSocket from 'ws';
import type { Client as WsClient } from 'graphql-ws';
import { appOptionsFromConfig } from '../../src/app';
import { loadConfig } from '../../src/config';
import { createApolloClient } from '../../examples/frontend/src/apollo';
import { cachedChatScreen, chatScreen, followDialog, type MessageAddedEvent, type MessagesDeletedEvent } from '../../examples/frontend/src/apollo-live';
import { createLiveClient } from '../../examples/frontend/src/live';
import { createUrqlClient } from '../../examples/frontend/src/urql';
import { onMessageAdded } from '../../examples/frontend/src/urql-live';
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';
import { sleep } from '../support/live';

const MANIFEST = path.resolve(__dirname, '../../examples/frontend/src/__generated__/persisted-documents.json');
const env = { GRAPHQL_TRUSTED_DOCUMENTS: 'enforce', GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST: MANIFEST, RATE_LIMIT_ENABLED: 'false' };
const service = useService(appOptionsFromConfig(loadConfig(env)));

let tenant: Tenant;
/** Every HTTP request the clients make (they use the global fetch). */
const sent: { method: string; url: string }[] = [];
/** Every subscribe message the sockets send. */
const subscribes: { query?: unknown; extensions?: unknown }[] = [];
const sockets: WsClient[] = [];
const realFetch = globalThis.fetch;

/** A `ws` WebSocket that records the subscribe messages it sends. */
class RecordingSocket extends WebSocket {
  override send(data: any, ...rest: any[]): void {
    const message = JSON.parse(String(data)) as { type: string; payload?: { query?: unknown; extensions?: unknown } };
    if (message.type === 'subscribe') subscribes.push(message.payload!);
    (super.send as (...args: unknown[]) => void)(data, ...rest);
  }
}

const liveClient = (credentials: Record<string, string>) => {
  const client = createLiveClient({ url: `${service.baseUrl.replace(/^http/, 'ws')}/graphql`, credentials, webSocketImpl: RecordingSocket });
  sockets.push(client);
  return client;
};

async function until(what: string, condition: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}`);
    await sleep(25);
  }
}

beforeAll(async () => {
  tenant = await seedTenant(service.app.provisioning);
  globalThis.fetch = async (input, init) => {
    sent.push({ method: init?.method ?? 'GET', url: String(input instanceof Request ? input.url : input) });
    return realFetch(input, init);
  };
});
afterAll(async () => {
  globalThis.fetch = realFetch;
});
beforeEach(() => {
  sent.length = 0;
  subscribes.length = 0;
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) await socket.dispose();
});

const dialogGid = () => Buffer.from(`Dialog:${tenant.dialogId}`).toString('base64url');

test('Apollo Client: a deletion event takes the messages out of the cached chat screen with no request; a new message arrives', async () => {
  const client = createApolloClient({ uri: `${service.baseUrl}/graphql`, headers: tenant.as.member, live: liveClient(tenant.as.member) });
  const shown = await chatScreen(client, dialogGid());
  expect(shown.map((m) => m.databaseId)).toEqual(tenant.messageIds);
  const added: MessageAddedEvent[] = [];
  const deleted: MessagesDeletedEvent[] = [];
  const stop = followDialog(client, dialogGid(), { added: (e) => added.push(e), deleted: (e) => deleted.push(e) });
  try {
    // Both subscriptions registered with the service before anything is written.
    await until('two subscribe messages', () => subscribes.length === 2);
    await sleep(200);
    sent.length = 0;
    // The owner deletes for everyone, through REST (not this client).
    const res = await realFetch(`${service.baseUrl}/chat/Message/${tenant.messageIds[1]}.json?force=1`, { method: 'DELETE', headers: tenant.as.owner });
    expect(res.status).toBe(200);
    await until('the deletion event', () => deleted.length === 1);
    expect(deleted[0]).toMatchObject({ scope: 'FOR_EVERYONE', dialogId: dialogGid() });
    // The screen, as the cache has it now: the message gone, no request made to get there.
    expect(cachedChatScreen(client, dialogGid()).map((m) => m.databaseId)).toEqual([tenant.messageIds[0], tenant.messageIds[2]]);
    expect(client.cache.extract()).not.toHaveProperty([`Message:${deleted[0]!.deletedMessageIds[0]}`]);
    // A cache-first query of the screen answers from the cache too.
    expect((await chatScreen(client, dialogGid())).map((m) => m.databaseId)).toEqual([tenant.messageIds[0], tenant.messageIds[2]]);
    expect(sent).toEqual([]);

    const send = await realFetch(`${service.baseUrl}/chat/Message.json`, {
      method: 'POST',
      headers: { ...tenant.as.owner, 'content-type': 'application/json' },
      body: JSON.stringify({ chat_dialog_id: tenant.dialogId, message: 'to Apollo' }),
    });
    expect(send.status).toBe(201);
    await until('the new message', () => added.length === 1);
    expect(added[0]!.message).toMatchObject({ body: 'to Apollo', sender: { login: 'owner' } });
    expect(sent).toEqual([]);
  } finally {
    stop();
  }
  // Hash only on the socket: no document text left the client.
  expect(subscribes.map((payload) => [payload.query, (payload.extensions as { persistedQuery?: unknown }).persistedQuery])).toEqual([
    ['', { version: 1, sha256Hash: expect.stringMatching(/^[0-9a-f]{64}$/) }],
    ['', { version: 1, sha256Hash: expect.stringMatching(/^[0-9a-f]{64}$/) }],
  ]);
});

test('urql: a new message arrives through subscriptionExchange, by hash only', async () => {
  const client = createUrqlClient(`${service.baseUrl}/graphql`, tenant.as.owner, liveClient(tenant.as.owner));
  const added: MessageAddedEvent[] = [];
  const errors: Error[] = [];
  const stop = onMessageAdded(
    client,
    dialogGid(),
    (event) => added.push(event),
    (error) => errors.push(error),
  );
  try {
    await until('the subscribe message', () => subscribes.length === 1);
    await sleep(200);
    const send = await realFetch(`${service.baseUrl}/chat/Message.json`, {
      method: 'POST',
      headers: { ...tenant.as.member, 'content-type': 'application/json' },
      body: JSON.stringify({ chat_dialog_id: tenant.dialogId, message: 'to urql' }),
    });
    expect(send.status).toBe(201);
    await until('the new message', () => added.length === 1 || errors.length > 0);
    expect(errors).toEqual([]);
    expect(added[0]!.message).toMatchObject({ body: 'to urql', sender: { login: 'member' } });
    expect(subscribes).toEqual([expect.objectContaining({ query: '', extensions: { persistedQuery: { version: 1, sha256Hash: expect.any(String) } } })]);
  } finally {
    stop();
  }
});

test('a subscription the app did not ship is refused on the socket too', async () => {
  const socket = liveClient(tenant.as.owner);
  const result = await new Promise<unknown>((resolve) => {
    const results: unknown[] = [];
    socket.subscribe(
      { query: 'subscription { messageAdded { cursor message { body } } }' },
      { next: (value) => results.push(value), error: (error) => resolve(error), complete: () => resolve(results) },
    );
  });
  expect(JSON.stringify(result)).toContain('PERSISTED_QUERY_NOT_IN_LIST');
});
