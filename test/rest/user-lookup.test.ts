// GET /users/external/{external_user_id}.json — the user record, its exact
// field set and formats, tenant isolation, and every error shape of the lookup.
import { USER_FIELDS } from '../support/records';
import { startService, type TestService } from '../support/service';
import { createFullUser, seedTenant, type Tenant } from '../support/seed';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => {
  await service.close();
});

const lookup = (externalId: string | number, headers: Record<string, string> = {}) =>
  service.call('GET', `/users/external/${externalId}.json`, { headers });

/** A user of the tenant's application with only the required fields set. */
const bareUser = (t: Tenant, login: string, externalUserId: number) =>
  service.app.services.users.create({ applicationId: t.applicationId, login, password: 'password123', externalUserId });

describe('a successful lookup', () => {
  test('a user token returns the user whose external id is in the path, wrapped in "user"', async () => {
    const t = await seedTenant(service.app.services);
    const res = await lookup(102, t.as.owner);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(['user']);
    expect(res.body.user).toMatchObject({
      id: t.member.id,
      external_user_id: 102,
      login: 'member',
      full_name: 'member Example',
      email: 'member@example.com',
      phone: '+10000000102',
    });
  });

  test('the record has exactly the nineteen fields of the spec, in snake_case, with the stored values', async () => {
    const t = await seedTenant(service.app.services);
    const full = await createFullUser(service.app.services, t.applicationId);
    const res = await lookup(4242, t.as.owner);
    expect(res.status).toBe(200);
    const user = res.body.user;
    expect(Object.keys(user).sort()).toEqual(USER_FIELDS);

    const row = await service.db.prisma.user.findUniqueOrThrow({ where: { id: full.id } });
    expect(user).toEqual({
      id: row.id,
      full_name: 'Full Record',
      email: 'full@example.com',
      login: 'full',
      phone: '+4915112345678',
      website: 'https://example.com/full',
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
      last_request_at: null,
      external_user_id: 4242,
      facebook_id: 'fb-4242',
      twitter_id: 'tw-4242',
      blob_id: null,
      custom_data: null,
      age_over16: false,
      allow_statistics_analysis: false,
      allow_sales_activities: false,
      parents_contacts: '',
      user_tags: 'alpha,beta',
    });
  });

  test('timestamps are ISO 8601 in UTC ending in Z', async () => {
    const t = await seedTenant(service.app.services);
    // The caller's own record: its last_request_at is set by this very request.
    const res = await lookup(101, t.as.owner);
    expect(res.status).toBe(200);
    for (const field of ['created_at', 'updated_at', 'last_request_at']) {
      expect(res.body.user[field]).toMatch(ISO_UTC);
      expect(new Date(res.body.user[field]).toISOString()).toBe(res.body.user[field]);
    }
  });

  test('unset text fields are null while parents_contacts and user_tags are empty strings', async () => {
    const t = await seedTenant(service.app.services);
    await bareUser(t, 'bare', 777);
    const res = await lookup(777, t.as.owner);
    expect(res.status).toBe(200);
    const user = res.body.user;
    expect(Object.keys(user).sort()).toEqual(USER_FIELDS);
    for (const field of ['full_name', 'email', 'phone', 'website', 'last_request_at', 'facebook_id', 'twitter_id', 'blob_id', 'custom_data']) {
      expect([field, user[field]]).toEqual([field, null]);
    }
    expect(user.parents_contacts).toBe('');
    expect(user.user_tags).toBe('');
    expect(user.age_over16).toBe(false);
    expect(user.allow_statistics_analysis).toBe(false);
    expect(user.allow_sales_activities).toBe(false);
    expect(user.login).toBe('bare');
    expect(user.external_user_id).toBe(777);
  });

  test('the response reveals neither the password hash nor the application id', async () => {
    const t = await seedTenant(service.app.services);
    const row = await service.db.prisma.user.findUniqueOrThrow({ where: { id: t.member.id } });
    const res = await lookup(102, t.as.owner);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(row.passwordHash);
    expect(res.text).not.toMatch(/scrypt|password|application/i);
    expect(res.body.user).not.toHaveProperty('application_id');
    expect(res.body.user).not.toHaveProperty('applicationId');
  });

  test('an API key without On-Behalf-Of returns the same record as a user token', async () => {
    const t = await seedTenant(service.app.services);
    const byKey = await lookup(103, t.as.apiKey);
    expect(byKey.status).toBe(200);
    expect(byKey.body.user.id).toBe(t.outsider.id);
    const byToken = await lookup(103, t.as.member);
    expect(byToken.status).toBe(200);
    expect(byKey.body).toEqual(byToken.body);
  });

  test('an API key with On-Behalf-Of returns the record as well', async () => {
    const t = await seedTenant(service.app.services);
    const res = await lookup(101, t.as.onBehalfOf(t.member.id));
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ id: t.owner.id, external_user_id: 101, login: 'owner' });
  });

  test('the same external id in two applications resolves to the user of the caller’s application', async () => {
    const a = await seedTenant(service.app.services);
    const b = await seedTenant(service.app.services);
    const fromA = await lookup(102, a.as.owner);
    const fromB = await lookup(102, b.as.apiKey);
    expect(fromA.body.user.id).toBe(a.member.id);
    expect(fromB.body.user.id).toBe(b.member.id);
    expect(a.member.id).not.toBe(b.member.id);
  });
});

