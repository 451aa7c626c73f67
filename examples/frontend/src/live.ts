// Live events (docs/graphql.md, "Subscriptions"): the subscriptions this app
// runs, and the graphql-ws client that carries them for both Apollo Client
// (apollo-live.ts) and urql (urql-live.ts): the `graphql-transport-ws`
// protocol on the same URL as HTTP (ws:// or wss://…/graphql).
import { type Client as WsClient, createClient } from 'graphql-ws';
import { graphql } from './__generated__';

/** New messages in the caller's dialogs (one with `dialogId`); `after`: the last cursor received, to resume. */
export const MessageAdded = graphql(`
  subscription MessageAdded($dialogId: ID, $after: String) {
    messageAdded(dialogId: $dialogId, after: $after) {
      cursor
      message {
        id
        databaseId
        body
        createdAt
        sender {
          id
          login
        }
      }
    }
  }
`);

/** Deletions in the caller's dialogs: the ids a chat screen removes. Never a body. */
export const MessagesDeleted = graphql(`
  subscription MessagesDeleted($dialogId: ID, $after: String) {
    messagesDeleted(dialogId: $dialogId, after: $after) {
      cursor
      dialogId
      scope
      deletedMessageIds
    }
  }
`);

/** A chat screen: the newest messages of a dialog, which the deletion events keep current in Apollo's cache. */
export const ChatScreen = graphql(`
  query ChatScreen($dialogId: ID!) {
    node(id: $dialogId) {
      id
      ... on Dialog {
        messages(last: 50) {
          edges {
            cursor
            node {
              id
              databaseId
              body
              createdAt
            }
          }
        }
      }
    }
  }
`);

export interface LiveClientOptions {
  /** ws://…/graphql or wss://…/graphql: the service's GraphQL URL. */
  url: string;
  /** Sent in connection_init (browsers cannot set headers on a WebSocket): {'SVC-Token': token}, or {Authorization: 'ApiKey …', 'On-Behalf-Of': '42'}. */
  credentials: Record<string, string>;
  /** A WebSocket implementation where there is no global one (Node before 22: the `ws` package). */
  webSocketImpl?: unknown;
}

/**
 * The socket both clients share. With trusted documents a subscribe message
 * carries its document's hash (`extensions.persistedQuery`, as the HTTP
 * requests do), and the replacer leaves the text out (an empty `query`: the
 * protocol requires a string): only the hash travels, and the service runs
 * the manifest's text.
 */
export function createLiveClient({ url, credentials, webSocketImpl }: LiveClientOptions): WsClient {
  return createClient({
    url,
    connectionParams: credentials,
    webSocketImpl,
    jsonMessageReplacer: (key, value: unknown) => (key === 'payload' && hasHash(value) ? { ...value, query: '' } : value),
  });
}

function hasHash(payload: unknown): payload is { extensions: { persistedQuery: object } } {
  const extensions = (payload as { extensions?: { persistedQuery?: unknown } } | null)?.extensions;
  return typeof extensions?.persistedQuery === 'object' && extensions.persistedQuery !== null;
}
