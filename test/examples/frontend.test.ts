// examples/frontend against the real service, as a frontend app runs: its
// operations typed by GraphQL Code Generator's client preset, sent by hash
// alone by Apollo Client, urql and plain fetch, to a service that loads the
// example's generated persisted-documents manifest and enforces it
// (GRAPHQL_TRUSTED_DOCUMENTS=enforce). The example is type-checked by
// `npm run typecheck` (examples/tsconfig.json: DOM types, no Node).
import path from 'node:path';
import { appOptionsFromConfig } from '../../src/app';
import { loadConfig } from '../../src/config';
import { loadManifest } from '../../src/graphql/trusted-documents';
import { createApolloClient, deleteMessages, fetchUser } from '../../examples/frontend/src/apollo';
import { execute } from '../../examples/frontend/src/fetch';
import { ChatScreen, MessageAdded, MessagesDeleted } from '../../examples/frontend/src/live';
import { DeleteMessages, RegisteredUsers, UploadAddressBook, UserByExternalId } from '../../examples/frontend/src/operations';
import { documentHash } from '../../examples/frontend/src/persisted';
import { createUrqlClient, registeredUsers, uploadAddressBook } from '../../examples/frontend/src/urql';
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';

const MANIFEST = path.resolve(__dirname, '../../examples/frontend/src/__generated__/persisted-documents.json');

const env = { GRAPHQL_TRUSTED_DOCUMENTS: 'enforce', GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST: MANIFEST, RATE_LIMIT_ENABLED: 'false' };
const service = useService(appOptionsFromConfig(loadConfig(env)));
let tenant: Tenant;
let endpoint: string;
/** Every request the clients make (they use the global fetch). */
const sent: { method: string; url: string; body: string | undefined }[] = [];
const realFetch = globalThis.fetch;

beforeAll(async () => {
  tenant = await seedTenant(service.app.provisioning);
  endpoint = `${service.baseUrl}/graphql`;
  globalThis.fetch = async (input, init) => {
    sent.push({ method: init?.method ?? 'GET', url: String(input instanceof Request ? input.url : input), body: init?.body as string | undefined });
    return realFetch(input, init);
  };
});
afterAll(async () => {
  globalThis.fetch = realFetch;
});
beforeEach(() => {
  sent.length = 0;
});

/** No request carried a document's text: only hashes. */
function expectHashesOnly(): void {
  expect(sent.length).toBeGreaterThan(0);
  for (const request of sent) {
    expect(new URL(request.url).searchParams.has('query')).toBe(false);
    expect(request.body === undefined ? {} : JSON.parse(request.body)).not.toHaveProperty('query');
  }
}

test('the service loads the manifest the example generates: one document per operation, under its embedded hash', () => {
  const manifest = loadManifest(MANIFEST);
  const operations = [UserByExternalId, RegisteredUsers, DeleteMessages, UploadAddressBook, ChatScreen, MessageAdded, MessagesDeleted];
  expect([...manifest.keys()].sort()).toEqual(operations.map(documentHash).sort());
});

test('Apollo Client runs the typed operations by hash only: queries as GET, mutations as POST', async () => {
  const client = createApolloClient({ uri: endpoint, headers: tenant.as.member });
  const user = await fetchUser(client, 101);
  expect(user).toMatchObject({ login: 'owner', externalUserId: 101, phone: '+10000000101' });
  const result = await deleteMessages(client, [tenant.messageIds[0]!, 'ffffffffffffffffffffffff'], false);
  expect(result).toEqual({ __typename: 'DeleteMessagesResult', successfullyDeleted: [tenant.messageIds[0]], notFound: ['ffffffffffffffffffffffff'] });
  expect(sent.map((r) => r.method)).toEqual(['GET', 'POST']);
  expectHashesOnly();
});

test('urql runs the typed operations by hash only, mutations included', async () => {
  const client = createUrqlClient(endpoint, tenant.as.owner);
  expect(await uploadAddressBook(client, [{ name: 'Member', phone: '+10000000102' }], 'urql-device')).toEqual(
    expect.objectContaining({ created: 1, updated: 0, deleted: 0 }),
  );
  const users = await registeredUsers(client, 'urql-device');
  expect(users.map((u) => u.login)).toEqual(['member']);
  expect(sent.map((r) => r.method)).toEqual(['POST', 'GET']);
  expectHashesOnly();
});

test('plain fetch runs them by documentId: a query as a GET URL, a mutation as POST', async () => {
  const query = await execute(endpoint, UserByExternalId, { externalUserId: 103 }, tenant.as.owner);
  expect(query).toEqual({ data: expect.objectContaining({ userByExternalId: expect.objectContaining({ login: 'outsider' }) }) });
  const mutation = await execute(endpoint, DeleteMessages, { ids: ['ffffffffffffffffffffffff'] }, tenant.as.owner);
  expect(mutation.errors).toBeUndefined();
  expect(mutation.data?.deleteMessages).toMatchObject({ successfullyDeleted: [], notFound: ['ffffffffffffffffffffffff'] });
  expect(sent.map((r) => r.method)).toEqual(['GET', 'POST']);
  expectHashesOnly();
});

test('an operation the app did not ship is refused: the service runs only the manifest', async () => {
  const res = await realFetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...tenant.as.owner },
    body: JSON.stringify({ query: '{ userByExternalId(externalUserId: 101) { login email } }' }),
  });
  expect(res.status).toBe(400);
  expect((await res.json()).errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
});
