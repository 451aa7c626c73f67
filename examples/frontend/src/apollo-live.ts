// A chat screen kept current by live events in Apollo Client's cache: a
// deletion removes the messages from the dialog's cached history and evicts
// them, so every query that showed them re-renders without a request.
import { type ApolloCache, type ApolloClient, isReference, type Reference } from '@apollo/client';
import { ChatScreen, MessageAdded, MessagesDeleted } from './live';
import type { MessageAddedSubscription, MessagesDeletedSubscription } from './__generated__/graphql';

export type MessageAddedEvent = MessageAddedSubscription['messageAdded'];
export type MessagesDeletedEvent = MessagesDeletedSubscription['messagesDeleted'];

/** The dialog's newest messages, from the network the first time, then from the cache. */
export async function chatScreen(client: ApolloClient, dialogId: string) {
  const { data } = await client.query({ query: ChatScreen, variables: { dialogId } });
  return messagesOf(data);
}

/** What the screen shows now, from the cache alone (what a `useQuery` of ChatScreen renders). */
export function cachedChatScreen(client: ApolloClient, dialogId: string) {
  return messagesOf(client.readQuery({ query: ChatScreen, variables: { dialogId } }));
}

function messagesOf(data: { node?: unknown } | null | undefined) {
  const node = data?.node as { messages?: { edges: { node: { id: string; databaseId: string; body: string | null } }[] } | null } | null | undefined;
  return node?.messages?.edges.map((edge) => edge.node) ?? [];
}

/**
 * Follows a dialog (every dialog of the user without `dialogId`): deletions
 * are applied to the cache as they come, new messages handed to `onAdded`
 * (their history cursor is not in the event: a screen appends them to its
 * list, or reads the newest page again when it pages from the end). Returns
 * the function that stops both subscriptions.
 */
export function followDialog(
  client: ApolloClient,
  dialogId: string | undefined,
  on: { added?: (event: MessageAddedEvent) => void; deleted?: (event: MessagesDeletedEvent) => void } = {},
): () => void {
  const added = client.subscribe({ query: MessageAdded, variables: { dialogId } }).subscribe({
    next: ({ data }) => {
      if (data) on.added?.(data.messageAdded);
    },
  });
  const deleted = client.subscribe({ query: MessagesDeleted, variables: { dialogId } }).subscribe({
    next: ({ data }) => {
      if (!data) return;
      evictDeleted(client.cache, data.messagesDeleted);
      on.deleted?.(data.messagesDeleted);
    },
  });
  return () => {
    added.unsubscribe();
    deleted.unsubscribe();
  };
}

/**
 * Takes the deleted messages out of the dialog's cached histories (every page
 * of `Dialog.messages` the cache holds), then evicts them: a query whose list
 * kept a reference to an evicted message would read as incomplete and be
 * fetched again, which this avoids.
 */
/** A page of Dialog.messages as the cache stores it: each edge's node a reference to the Message record. */
interface CachedPage {
  edges: readonly { node: Reference | object }[];
}

export function evictDeleted(cache: ApolloCache, event: MessagesDeletedEvent): void {
  const gone = new Set(event.deletedMessageIds.map((id) => cache.identify({ __typename: 'Message', id })));
  cache.modify({
    id: cache.identify({ __typename: 'Dialog', id: event.dialogId }),
    fields: {
      messages: (existing: CachedPage | Reference | null) =>
        existing === null || isReference(existing)
          ? existing
          : { ...existing, edges: existing.edges.filter((edge) => !(isReference(edge.node) && gone.has(edge.node.__ref))) },
    },
  });
  for (const id of gone) if (id !== undefined) cache.evict({ id });
  cache.gc();
}
