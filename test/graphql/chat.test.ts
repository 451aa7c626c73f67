// The chat screens on GraphQL (issue 32): global ids and node()/nodes(), the
// viewer and its nullable fields, dialogs and histories paged both ways,
// messageSend and messagesDelete with userErrors and an outcome per id, and
// what the cost rule charges a screen's query. The rules both surfaces share
// (history after deletes, sending, another application's dialog) are also in
// test/behaviour/chat.test.ts.
import { toGlobalId } from '../../src/services/global-id';
import { prismaOf } from '../../src/provisioning/client';
import { memberDialog, UNKNOWN } from '../support/chat';
import { seedTenant, type Tenant } from '../support/seed';
import { type GraphQLResult, useService } from '../support/service';

const service = useService();
const seed = () => seedTenant(service.app.provisioning);

async function gql(query: string, variables: Record<string, unknown>, headers: Record<string, string>): Promise<GraphQLResult> {
  const res = await service.graphql(query, variables, headers);
  expect(res.status).toBeLessThan(500);
  return res;
}

const HISTORY = /* GraphQL */ `
  query ($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    node(id: $id) {
      ... on Dialog {
        messages(first: $first, after: $after, last: $last, before: $before) {
          edges {
            cursor
            node {
              id
              databaseId
              body
              sender {
                databaseId
              }
            }
          }
          pageInfo {
            hasNextPage
            hasPreviousPage
            startCursor
            endCursor
          }
        }
      }
    }
  }
`;

const dialogGid = (t: Tenant) => toGlobalId('Dialog', t.dialogId);

/** Twelve more messages in the tenant's dialog (fifteen in all), oldest first. */
async function longDialog(t: Tenant): Promise<string[]> {
  const ids = [...t.messageIds];
  for (let i = 0; i < 12; i++) {
    ids.push((await service.app.provisioning.chat.createMessage({ dialogId: t.dialogId, senderId: i % 2 ? t.owner.id : t.member.id, body: `m${i}` })).id);
  }
  return ids;
}

