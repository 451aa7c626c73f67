// The chat screens through the normalized caches frontend teams use, against
// the real service (issue 32): Apollo Client 4's InMemoryCache configured as
// examples/frontend/src/caches.ts does (relayStylePagination; deleted
// messages evicted by id), and urql's Graphcache with its defaults plus the
// `keys` entries docs/graphql.md documents for the types without an id.
import { readFileSync } from 'node:fs';
import { ApolloClient, CombinedGraphQLErrors, gql, HttpLink, type TypedDocumentNode } from '@apollo/client';
import { Client, fetchExchange } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { buildSchema, isObjectType } from 'graphql';
import { createChatCache, evictDeletedMessages, graphcacheKeys } from '../../examples/frontend/src/caches';
import { DeleteMessages, RegisteredUsers, UploadAddressBook, UserByExternalId } from '../../examples/frontend/src/operations';
import { SCHEMA_ARTIFACT } from '../../src/paths';
import { toGlobalId } from '../../src/services/global-id';
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';

const service = useService();
let endpoint: string;
beforeAll(() => {
  endpoint = `${service.baseUrl}/graphql`;
});

interface HistoryData {
  node: {
    __typename: 'Dialog';
    id: string;
    messages: {
      edges: { cursor: string; node: { __typename: 'Message'; id: string; body: string | null } }[];
      pageInfo: { hasPreviousPage: boolean; startCursor: string | null };
    } | null;
  } | null;
}

/** A dialog's history as a chat screen reads it: the newest `last`, then back `before`. */
const HISTORY: TypedDocumentNode<HistoryData, { id: string; last: number; before?: string }> = gql`
  query History($id: ID!, $last: Int, $before: String) {
    node(id: $id) {
      id
      ... on Dialog {
        messages(last: $last, before: $before) {
          edges {
            cursor
            node {
              id
              body
            }
          }
          pageInfo {
            hasPreviousPage
            startCursor
          }
        }
      }
    }
  }
`;

const MESSAGES_DELETE: TypedDocumentNode<
  { messagesDelete: { deletedMessageIds: string[]; outcomes: { requestedId: string; status: string }[] } | null },
  { ids: string[] }
> = gql`
  mutation MessagesDelete($ids: [String!]!) {
    messagesDelete(input: { messageIds: $ids }) {
      deletedMessageIds
      outcomes {
        requestedId
        status
      }
    }
  }
`;

/** Seven messages in the tenant's dialog (the seed's three, then m4 to m7), as global ids. */
async function longDialog(t: Tenant): Promise<string[]> {
  const ids = [...t.messageIds];
  for (let i = 4; i <= 7; i++) ids.push((await service.app.provisioning.chat.createMessage({ dialogId: t.dialogId, senderId: t.member.id, body: `m${i}` })).id);
  return ids.map((id) => toGlobalId('Message', id));
}

/** fetch, with the operations sent noted. */
function recording(): { fetch: typeof fetch; operations: string[] } {
  const operations: string[] = [];
  return {
    operations,
    fetch: async (input, init) => {
      const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { operationName?: string }) : {};
      operations.push(body.operationName ?? new URL(String(input instanceof Request ? input.url : input)).searchParams.get('operationName') ?? '?');
      return fetch(input, init);
    },
  };
}

