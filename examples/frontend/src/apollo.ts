// Apollo Client sending operations by hash only (trusted documents): the
// persisted-queries link puts the document's generated hash in
// extensions.persistedQuery and leaves the text out; queries go as GET, so an
// HTTP cache in front of the service can keep them.
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { UserByExternalId, DeleteMessages } from './operations';
import { documentHash } from './persisted';

export interface ClientOptions {
  /** The service's GraphQL endpoint, e.g. https://chat.example.com/graphql. */
  uri: string;
  /** Credential headers: {'SVC-Token': token}, or {Authorization: 'ApiKey …'}. */
  headers: Record<string, string>;
}

export function createApolloClient({ uri, headers }: ClientOptions): ApolloClient {
  const persisted = new PersistedQueryLink({ generateHash: documentHash, useGETForHashedQueries: true });
  return new ApolloClient({ link: persisted.concat(new HttpLink({ uri, headers })), cache: new InMemoryCache() });
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
