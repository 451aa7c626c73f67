// examples/relay against the real service, as a Relay app runs: the
// artifacts relay-compiler wrote from the example's documents
// (examples/relay/src/__generated__, `npm run codegen:examples`; CI's
// codegen:check fails when they are stale), executed by relay-runtime's
// Environment with the example's getDataID (examples/relay/src/environment.ts).
// What issue 32 found broken: session 1 and user 1 made one record; a page of
// history could not be merged backward; nothing told the store what a delete
// removed.
import {
  commitLocalUpdate,
  commitMutation,
  ConnectionHandler,
  createOperationDescriptor,
  fetchQuery,
  type Environment,
  type GraphQLTaggedNode,
  type MutationParameters,
  type OperationType,
  type RelayFieldLogger,
} from 'relay-runtime';
import ChatScreenQuery, { type ChatScreenQuery as ChatScreenQueryType } from '../../examples/relay/src/__generated__/ChatScreenQuery.graphql';
import DialogHistoryPaginationQuery from '../../examples/relay/src/__generated__/DialogHistoryPaginationQuery.graphql';
import MessageRowRefetchQuery from '../../examples/relay/src/__generated__/MessageRowRefetchQuery.graphql';
import MessageSendMutation, { type MessageSendMutation as MessageSendMutationType } from '../../examples/relay/src/__generated__/MessageSendMutation.graphql';
import MessagesDeleteMutation, {
  type MessagesDeleteMutation as MessagesDeleteMutationType,
} from '../../examples/relay/src/__generated__/MessagesDeleteMutation.graphql';
import RegisteredUsersListPaginationQuery from '../../examples/relay/src/__generated__/RegisteredUsersListPaginationQuery.graphql';
import { createEnvironment, getDataID } from '../../examples/relay/src/environment';
import { toGlobalId } from '../../src/services/global-id';
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';

const service = useService();
let endpoint: string;
beforeAll(() => {
  endpoint = `${service.baseUrl}/graphql`;
});

/**
 * A user of the tenant whose user id and session id are the same number (as
 * session 1 and user 1 are in a new deployment): both moved to an id no
 * sequence reaches in a test run. Alice owns a dialog with the tenant's owner
 * and has sent `bodies` to it, oldest first.
 */
async function aliceWithCollidingIds(t: Tenant, bodies: string[]) {
  const { provisioning } = service.app;
  const created = await provisioning.users.create({ applicationId: t.applicationId, login: 'alice', password: 'password123', phone: '+10000000199' });
  const id = 2_000_000_000 + Math.floor(Math.random() * 100_000_000);
  await service.db.pool.query('UPDATE users SET id = $1 WHERE id = $2', [id, created.id]);
  const session = await provisioning.applications.createSession(t.applicationId, id);
  await service.db.pool.query('UPDATE sessions SET id = $1 WHERE user_id = $1', [id]);
  const dialog = await provisioning.chat.createDialog({ applicationId: t.applicationId, ownerId: id, occupantIds: [t.owner.id], name: 'Alice and owner' });
  const messageIds: string[] = [];
  for (const body of bodies) messageIds.push((await provisioning.chat.createMessage({ dialogId: dialog.id, senderId: id, body })).id);
  return { id, headers: { 'SVC-Token': session.token }, dialogGid: toGlobalId('Dialog', dialog.id), messageIds };
}

function fetch<T extends OperationType>(environment: Environment, query: GraphQLTaggedNode, variables: T['variables']): Promise<T['response'] | undefined> {
  return fetchQuery<T>(environment, query, variables).toPromise();
}

function mutate<T extends MutationParameters>(environment: Environment, mutation: GraphQLTaggedNode, variables: T['variables']): Promise<T['response']> {
  return new Promise((resolve, reject) =>
    commitMutation<T>(environment, {
      mutation,
      variables,
      onCompleted: (response, errors) => (errors?.length ? reject(new Error(JSON.stringify(errors))) : resolve(response)),
      onError: reject,
    }),
  );
}