describe('Apollo Client 4 with InMemoryCache', () => {
  function client(headers: Record<string, string>) {
    const sent = recording();
    return { sent, apollo: new ApolloClient({ link: new HttpLink({ uri: endpoint, headers, fetch: sent.fetch }), cache: createChatCache() }) };
  }

  test('history pages merge backward (last/before) into one list under Dialog.messages', async () => {
    const t = await seedTenant(service.app.provisioning);
    await longDialog(t);
    const { apollo } = client(t.as.owner);
    const id = toGlobalId('Dialog', t.dialogId);
    const read = () => apollo.cache.readQuery({ query: HISTORY, variables: { id, last: 3 } })?.node?.messages;
    const bodies = () => read()?.edges.map((e) => e.node.body);
    // Each page from the network (what fetchMore does): the field's cached list would otherwise answer it.
    const page = (before?: string) => apollo.query({ query: HISTORY, variables: { id, last: 3, before }, fetchPolicy: 'network-only' });

    await page();
    expect(bodies()).toEqual(['m5', 'm6', 'm7']);
    expect(read()?.pageInfo.hasPreviousPage).toBe(true);

    await page(read()!.pageInfo.startCursor!);
    expect(bodies()).toEqual(['two', 'three', 'm4', 'm5', 'm6', 'm7']);
    expect(read()?.pageInfo.hasPreviousPage).toBe(true);

    await page(read()!.pageInfo.startCursor!);
    expect(bodies()).toEqual(['one', 'two', 'three', 'm4', 'm5', 'm6', 'm7']);
    expect(read()?.pageInfo.hasPreviousPage).toBe(false);
  });

  test('messagesDelete evicts the deleted messages from the cache by deletedMessageIds, with no refetch', async () => {
    const t = await seedTenant(service.app.provisioning);
    const messages = await longDialog(t);
    const { apollo, sent } = client(t.as.member);
    const id = toGlobalId('Dialog', t.dialogId);
    await apollo.query({ query: HISTORY, variables: { id, last: 10 } });
    const watched: (string | null)[][] = [];
    const subscription = apollo.watchQuery({ query: HISTORY, variables: { id, last: 10 }, fetchPolicy: 'cache-only' }).subscribe(({ data }) => {
      const edges = (data as HistoryData | undefined)?.node?.messages?.edges;
      if (edges) watched.push(edges.map((e) => e.node.body));
    });
    sent.operations.length = 0;

    const result = await apollo.mutate({
      mutation: MESSAGES_DELETE,
      variables: { ids: [messages[1]!, messages[4]!, 'not-an-id'] },
      update: (cache, { data }) => evictDeletedMessages(cache, data?.messagesDelete?.deletedMessageIds ?? []),
    });
    expect(result.data?.messagesDelete?.deletedMessageIds).toEqual([messages[1], messages[4]]);
    expect(result.data?.messagesDelete?.outcomes.map((o) => o.status)).toEqual(['DELETED', 'DELETED', 'INVALID_ID']);

    const after = apollo.cache.readQuery({ query: HISTORY, variables: { id, last: 10 } });
    expect(after?.node?.messages?.edges.map((e) => e.node.body)).toEqual(['one', 'three', 'm4', 'm6', 'm7']);
    expect(apollo.cache.extract()).not.toHaveProperty(apollo.cache.identify({ __typename: 'Message', id: messages[1]! })!);
    // The screen watching the history shows the rest at once; the only request was the mutation.
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(watched.at(-1)).toEqual(['one', 'three', 'm4', 'm6', 'm7']);
    subscription.unsubscribe();
    expect(sent.operations).toEqual(['MessagesDelete']);
  });

  test("with errorPolicy 'all' one failing viewer field leaves the others on screen", async () => {
    const t = await seedTenant(service.app.provisioning);
    const { apollo } = client(t.as.owner);
    const VIEWER: TypedDocumentNode<{
      viewer: {
        user: { id: number; login: string } | null;
        dialogs: { totalCount: number } | null;
        registeredUsers: { edges: { node: { id: number } }[] } | null;
      } | null;
    }> = gql`
      query ChatHome {
        viewer {
          user {
            id
            login
          }
          dialogs(first: 0) {
            totalCount
          }
          registeredUsers(first: 10) {
            edges {
              node {
                id
              }
            }
          }
        }
      }
    `;
    const result = await apollo.query({ query: VIEWER, errorPolicy: 'all' });
    expect(result.data?.viewer).toEqual({
      __typename: 'Viewer',
      user: { __typename: 'User', id: t.owner.id, login: 'owner' },
      dialogs: null,
      registeredUsers: { __typename: 'RegisteredUsersConnection', edges: [] },
    });
    expect(CombinedGraphQLErrors.is(result.error)).toBe(true);
    const errors = (result.error as CombinedGraphQLErrors).errors;
    expect(errors).toEqual([expect.objectContaining({ path: ['viewer', 'dialogs'], extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) })]);
  });
});

