// GET /users/external/{external_user_id}.json: what only the REST path has.
// The lookup's rules (the record, tenant isolation, credentials, invalid ids)
// are written once for both surfaces in test/behaviour/users.test.ts; here are
// the JSON around the record, the path value as text, the lookup's three error
// bodies written out, and paths that are not the lookup.
import { useService } from '../support/service';
import { seedTenant } from '../support/seed';
import { prismaOf } from '../../src/provisioning/client';

const service = useService();

const lookup = (externalId: string | number, headers: Record<string, string> = {}) => service.call('GET', `/users/external/${externalId}.json`, { headers });

describe('the answer', () => {
  test('is JSON holding the record under "user" alone', async () => {
    const t = await seedTenant(service.app.provisioning);
    const res = await lookup(102, t.as.owner);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(['user']);
    expect(res.body.user).toMatchObject({ id: t.member.id, external_user_id: 102 });
  });

  test('reveals neither the password hash nor the application id', async () => {
    const t = await seedTenant(service.app.provisioning);
    const row = await prismaOf(service.db).user.findUniqueOrThrow({ where: { id: t.member.id } });
    const res = await lookup(102, t.as.owner);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(row.passwordHash);
    expect(res.text).not.toMatch(/scrypt|password|application/i);
  });
});

// The spec names the lookup's error shapes without saying which condition has
// which: the three, as docs/errors.md's Errors section documents them.
describe('the error bodies of the lookup', () => {
  test('not found is {"code","message"} with 404', async () => {
    const t = await seedTenant(service.app.provisioning);
    const res = await lookup(999, t.as.owner);
    expect([res.status, res.body]).toEqual([404, { code: 'NOT_FOUND', message: 'User not found' }]);
  });

  test('a credential or permission failure is {"errors":{"base":[…]}}', async () => {
    const t = await seedTenant(service.app.provisioning);
    const none = await lookup(101);
    expect([none.status, none.body]).toEqual([401, { errors: { base: ['Token is required: send SVC-Token or Authorization: ApiKey <key>'] } }]);
    const app = await lookup(101, t.as.app);
    expect([app.status, app.body]).toEqual([403, { errors: { base: ['Forbidden. Need user.'] } }]);
  });

  test('an invalid external id is {"errors":{"external_user_id":[…]}} with 422', async () => {
    const t = await seedTenant(service.app.provisioning);
    const res = await lookup(0, t.as.owner);
    expect([res.status, res.body]).toEqual([422, { errors: { external_user_id: ['must be an integer between 1 and 2147483647'] } }]);
  });

  test('an external id of another application answers byte for byte as an unknown one', async () => {
    const a = await seedTenant(service.app.provisioning);
    const b = await seedTenant(service.app.provisioning);
    await service.app.provisioning.users.create({ applicationId: b.applicationId, login: 'elsewhere', password: 'password123', externalUserId: 5150 });
    const unknown = await lookup(5151, a.as.owner);
    for (const headers of [a.as.owner, a.as.apiKey]) {
      const foreign = await lookup(5150, headers);
      expect([foreign.status, foreign.text]).toEqual([404, unknown.text]);
    }
  });
});

// The path value is text: these are not integers, or not 32-bit ones. GraphQL's
// Int cannot carry them at all (its coercion refuses 2147483648 before the
// resolver, see test/graphql/users-and-address-book.test.ts).
test.each(['abc', '1.5', '1e3', '2147483648', '99999999999'])('the path value %s is rejected with 422 and an external_user_id error', async (value) => {
  const t = await seedTenant(service.app.provisioning);
  const res = await lookup(value, t.as.owner);
  expect([res.status, res.body]).toEqual([422, { errors: { external_user_id: ['must be an integer between 1 and 2147483647'] } }]);
});

describe('paths that are not the lookup', () => {
  test('the lookup path without the .json suffix is 404 in the code and message shape', async () => {
    const t = await seedTenant(service.app.provisioning);
    const res = await service.call('GET', '/users/external/101', { headers: t.as.owner });
    expect(res.status).toBe(404);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'message']);
    expect(res.body.code).toBe('NOT_FOUND');
    expect(typeof res.body.message).toBe('string');
  });

  test('an unknown path elsewhere is 404 with an errors list', async () => {
    const t = await seedTenant(service.app.provisioning);
    const res = await service.call('GET', '/nope', { headers: t.as.owner });
    expect(res.status).toBe(404);
    expect(Object.keys(res.body)).toEqual(['errors']);
    expect(res.body.errors).toEqual([expect.any(String)]);
  });
});