/** The bodies of the messages in the dialog's DialogHistory_messages connection, as the store holds it. */
function historyInStore(environment: Environment, dialogGid: string): (string | null)[] {
  let bodies: (string | null)[] = [];
  commitLocalUpdate(environment, (store) => {
    const connection = ConnectionHandler.getConnection(store.get(dialogGid)!, 'DialogHistory_messages');
    bodies = (connection?.getLinkedRecords('edges') ?? []).flatMap((edge) => {
      const node = edge?.getLinkedRecord('node');
      // An edge whose message was deleted (@deleteRecord) has no node: a screen skips it.
      return node ? [node.getValue('body') as string | null] : [];
    });
  });
  return bodies;
}

test("session { id } and viewer { user { id } } with the same number leave two records: the session's and the user's", async () => {
  const t = await seedTenant(service.app.provisioning);
  const alice = await aliceWithCollidingIds(t, ['hello']);
  const environment = createEnvironment({ endpoint, headers: alice.headers });

  const data = await fetch<ChatScreenQueryType>(environment, ChatScreenQuery, { dialogId: alice.dialogGid });
  expect(data?.session).toEqual({ id: alice.id, userId: alice.id });
  expect(data?.viewer?.user).toEqual({ id: alice.id, databaseId: alice.id, login: 'alice' });

  const records = environment.getStore().getSource();
  // getDataID keys both by type and id: neither record holds the other's fields.
  expect(records.get(`Session:${alice.id}`)).toMatchObject({ __typename: 'Session', id: alice.id, userId: alice.id });
  expect(records.get(`Session:${alice.id}`)).not.toHaveProperty('login');
  expect(records.get(`User:${alice.id}`)).toMatchObject({ __typename: 'User', id: alice.id, login: 'alice' });
  expect(records.get(`User:${alice.id}`)).not.toHaveProperty('userId');
  expect(records.get(String(alice.id))).toBeUndefined();
  // Read back from the store (not from the network's answer): each as it was sent.
  const snapshot = environment.lookup(createOperationDescriptor(ChatScreenQuery, { dialogId: alice.dialogGid }).fragment);
  expect(snapshot.isMissingData).toBe(false);
  const read = snapshot.data as ChatScreenQueryType['response'];
  expect(read.session).toEqual({ id: alice.id, userId: alice.id });
  expect(read.viewer?.user?.login).toBe('alice');
});

test('getDataID keys User and Session by type and id, Dialog and Message by their global ids, and leaves records without an id to Relay', async () => {
  expect(getDataID({ id: 7 }, 'User')).toBe('User:7');
  expect(getDataID({ id: 7 }, 'Session')).toBe('Session:7');
  expect(getDataID({ id: 'RGlhbG9n' }, 'Dialog')).toBe('RGlhbG9n');
  // Relay's defaults for the rest: its one viewer record, and a path-derived key for an edge or a PageInfo.
  expect(getDataID({}, 'Viewer')).toBe('client:root:viewer');
  expect(getDataID({}, 'PageInfo')).toBeUndefined();

  // Against the service: two dialogs in the viewer's list stay two records, their edges and PageInfos apart.
  const t = await seedTenant(service.app.provisioning);
  const alice = await aliceWithCollidingIds(t, ['in the newer dialog']);
  const environment = createEnvironment({ endpoint, headers: t.as.owner });
  const data = await fetch<ChatScreenQueryType>(environment, ChatScreenQuery, { dialogId: alice.dialogGid });
  const dialogs = data?.viewer?.dialogs?.edges.map((edge) => edge.node.id);
  expect(dialogs).toEqual([alice.dialogGid, toGlobalId('Dialog', t.dialogId)]);
  const snapshot = environment.lookup(createOperationDescriptor(ChatScreenQuery, { dialogId: alice.dialogGid }).fragment);
  const read = snapshot.data as ChatScreenQueryType['response'];
  expect(read.viewer?.dialogs?.edges.map((edge) => [edge.node.id, edge.node.lastMessage?.body])).toEqual([
    [alice.dialogGid, 'in the newer dialog'],
    [toGlobalId('Dialog', t.dialogId), 'three'],
  ]);
  expect(read.viewer?.user?.databaseId).toBe(t.owner.id);
});

