// urql with its defaults (queries as GET) and the persisted exchange: every
// operation, mutations included, goes by hash only.
import { Client, cacheExchange, fetchExchange, subscriptionExchange, type SubscriptionOperation } from '@urql/core';
import type { DocumentNode } from 'graphql';
import { persistedExchange } from '@urql/exchange-persisted';
import type { Client as WsClient } from 'graphql-ws';
import { RegisteredUsers, UploadAddressBook } from './operations';
import { documentHash } from './persisted';
import type { ContactInput } from './__generated__/graphql';

/** `live`: the socket subscriptions go over (live.ts, createLiveClient); without it, queries and mutations only. */
export function createUrqlClient(url: string, headers: Record<string, string>, live?: WsClient): Client {
  return new Client({
    url,
    fetchOptions: () => ({ headers }),
    exchanges: [
      cacheExchange,
      persistedExchange({
        enforcePersistedQueries: true,
        enableForMutation: true,
        generateHash: async (_query, document) => documentHash(document),
      }),
      ...(live
        ? [
            subscriptionExchange({
              forwardSubscription: (request, operation) => ({
                subscribe: (sink) => ({ unsubscribe: live.subscribe(byHash(request, operation.query), sink) }),
              }),
            }),
          ]
        : []),
      fetchExchange,
    ],
  });
}

export async function registeredUsers(client: Client, udid?: string) {
  const result = await client.query(RegisteredUsers, { udid: udid ?? null }, { requestPolicy: 'network-only' }).toPromise();
  if (result.error) throw result.error;
  return result.data?.registeredUsers ?? [];
}

export async function uploadAddressBook(client: Client, contacts: ContactInput[], udid?: string) {
  const result = await client.mutation(UploadAddressBook, { contacts, udid: udid ?? null, force: false }).toPromise();
  if (result.error) throw result.error;
  if (!result.data) throw new Error('uploadAddressBook returned no data');
  return result.data.uploadAddressBook;
}

/**
 * A subscription over the socket by hash, as the persisted exchange sends
 * queries and mutations over HTTP (it leaves subscriptions to this exchange):
 * the document's hash in extensions.persistedQuery, which the socket's
 * replacer (live.ts) sends instead of the text.
 */
function byHash(request: SubscriptionOperation, document: DocumentNode) {
  return {
    ...request,
    query: request.query ?? '',
    extensions: { ...request.extensions, persistedQuery: { version: 1, sha256Hash: documentHash(document) } },
  };
}