describe('urql Graphcache', () => {
  /** Graphcache's warnings (it writes them with console.warn), for the length of `run`. */
  async function warningsOf(run: () => Promise<void>): Promise<string[]> {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      await run();
      return warn.mock.calls.map((args) => String(args[0]));
    } finally {
      warn.mockRestore();
    }
  }

  const ADDRESS_BOOK = gql`
    query AddressBook($udid: String) {
      addressBook(udid: $udid) {
        name
        phone
      }
    }
  `;

  test('the documented keys cover every type without an id; no other type needs one', () => {
    const schema = buildSchema(readFileSync(SCHEMA_ARTIFACT, 'utf8'));
    const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].map((type) => type?.name);
    const keyless = Object.values(schema.getTypeMap())
      .filter(isObjectType)
      .filter((type) => !roots.includes(type.name) && !type.name.startsWith('__') && !('id' in type.getFields()))
      // Graphcache embeds these by itself, without a warning.
      .filter((type) => !/PageInfo|(Connection|Edge)$/.test(type.name))
      .map((type) => type.name);
    expect(Object.keys(graphcacheKeys).sort()).toEqual(keyless.sort());
  });

  test('with its defaults and those keys, no Invalid key for any type the examples query', async () => {
    const t = await seedTenant(service.app.provisioning);
    const messages = await longDialog(t);
    const urql = new Client({ url: endpoint, exchanges: [cacheExchange({ keys: graphcacheKeys }), fetchExchange], fetchOptions: { headers: t.as.owner } });
    const run = async (query: Parameters<Client['query']>[0], variables: Record<string, unknown>, mutation = false) => {
      const result = await (mutation ? urql.mutation(query, variables) : urql.query(query, variables)).toPromise();
      expect(result.error).toBeUndefined();
      return result.data as Record<string, unknown>;
    };
    const CHAT = gql`
      query ChatScreen($id: ID!) {
        session {
          id
          userId
        }
        viewer {
          user {
            id
            databaseId
            login
          }
          dialogs(first: 5) {
            totalCount
            edges {
              cursor
              node {
                id
                name
                owner {
                  id
                }
                lastMessage {
                  id
                  body
                }
              }
            }
            pageInfo {
              hasNextPage
              endCursor
            }
          }
          registeredUsers(first: 5) {
            edges {
              node {
                id
                login
              }
            }
          }
        }
        node(id: $id) {
          id
          ... on Dialog {
            messages(last: 5) {
              edges {
                node {
                  id
                  body
                  sender {
                    id
                  }
                }
              }
              pageInfo {
                hasPreviousPage
                startCursor
              }
            }
          }
        }
      }
    `;
    const SEND = gql`
      mutation Send($dialogId: String!) {
        messageSend(input: { dialogId: $dialogId, body: "from urql" }) {
          message {
            id
            body
          }
          userErrors {
            code
            field
            message
          }
        }
      }
    `;
    const DELETE = gql`
      mutation Delete($ids: [String!]!) {
        messagesDelete(input: { messageIds: $ids, scope: FOR_EVERYONE }) {
          deletedMessageIds
          outcomes {
            requestedId
            messageId
            status
          }
          userErrors {
            code
            field
            message
          }
        }
      }
    `;
    const warnings = await warningsOf(async () => {
      // examples/frontend's own operations, then a chat screen's.
      await run(
        UploadAddressBook,
        {
          contacts: [
            { name: 'Member', phone: '+10000000102' },
            { name: 'X', phone: '1' },
          ],
          udid: 'urql',
        },
        true,
      );
      expect(await run(ADDRESS_BOOK, { udid: 'urql' })).toEqual({ addressBook: [expect.objectContaining({ name: 'Member', phone: '+10000000102' })] });
      await run(RegisteredUsers, { udid: 'urql' });
      await run(UserByExternalId, { externalUserId: 102 });
      await run(CHAT, { id: toGlobalId('Dialog', t.dialogId) });
      await run(SEND, { dialogId: toGlobalId('Dialog', t.dialogId) }, true);
      await run(DELETE, { ids: [messages[0]!, 'ffffffffffffffffffffffff'] }, true);
      await run(DeleteMessages, { ids: [t.messageIds[1]!] }, true);
    });
    expect(warnings.filter((w) => w.includes('Invalid key'))).toEqual([]);
    expect(warnings).toEqual([]);
  });

  test('without those keys Graphcache warns Invalid key for Contact (what the entries are for)', async () => {
    const t = await seedTenant(service.app.provisioning);
    await service.graphql(`mutation { uploadAddressBook(udid: "bare", contacts: [{ name: "Member", phone: "+10000000102" }]) { created } }`, {}, t.as.owner);
    const urql = new Client({ url: endpoint, exchanges: [cacheExchange(), fetchExchange], fetchOptions: { headers: t.as.owner } });
    const warnings = await warningsOf(async () => {
      const result = await urql.query(ADDRESS_BOOK, { udid: 'bare' }).toPromise();
      expect(result.error).toBeUndefined();
    });
    expect(warnings).toEqual([expect.stringMatching(/^Invalid key: .*`Contact`/s)]);
  });
});
