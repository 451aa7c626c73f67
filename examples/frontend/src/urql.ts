// urql with its defaults (queries as GET) and the persisted exchange: every
// operation, mutations included, goes by hash only.
import { Client, cacheExchange, fetchExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { RegisteredUsers, UploadAddressBook } from './operations';
import { documentHash } from './persisted';
import type { ContactInput } from './__generated__/graphql';

export function createUrqlClient(url: string, headers: Record<string, string>): Client {
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