test('@connection on Dialog.messages: the newest page, then older pages merged backward (last/before) into one history', async () => {
  const t = await seedTenant(service.app.provisioning);
  const alice = await aliceWithCollidingIds(t, ['m1', 'm2', 'm3', 'm4', 'm5']);
  const environment = createEnvironment({ endpoint, headers: alice.headers });

  await fetch<ChatScreenQueryType>(environment, ChatScreenQuery, { dialogId: alice.dialogGid, count: 2 });
  expect(historyInStore(environment, alice.dialogGid)).toEqual(['m4', 'm5']);

  // What usePaginationFragment's loadPrevious sends: the refetchable fragment's query, before the connection's start.
  const older = async () => {
    let pageInfo: { startCursor?: unknown; hasPreviousPage?: unknown } = {};
    commitLocalUpdate(environment, (store) => {
      const info = ConnectionHandler.getConnection(store.get(alice.dialogGid)!, 'DialogHistory_messages')!.getLinkedRecord('pageInfo');
      pageInfo = { startCursor: info.getValue('startCursor'), hasPreviousPage: info.getValue('hasPreviousPage') };
    });
    expect(pageInfo.hasPreviousPage).toBe(true);
    await fetch(environment, DialogHistoryPaginationQuery, { id: alice.dialogGid, count: 2, cursor: pageInfo.startCursor as string });
  };
  await older();
  expect(historyInStore(environment, alice.dialogGid)).toEqual(['m2', 'm3', 'm4', 'm5']);
  await older();
  expect(historyInStore(environment, alice.dialogGid)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
  commitLocalUpdate(environment, (store) => {
    const info = ConnectionHandler.getConnection(store.get(alice.dialogGid)!, 'DialogHistory_messages')!.getLinkedRecord('pageInfo');
    expect(info.getValue('hasPreviousPage')).toBe(false);
  });
});

test('@refetchable on Message and Dialog: each refetches itself through node(id:)', async () => {
  const t = await seedTenant(service.app.provisioning);
  const alice = await aliceWithCollidingIds(t, ['first', 'second']);
  const environment = createEnvironment({ endpoint, headers: alice.headers });
  const messageGid = toGlobalId('Message', alice.messageIds[0]!);

  // fetchQuery answers the query's own selections (the fragment's data is masked): the store has the fragment's.
  const message = await fetch(environment, MessageRowRefetchQuery, { id: messageGid });
  expect(message).toMatchObject({ node: { __id: messageGid, __fragments: { MessageRow_message: {} } } });
  const records = environment.getStore().getSource();
  expect(records.get(messageGid)).toMatchObject({ __typename: 'Message', id: messageGid, databaseId: alice.messageIds[0], body: 'first' });
  expect(records.get(`User:${alice.id}`)).toMatchObject({ login: 'alice' });

  const dialog = await fetch(environment, DialogHistoryPaginationQuery, { id: alice.dialogGid, count: 1 });
  expect(dialog).toMatchObject({ node: { __id: alice.dialogGid, __fragments: { DialogHistory_dialog: expect.anything() } } });
  expect(historyInStore(environment, alice.dialogGid)).toEqual(['second']);
});

test('messageSend with @appendNode adds the sent message to the history connection; messagesDelete with @deleteRecord takes deleted ones out, with no refetch', async () => {
  const t = await seedTenant(service.app.provisioning);
  const alice = await aliceWithCollidingIds(t, ['keep', 'remove']);
  const environment = createEnvironment({ endpoint, headers: alice.headers });
  await fetch<ChatScreenQueryType>(environment, ChatScreenQuery, { dialogId: alice.dialogGid });
  expect(historyInStore(environment, alice.dialogGid)).toEqual(['keep', 'remove']);
  const requests: string[] = [];
  const network = environment.getNetwork();
  const execute = network.execute.bind(network);
  network.execute = (request, ...rest) => {
    requests.push(request.name);
    return execute(request, ...rest);
  };

  const connection = ConnectionHandler.getConnectionID(alice.dialogGid, 'DialogHistory_messages');
  const sent = await mutate<MessageSendMutationType>(environment, MessageSendMutation, {
    input: { dialogId: alice.dialogGid, body: 'sent from Relay', clientMutationId: 'send-1' },
    connections: [connection],
  });
  expect(sent.messageSend).toMatchObject({ userErrors: [], clientMutationId: 'send-1', message: { id: expect.any(String) } });
  expect(historyInStore(environment, alice.dialogGid)).toEqual(['keep', 'remove', 'sent from Relay']);

  const removed = toGlobalId('Message', alice.messageIds[1]!);
  const deleted = await mutate<MessagesDeleteMutationType>(environment, MessagesDeleteMutation, {
    input: { messageIds: [removed, 'not-an-id'], scope: 'FOR_ME', clientMutationId: 'delete-1' },
  });
  expect(deleted.messagesDelete).toEqual({
    deletedMessageIds: [removed],
    outcomes: [
      { requestedId: removed, messageId: removed, status: 'DELETED' },
      { requestedId: 'not-an-id', messageId: null, status: 'INVALID_ID' },
    ],
    userErrors: [],
    clientMutationId: 'delete-1',
  });
  // The record is gone from the store, and so from the history the screen reads.
  expect(environment.getStore().getSource().get(removed)).toBeNull();
  expect(historyInStore(environment, alice.dialogGid)).toEqual(['keep', 'sent from Relay']);
  expect(requests).toEqual(['MessageSendMutation', 'MessagesDeleteMutation']);
});

test('@connection on registeredUsersConnection: pages merged forward into one list per udid', async () => {
  const t = await seedTenant(service.app.provisioning);
  const upload = await service.graphql(
    `mutation { uploadAddressBook(udid: "relay-phone", contacts: [{ name: "M", phone: "+10000000102" }, { name: "O", phone: "+10000000103" }]) { created } }`,
    {},
    t.as.owner,
  );
  expect(upload.body).toEqual({ data: { uploadAddressBook: { created: 2 } } });
  const environment = createEnvironment({ endpoint, headers: t.as.owner });
  const page = () => {
    let result: { logins: unknown[]; endCursor?: unknown; hasNextPage?: unknown } = { logins: [] };
    commitLocalUpdate(environment, (store) => {
      const connection = ConnectionHandler.getConnection(store.getRoot(), 'RegisteredUsersList_registeredUsersConnection', { udid: 'relay-phone' })!;
      const info = connection.getLinkedRecord('pageInfo');
      result = {
        logins: (connection.getLinkedRecords('edges') ?? []).map((edge) => edge?.getLinkedRecord('node')?.getValue('login')),
        endCursor: info.getValue('endCursor'),
        hasNextPage: info.getValue('hasNextPage'),
      };
    });
    return result;
  };

  await fetch(environment, RegisteredUsersListPaginationQuery, { udid: 'relay-phone', count: 1 });
  const first = page();
  expect(first).toMatchObject({ logins: ['member'], hasNextPage: true });
  await fetch(environment, RegisteredUsersListPaginationQuery, { udid: 'relay-phone', count: 1, cursor: first.endCursor as string });
  expect(page()).toMatchObject({ logins: ['member', 'outsider'], hasNextPage: false });
  // The records are the users, keyed by type and number.
  expect(environment.getStore().getSource().get(`User:${t.member.id}`)).toMatchObject({ login: 'member', databaseId: t.member.id });
});

test('a partial answer: one failing viewer field is null, the rest of the screen is read from the store, and the field logger gets its error', async () => {
  const t = await seedTenant(service.app.provisioning);
  const events: Parameters<RelayFieldLogger>[0][] = [];
  const environment = createEnvironment({ endpoint, headers: t.as.owner, relayFieldLogger: (event) => events.push(event) });
  const variables = { dialogId: toGlobalId('Dialog', t.dialogId), dialogs: 0 };

  const data = await fetch<ChatScreenQueryType>(environment, ChatScreenQuery, variables);
  expect(data?.viewer?.user?.login).toBe('owner');
  expect(data?.viewer?.dialogs).toBeNull();
  expect(data?.session?.userId).toBe(t.owner.id);
  const snapshot = environment.lookup(createOperationDescriptor(ChatScreenQuery, variables).fragment);
  expect((snapshot.data as ChatScreenQueryType['response']).viewer).toEqual({
    user: { id: t.owner.id, databaseId: t.owner.id, login: 'owner' },
    dialogs: null,
  });
  // The event carries the service's error (Relay 21 leaves its fieldPath empty here; the error's code and field say what failed).
  expect(events).toContainEqual(
    expect.objectContaining({
      kind: 'relay_field_payload.error',
      owner: 'ChatScreenQuery',
      error: expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT', field: 'first' } }),
    }),
  );
});
