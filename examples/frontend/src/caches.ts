// Normalized caches for the chat screens (docs/graphql.md, "Chat screens"):
// what an app configures so that Apollo Client's InMemoryCache and urql's
// Graphcache page histories, drop deleted messages and key every type.
import { type ApolloCache, InMemoryCache } from '@apollo/client';
import { relayStylePagination } from '@apollo/client/utilities';
import type { KeyingConfig } from '@urql/exchange-graphcache';

/**
 * Apollo Client's cache for the chat screens. Dialog, Message and User are
 * normalized by `__typename` and `id` (Apollo's default). Each connection
 * keeps one list that pages merge into: a history paged backward
 * (`last`/`before`) is prepended, a list paged forward appended
 * (relayStylePagination); the key arguments are the ones that pick another
 * list (`udid`: another address book). The Viewer has no id: it is the
 * caller, kept under `Query.viewer`, and its fields from several queries are
 * merged into it.
 */
export function createChatCache(): InMemoryCache {
  return new InMemoryCache({
    typePolicies: {
      Query: { fields: { registeredUsersConnection: relayStylePagination(['udid']) } },
      Viewer: { merge: true, fields: { dialogs: relayStylePagination(), registeredUsers: relayStylePagination(['udid']) } },
      Dialog: { fields: { messages: relayStylePagination() } },
    },
  });
}

/**
 * After `messagesDelete`: drops the deleted messages from the cache (its
 * `deletedMessageIds` are the messages' global ids, their `Message.id`), so
 * every history that held them shows the rest, with no refetch.
 * relayStylePagination's read leaves out an edge whose message is gone.
 */
export function evictDeletedMessages(cache: ApolloCache, deletedMessageIds: readonly string[]): void {
  for (const id of deletedMessageIds) cache.evict({ id: cache.identify({ __typename: 'Message', id }) });
  cache.gc();
}

/**
 * Graphcache's `keys` for the types that have no id: each is a value of the
 * object it is read from (a contact of its book, an outcome of its delete, a
 * payload of its mutation, the caller), so it is embedded there rather than
 * normalized. Without an entry Graphcache warns `Invalid key` for each
 * (connections, edges and PageInfo it embeds by itself). Every other type
 * has an `id` and needs none.
 */
export const graphcacheKeys: KeyingConfig = {
  AddressBookUploadResult: () => null,
  Contact: () => null,
  DeleteMessagesResult: () => null,
  MessageAddedEvent: () => null,
  MessageDeleteOutcome: () => null,
  MessageSendPayload: () => null,
  MessageSendUserError: () => null,
  MessagesDeletePayload: () => null,
  MessagesDeleteUserError: () => null,
  MessagesDeletedEvent: () => null,
  RejectedContact: () => null,
  Viewer: () => null,
};
