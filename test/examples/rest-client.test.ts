// examples/rest-client against the real service: openapi-fetch over the types
// openapi-typescript generated from the service's /openapi.json, every REST
// path called through it, documented errors included.
import { createRestClient, deleteMessages, registeredUsers, uploadAddressBook, userByExternalId } from '../../examples/rest-client/src/client';
import { buildOpenApiDocument } from '../../src/rest/openapi';
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';

let tenant: Tenant;

const service = useService();
beforeAll(async () => {
  tenant = await seedTenant(service.app.provisioning);
});

test('the types come from the document the service serves at /openapi.json', async () => {
  const served = await service.rest('GET', '/openapi.json');
  expect(served.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
});

test('looks a user up by external id; an unknown id is null, not an error', async () => {
  const client = createRestClient(service.baseUrl, tenant.as.owner);
  const user = await userByExternalId(client, 102);
  expect(user).toMatchObject({ id: tenant.member.id, login: 'member', external_user_id: 102, parents_contacts: '' });
  expect(await userByExternalId(client, 999)).toBeNull();
});

test('uploads an address book, then lists its registered users, compact or full', async () => {
  const client = createRestClient(service.baseUrl, tenant.as.owner);
  expect(await uploadAddressBook(client, [{ name: 'Member', phone: '+10000000102' }], 'rest-device')).toEqual({ created: 1, updated: 0, deleted: 0 });
  expect(await registeredUsers(client, { udid: 'rest-device', compact: 1 })).toEqual([{ id: tenant.member.id, phone: '+10000000102' }]);
  const [full] = await registeredUsers(client, { udid: 'rest-device' });
  expect(full).toMatchObject({ login: 'member', full_name: 'member Example' });
});

test('deletes messages for everyone as the dialog owner', async () => {
  const client = createRestClient(service.baseUrl, tenant.as.owner);
  expect(await deleteMessages(client, [tenant.messageIds[0]!, 'ffffffffffffffffffffffff'], 1)).toEqual({
    deleted: [tenant.messageIds[0]],
    notFound: ['ffffffffffffffffffffffff'],
  });
});

test('a documented error reaches the caller with the service message', async () => {
  const client = createRestClient(service.baseUrl, { 'SVC-Token': 'expired' });
  await expect(userByExternalId(client, 102)).rejects.toThrow(/401 .*Required session does not exist/);
  await expect(deleteMessages(createRestClient(service.baseUrl, tenant.as.member), [tenant.messageIds[1]!], 1)).rejects.toThrow(/403 .*WrongPermissions/);
});