describe('identification', () => {
  test('Dialog and Message ids are opaque global ids; databaseId is the 24-hex id; node() answers them', async () => {
    const t = await seed();
    const res = await gql(
      `query ($ids: [ID!]!) { nodes(ids: $ids) { __typename id ... on Dialog { databaseId name type } ... on Message { databaseId body } } }`,
      { ids: [dialogGid(t), toGlobalId('Message', t.messageIds[0]!)] },
      t.as.member,
    );
    expect(res.body).toEqual({
      data: {
        nodes: [
          { __typename: 'Dialog', id: dialogGid(t), databaseId: t.dialogId, name: null, type: 2 },
          { __typename: 'Message', id: toGlobalId('Message', t.messageIds[0]!), databaseId: t.messageIds[0], body: 'one' },
        ],
      },
    });
    expect(dialogGid(t)).not.toContain(t.dialogId);
  });

  test("node() answers null, not an error, for an absent, malformed, invisible or other application's id", async () => {
    const t = await seed();
    const other = await seed();
    const ids = [
      toGlobalId('Dialog', UNKNOWN),
      'not-an-id',
      t.dialogId, // a 24-hex id is not a global id
      toGlobalId('Dialog', other.dialogId), // another application's dialog
      toGlobalId('Message', other.messageIds[0]!),
      dialogGid(t), // the outsider does not occupy it
    ];
    const res = await gql(`query ($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids }, t.as.outsider);
    expect(res.body).toEqual({ data: { nodes: ids.map(() => null) } });
    const one = await gql(`query ($id: ID!) { node(id: $id) { id } }`, { id: toGlobalId('Dialog', other.dialogId) }, t.as.owner);
    expect(one.body).toEqual({ data: { node: null } });
  });

  test("a dialog's name, as provisioning gave it", async () => {
    const t = await seed();
    const named = await service.app.provisioning.chat.createDialog({ applicationId: t.applicationId, ownerId: t.owner.id, occupantIds: [], name: 'Team' });
    const res = await gql(`query ($id: ID!) { node(id: $id) { ... on Dialog { name type } } }`, { id: toGlobalId('Dialog', named.id) }, t.as.owner);
    expect(res.body).toEqual({ data: { node: { name: 'Team', type: 2 } } });
  });

  test('User.databaseId is the user id', async () => {
    const t = await seed();
    const res = await gql(`{ viewer { user { id databaseId login } } }`, {}, t.as.member);
    expect(res.body).toEqual({ data: { viewer: { user: { id: t.member.id, databaseId: t.member.id, login: 'member' } } } });
  });
});

describe('the viewer', () => {
  test("dialogs, most recent activity first, with owner, occupants and the last message of the caller's history", async () => {
    const t = await seed();
    const second = await memberDialog(service, t); // newer activity
    const res = await gql(
      `{ viewer { dialogs(first: 10) { totalCount edges { node { databaseId owner { databaseId } occupants { databaseId } lastMessage { databaseId body } } }
         pageInfo { hasNextPage hasPreviousPage } } } }`,
      {},
      t.as.owner,
    );
    const ids = [t.owner.id, t.member.id].sort((a, b) => a - b).map((databaseId) => ({ databaseId }));
    expect(res.body.data.viewer.dialogs).toEqual({
      totalCount: 2,
      edges: [
        {
          node: {
            databaseId: second.dialogId,
            owner: { databaseId: t.member.id },
            occupants: ids,
            lastMessage: { databaseId: second.messageId, body: 'member owns this' },
          },
        },
        { node: { databaseId: t.dialogId, owner: { databaseId: t.owner.id }, occupants: ids, lastMessage: { databaseId: t.messageIds[2], body: 'three' } } },
      ],
      pageInfo: { hasNextPage: false, hasPreviousPage: false },
    });
    // A new message moves the older dialog to the top.
    await gql(
      `mutation ($input: MessageSendInput!) { messageSend(input: $input) { message { id } } }`,
      { input: { dialogId: t.dialogId, body: 'news' } },
      t.as.owner,
    );
    const after = await gql(`{ viewer { dialogs(first: 1) { edges { node { databaseId lastMessage { body } } } pageInfo { hasNextPage } } } }`, {}, t.as.owner);
    expect(after.body.data.viewer.dialogs).toEqual({
      edges: [{ node: { databaseId: t.dialogId, lastMessage: { body: 'news' } } }],
      pageInfo: { hasNextPage: true },
    });
  });

  test('one failing viewer field is null with its error; the others stay', async () => {
    const t = await seed();
    const res = await gql(`{ viewer { user { login } dialogs(first: 0) { totalCount } } }`, {}, t.as.owner);
    expect(res.body.data).toEqual({ viewer: { user: { login: 'owner' }, dialogs: null } });
    expect(res.body.errors).toEqual([
      expect.objectContaining({ path: ['viewer', 'dialogs'], extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'first' }) }),
    ]);
  });

  test('a root field that fails leaves the others: viewer null for an application session, session answered', async () => {
    const t = await seed();
    const res = await gql(`{ viewer { user { id } } session { userId } }`, {}, t.as.app);
    expect(res.body.data).toEqual({ viewer: null, session: { userId: null } });
    expect(res.body.errors).toEqual([expect.objectContaining({ path: ['viewer'], extensions: expect.objectContaining({ code: 'FORBIDDEN' }) })]);
  });

  test('registeredUsers pages both ways', async () => {
    const t = await seed();
    await gql(
      `mutation ($c: [ContactInput!]!) { uploadAddressBook(contacts: $c) { created } }`,
      { c: [t.member, t.outsider].map((u) => ({ name: u.login, phone: u.phone })) },
      t.as.owner,
    );
    const q = `query ($last: Int, $before: String) { viewer { registeredUsers(last: $last, before: $before) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor } } } }`;
    const last = await gql(q, { last: 1 }, t.as.owner);
    expect(last.body.data.viewer.registeredUsers.edges.map((e: { node: { id: number } }) => e.node.id)).toEqual([t.outsider.id]);
    expect(last.body.data.viewer.registeredUsers.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const before = await gql(q, { last: 1, before: last.body.data.viewer.registeredUsers.pageInfo.startCursor }, t.as.owner);
    expect(before.body.data.viewer.registeredUsers.edges.map((e: { node: { id: number } }) => e.node.id)).toEqual([t.member.id]);
    expect(before.body.data.viewer.registeredUsers.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    // The old field pages backward too.
    const old = await gql(
      `{ registeredUsersConnection(last: 1) { edges { node { id } } pageInfo { hasPreviousPage hasNextPage startCursor endCursor } } }`,
      {},
      t.as.owner,
    );
    expect(old.body.data.registeredUsersConnection).toEqual({
      edges: [{ node: { id: t.outsider.id } }],
      pageInfo: { hasPreviousPage: true, hasNextPage: false, startCursor: expect.any(String), endCursor: expect.any(String) },
    });
  });
});

describe('a history paged both ways', () => {
  test('last/before from the newest back to the oldest, and first/after forward, give the whole history in order', async () => {
    const t = await seed();
    const all = await longDialog(t);
    const back: string[] = [];
    let before: string | null = null;
    let pages = 0;
    for (;;) {
      const res = await gql(HISTORY, { id: dialogGid(t), last: 4, before }, t.as.member);
      const conn = res.body.data.node.messages;
      back.unshift(...conn.edges.map((e: { node: { databaseId: string } }) => e.node.databaseId));
      pages++;
      if (!conn.pageInfo.hasPreviousPage) break;
      before = conn.pageInfo.startCursor;
    }
    expect(back).toEqual(all);
    expect(pages).toBe(4);
    const forward: string[] = [];
    let after: string | null = null;
    for (;;) {
      const res = await gql(HISTORY, { id: dialogGid(t), first: 4, after }, t.as.member);
      const conn = res.body.data.node.messages;
      forward.push(...conn.edges.map((e: { node: { databaseId: string } }) => e.node.databaseId));
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
    }
    expect(forward).toEqual(all);
  });

  test('a cursor the field did not return, or first with before, is BAD_USER_INPUT', async () => {
    const t = await seed();
    const bad = await gql(HISTORY, { id: dialogGid(t), last: 2, before: 'nope' }, t.as.member);
    expect(bad.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'before' }) })]);
    const mixed = await gql(HISTORY, { id: dialogGid(t), first: 2, before: 'x' }, t.as.member);
    expect(mixed.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'before' }) })]);
  });

  // sender { databaseId } is answered from the message row; any other User
  // field, however it is selected, reads the user. One document with both
  // variable values: what the selection needs is decided per request.
  test("a sender's ids come from the message; a fragment or an @include that asks for more reads the user", async () => {
    const t = await seed();
    const SENDERS = /* GraphQL */ `
      query ($id: ID!, $full: Boolean!) {
        node(id: $id) {
          ... on Dialog {
            messages(last: 3) {
              edges {
                node {
                  sender {
                    id
                    databaseId
                    login @include(if: $full)
                    ...Names
                  }
                }
              }
            }
            owner {
              databaseId
            }
            occupants {
              databaseId
            }
          }
        }
      }
      fragment Names on User {
        full: fullName @include(if: $full)
      }
    `;
    const senders = async (full: boolean) =>
      (await gql(SENDERS, { id: dialogGid(t), full }, t.as.member)).body.data.node as {
        messages: { edges: { node: { sender: Record<string, unknown> } }[] };
        owner: unknown;
        occupants: unknown;
      };
    const ids = await senders(false);
    expect(ids.messages.edges.map((e) => e.node.sender)).toEqual(Array(3).fill({ id: t.owner.id, databaseId: t.owner.id }));
    expect(ids.owner).toEqual({ databaseId: t.owner.id });
    expect(ids.occupants).toEqual([t.owner.id, t.member.id].sort((a, b) => a - b).map((databaseId) => ({ databaseId })));
    const full = await senders(true);
    expect(full.messages.edges.map((e) => e.node.sender)).toEqual(
      Array(3).fill({ id: t.owner.id, databaseId: t.owner.id, login: 'owner', full: 'owner Example' }),
    );
  });
});

const DELETE = /* GraphQL */ `
  mutation ($input: MessagesDeleteInput!) {
    messagesDelete(input: $input) {
      outcomes {
        requestedId
        messageId
        status
      }
      deletedMessageIds
      userErrors {
        code
        field
        message
      }
      clientMutationId
    }
  }
`;

describe('messagesDelete', () => {
  test("an outcome per distinct id in request order: valid global and 24-hex, absent, malformed, another application's", async () => {
    const t = await seed();
    const other = await seed();
    const [m0, m1] = t.messageIds as [string, string];
    const requested = [toGlobalId('Message', m0), m1, UNKNOWN, 'nope', other.messageIds[0]!, m1, toGlobalId('Dialog', t.dialogId)];
    const res = await gql(DELETE, { input: { messageIds: requested, clientMutationId: 'c1' } }, t.as.member);
    expect(res.body).toEqual({
      data: {
        messagesDelete: {
          outcomes: [
            { requestedId: toGlobalId('Message', m0), messageId: toGlobalId('Message', m0), status: 'DELETED' },
            { requestedId: m1, messageId: toGlobalId('Message', m1), status: 'DELETED' },
            { requestedId: UNKNOWN, messageId: toGlobalId('Message', UNKNOWN), status: 'NOT_FOUND' },
            { requestedId: 'nope', messageId: null, status: 'INVALID_ID' },
            { requestedId: other.messageIds[0], messageId: toGlobalId('Message', other.messageIds[0]!), status: 'NOT_FOUND' },
            { requestedId: toGlobalId('Dialog', t.dialogId), messageId: null, status: 'INVALID_ID' },
          ],
          deletedMessageIds: expect.arrayContaining([toGlobalId('Message', m0), toGlobalId('Message', m1)]),
          userErrors: [],
          clientMutationId: 'c1',
        },
      },
    });
    expect(res.body.data.messagesDelete.deletedMessageIds).toHaveLength(2);
    // Hidden for the member only.
    const history = await gql(HISTORY, { id: dialogGid(t), last: 10 }, t.as.member);
    expect(history.body.data.node.messages.edges.map((e: { node: { databaseId: string } }) => e.node.databaseId)).toEqual([t.messageIds[2]]);
  });

  test('FOR_EVERYONE by a member: NOT_PERMITTED for the ids of dialogs they do not own, SKIPPED for the others, nothing deleted', async () => {
    const t = await seed();
    const mine = await memberDialog(service, t);
    const res = await gql(DELETE, { input: { messageIds: [mine.messageId, t.messageIds[0], UNKNOWN, 'x'], scope: 'FOR_EVERYONE' } }, t.as.member);
    expect(res.body.data.messagesDelete).toEqual({
      outcomes: [
        { requestedId: mine.messageId, messageId: toGlobalId('Message', mine.messageId), status: 'SKIPPED' },
        { requestedId: t.messageIds[0], messageId: toGlobalId('Message', t.messageIds[0]!), status: 'NOT_PERMITTED' },
        { requestedId: UNKNOWN, messageId: toGlobalId('Message', UNKNOWN), status: 'NOT_FOUND' },
        { requestedId: 'x', messageId: null, status: 'INVALID_ID' },
      ],
      deletedMessageIds: [],
      userErrors: [{ code: 'WRONG_PERMISSIONS', field: ['input', 'messageIds'], message: 'WrongPermissions' }],
      clientMutationId: null,
    });
    const rows = await prismaOf(service.db).message.count({ where: { id: { in: [mine.messageId, t.messageIds[0]!] }, deletedAt: { not: null } } });
    expect(rows).toBe(0);
  });

  test('NO_IDS and TOO_MANY_IDS are userErrors; a committed write beside it is kept in the answer', async () => {
    const t = await seed();
    const res = await gql(
      `mutation ($m: MessageSendInput!, $d: MessagesDeleteInput!) {
        a: messageSend(input: $m) { message { body } userErrors { code } }
        b: messagesDelete(input: $d) { outcomes { status } userErrors { code field } }
      }`,
      { m: { dialogId: t.dialogId, body: 'kept' }, d: { messageIds: [] } },
      t.as.owner,
    );
    expect(res.body).toEqual({
      data: { a: { message: { body: 'kept' }, userErrors: [] }, b: { outcomes: [], userErrors: [{ code: 'NO_IDS', field: ['input', 'messageIds'] }] } },
    });
    const many = await gql(DELETE, { input: { messageIds: Array.from({ length: 1001 }, (_, i) => `id${i}`) } }, t.as.owner);
    expect(many.body.data.messagesDelete.userErrors).toEqual([expect.objectContaining({ code: 'TOO_MANY_IDS' })]);
  });

  test('deleteMessages is deprecated and keeps working', async () => {
    const t = await seed();
    const res = await gql(`mutation ($ids: [ID!]!) { deleteMessages(ids: $ids) { successfullyDeleted notFound } }`, { ids: [t.messageIds[0]] }, t.as.owner);
    expect(res.body).toEqual({ data: { deleteMessages: { successfullyDeleted: [t.messageIds[0]], notFound: [] } } });
    const intro = await gql(`{ __type(name: "Mutation") { fields(includeDeprecated: true) { name isDeprecated deprecationReason } } }`, {}, t.as.owner);
    expect(intro.body.data.__type.fields).toContainEqual({
      name: 'deleteMessages',
      isDeprecated: true,
      deprecationReason: expect.stringMatching(/messagesDelete/),
    });
  });
});

describe('messageSend', () => {
  const SEND = `mutation ($input: MessageSendInput!) { messageSend(input: $input) { message { id databaseId body sender { databaseId } dialog { databaseId } } userErrors { code field message } clientMutationId } }`;

  test('an occupant sends by global or 24-hex id; the message ends the history', async () => {
    const t = await seed();
    const res = await gql(SEND, { input: { dialogId: dialogGid(t), body: 'hello 👋', clientMutationId: 'x' } }, t.as.member);
    const sent = res.body.data.messageSend;
    expect(sent).toMatchObject({
      message: { body: 'hello 👋', sender: { databaseId: t.member.id }, dialog: { databaseId: t.dialogId } },
      userErrors: [],
      clientMutationId: 'x',
    });
    expect(sent.message.id).toBe(toGlobalId('Message', sent.message.databaseId));
    const history = await gql(HISTORY, { id: dialogGid(t), last: 1 }, t.as.owner);
    expect(history.body.data.node.messages.edges[0].node.databaseId).toBe(sent.message.databaseId);
  });

  test.each([
    ['an outsider', (t: Tenant) => ({ dialogId: t.dialogId, body: 'hi' }), 'outsider', 'DIALOG_NOT_FOUND', 'dialogId'],
    ['an unknown dialog', () => ({ dialogId: UNKNOWN, body: 'hi' }), 'owner', 'DIALOG_NOT_FOUND', 'dialogId'],
    ['a malformed dialog id', () => ({ dialogId: 'x', body: 'hi' }), 'owner', 'DIALOG_NOT_FOUND', 'dialogId'],
    ['a blank body', (t: Tenant) => ({ dialogId: t.dialogId, body: '  ' }), 'owner', 'BODY_BLANK', 'body'],
    ['a body of 10,001 characters', (t: Tenant) => ({ dialogId: t.dialogId, body: '😀'.repeat(10_001) }), 'owner', 'BODY_TOO_LONG', 'body'],
  ] as const)('%s: a userError, nothing stored', async (_what, input, who, code, field) => {
    const t = await seed();
    const res = await gql(SEND, { input: input(t) }, t.as[who]);
    expect(res.body.data.messageSend).toEqual({
      message: null,
      userErrors: [{ code, field: ['input', field], message: expect.any(String) }],
      clientMutationId: null,
    });
    expect(await prismaOf(service.db).message.count({ where: { dialogId: t.dialogId } })).toBe(3);
  });

  test('10,000 characters (code points) are taken', async () => {
    const t = await seed();
    const res = await gql(SEND, { input: { dialogId: t.dialogId, body: '😀'.repeat(10_000) } }, t.as.owner);
    expect(res.body.data.messageSend.userErrors).toEqual([]);
  });
});

describe('the cost rule counts rows', () => {
  const SCREEN = `{ viewer { dialogs(first: 10) { edges { node { id name lastMessage { id body } messages(last: 5) {
    edges { node { id body createdAt sender { id fullName } } } pageInfo { hasPreviousPage startCursor } } } } } } }`;

  test("a screen's ordinary query (ten dialogs with their last five messages) is answered", async () => {
    const t = await seed();
    const res = await gql(SCREEN, {}, t.as.owner);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.viewer.dialogs.edges[0].node.messages.edges).toHaveLength(3);
  });

  test('a viewer query over the rows limit is refused before it runs', async () => {
    const t = await seed();
    const res = await gql(`{ viewer { dialogs(first: 100) { edges { node { messages(last: 1000) { edges { node { id } } } } } } } }`, {}, t.as.owner);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'COST_LIMIT_EXCEEDED' }) })]);
    expect(res.body.errors?.[0]?.message).toMatch(/document cost 100101 is over the limit of 10000/);
  });
});