describe('a lookup that finds nothing', () => {
  test('an unknown external id is 404 with code NOT_FOUND and message "User not found"', async () => {
    const t = await seedTenant(service.app.services);
    const res = await lookup(999, t.as.owner);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'NOT_FOUND', message: 'User not found' });
  });

  test('an external id used only in another application gives the very same 404 as an unknown one', async () => {
    const a = await seedTenant(service.app.services);
    const b = await seedTenant(service.app.services);
    await bareUser(b, 'elsewhere', 5150);
    expect(await service.db.prisma.user.count({ where: { externalUserId: 5150, applicationId: b.applicationId } })).toBe(1);

    const foreign = await lookup(5150, a.as.owner);
    const unknown = await lookup(5151, a.as.owner);
    const foreignByKey = await lookup(5150, a.as.apiKey);
    expect(foreign.status).toBe(404);
    expect(foreign.text).toBe(unknown.text);
    expect(foreignByKey.status).toBe(404);
    expect(foreignByKey.text).toBe(unknown.text);
    expect(foreign.body).toEqual({ code: 'NOT_FOUND', message: 'User not found' });
    // Found from its own application.
    expect((await lookup(5150, b.as.owner)).status).toBe(200);
  });
});

describe('an external id that is not a valid integer', () => {
  test.each(['abc', '1.5', '0', '-1', '2147483648', '99999999999'])(
    'the path value %s is rejected with 422 and an external_user_id error',
    async (value) => {
      const t = await seedTenant(service.app.services);
      const res = await lookup(value, t.as.owner);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ errors: { external_user_id: ['must be an integer between 1 and 2147483647'] } });
    },
  );

  test('the largest 32-bit external id is valid and merely not found', async () => {
    const t = await seedTenant(service.app.services);
    const res = await lookup(2147483647, t.as.owner);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'NOT_FOUND', message: 'User not found' });
  });
});

describe('credentials of the lookup', () => {
  test('an application session token is forbidden with 403 "Forbidden. Need user."', async () => {
    const t = await seedTenant(service.app.services);
    const res = await lookup(101, t.as.app);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ errors: { base: ['Forbidden. Need user.'] } });
  });

  test('a request without credentials is 401 asking for a token', async () => {
    await seedTenant(service.app.services);
    const res = await lookup(101);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ errors: { base: ['Token is required: send SVC-Token or Authorization: ApiKey <key>'] } });
  });

  test('an unknown session token is 401 "Required session does not exist"', async () => {
    await seedTenant(service.app.services);
    const res = await lookup(101, { 'SVC-Token': 'no-such-session-token' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ errors: { base: ['Required session does not exist'] } });
  });

  test('an expired session token is 401 "Required session does not exist"', async () => {
    const t = await seedTenant(service.app.services);
    await service.db.prisma.session.updateMany({
      where: { userId: t.owner.id },
      data: { expiresAt: new Date(Date.now() - 60_000) },
    });
    const res = await lookup(102, t.as.owner);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ errors: { base: ['Required session does not exist'] } });
  });

  test('sending both SVC-Token and Authorization is 400 with a base error', async () => {
    const t = await seedTenant(service.app.services);
    const res = await lookup(101, { ...t.as.owner, ...t.as.apiKey });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['errors']);
    expect(Object.keys(res.body.errors)).toEqual(['base']);
    expect(res.body.errors.base).toEqual([expect.any(String)]);
  });

  test('an unknown API key is 401 "Unknown API key"', async () => {
    await seedTenant(service.app.services);
    const res = await lookup(101, { Authorization: 'ApiKey not-a-real-key' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ errors: { base: ['Unknown API key'] } });
  });

  test('credentials are checked before the user is looked up, so an unknown id without credentials is 401', async () => {
    await seedTenant(service.app.services);
    const res = await lookup(999);
    expect(res.status).toBe(401);
    expect(res.body.errors.base).toEqual(['Token is required: send SVC-Token or Authorization: ApiKey <key>']);
  });
});

describe('paths that are not the lookup', () => {
  test('the lookup path without the .json suffix is 404 in the code and message shape', async () => {
    const t = await seedTenant(service.app.services);
    const res = await service.call('GET', '/users/external/101', { headers: t.as.owner });
    expect(res.status).toBe(404);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'message']);
    expect(res.body.code).toBe('NOT_FOUND');
    expect(typeof res.body.message).toBe('string');
  });

  test('an unknown path elsewhere is 404 with an errors list', async () => {
    const t = await seedTenant(service.app.services);
    const res = await service.call('GET', '/nope', { headers: t.as.owner });
    expect(res.status).toBe(404);
    expect(Object.keys(res.body)).toEqual(['errors']);
    expect(res.body.errors).toEqual([expect.any(String)]);
  });
});
