// Apollo Client sending operations by hash only (trusted documents): the
// persisted-queries link puts the document's generated hash in
// extensions.persistedQuery and leaves the text out; queries go as GET, so an
// HTTP cache in front of the service can keep them.
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { OperationTypeNode } from 'graphql';
import type { Client as WsClient } from 'graphql-ws';
import { UserByExternalId, DeleteMessages } from './operations';
import { documentHash } from './persisted';

export interface ClientOptions {
  /** The service's GraphQL endpoint, e.g. https://chat.example.com/graphql. */
  uri: string;
  /** Credential headers: {'SVC-Token': token}, or {Authorization: 'ApiKey …'}. */
  headers: Record<string, string>;
  /** The socket subscriptions go over (live.ts, createLiveClient); without it the client runs queries and mutations only. */
  live?: WsClient;
}

export function createApolloClient({ uri, headers, live }: ClientOptions): ApolloClient {
  const persisted = new PersistedQueryLink({ generateHash: documentHash, useGETForHashedQueries: true });
  const http = new HttpLink({ uri, headers });
  // Subscriptions over the WebSocket, by hash as well; everything else over HTTP.
  const transport = live ? ApolloLink.split(({ operationType }) => operationType === OperationTypeNode.SUBSCRIPTION, new GraphQLWsLink(live), http) : http;
  return new ApolloClient({ link: persisted.concat(transport), cache: new InMemoryCache() });
}

/** A typed query: `user` has exactly the fields the document selects. */
export async function fetchUser(client: ApolloClient, externalUserId: number) {
  const { data } = await client.query({ query: UserByExternalId, variables: { externalUserId }, fetchPolicy: 'network-only' });
  return data?.userByExternalId ?? null;
}

export async function deleteMessages(client: ApolloClient, ids: string[], force: boolean) {
  const { data } = await client.mutate({ mutation: DeleteMessages, variables: { ids, force } });
  if (!data) throw new Error('deleteMessages returned no data');
  return data.deleteMessages;
}
