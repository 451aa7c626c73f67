// A typed client of the legacy REST paths: openapi-fetch over the types
// openapi-typescript generates from the service's /openapi.json
// (src/__generated__/rest-api.ts). Paths, parameters, bodies and every
// documented answer, success or error, are checked by the compiler.
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './__generated__/rest-api';

export type RestClient = Client<paths>;

/** `headers`: {'SVC-Token': token}, or {Authorization: 'ApiKey …'} (with 'On-Behalf-Of' for a user). */
export function createRestClient(baseUrl: string, headers: Record<string, string>): RestClient {
  return createClient<paths>({ baseUrl, headers });
}

/** The user with this external id, or null when there is none (404); other failures throw with the service's message. */
export async function userByExternalId(client: RestClient, externalUserId: number) {
  const { data, error, response } = await client.GET('/users/external/{external_user_id}.json', {
    params: { path: { external_user_id: externalUserId } },
  });
  if (data) return data.user;
  if (response.status === 404) return null;
  throw new Error(`GET /users/external/${externalUserId}.json: ${response.status} ${JSON.stringify(error)}`);
}

export async function registeredUsers(client: RestClient, options: { udid?: string; compact?: 0 | 1 } = {}) {
  const { data, error, response } = await client.GET('/address_book/registered_users.json', { params: { query: options } });
  if (!data) throw new Error(`GET /address_book/registered_users.json: ${response.status} ${JSON.stringify(error)}`);
  return data.items.map((item) => item.user);
}

export async function uploadAddressBook(client: RestClient, contacts: { name: string; phone: string }[], udid?: string) {
  const { data, error, response } = await client.POST('/address_book.json', {
    body: { contacts, ...(udid === undefined ? {} : { udid }) },
  });
  if (!data) throw new Error(`POST /address_book.json: ${response.status} ${JSON.stringify(error)}`);
  return data;
}

export async function deleteMessages(client: RestClient, ids: string[], force: 0 | 1 = 0) {
  const { data, error, response } = await client.DELETE('/chat/Message/{ids}.json', {
    params: { path: { ids: ids.join(',') } },
    body: { force },
  });
  if (!data) throw new Error(`DELETE /chat/Message/….json: ${response.status} ${JSON.stringify(error)}`);
  return { deleted: data.SuccessfullyDeleted.ids, notFound: data.NotFound.ids };
}
