// The user lookup by external id, written once and run on both surfaces:
// GET /users/external/{id}.json on REST, userByExternalId on GraphQL. Both
// answer the spec's record (the GraphQL adapter renames its camelCase fields),
// find users of the caller's application only, and refuse with the same code
// and message. REST's path parsing and JSON, and GraphQL's Int coercion and
// nullability, stay in test/rest and test/graphql.
import { MESSAGES } from '../../src/errors';
import { prismaOf } from '../../src/provisioning/client';
import { USER_FIELDS } from '../support/records';
import { createFullUser, seedTenant, type Tenant } from '../support/seed';
import { type Headers, REFUSED_CREDENTIALS, SURFACES, surfaceOf, value } from './surfaces';
import { useService } from '../support/service';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;
const EXTERNAL_ID_RULE = 'must be an integer between 1 and 2147483647';

const service = useService();

const seed = () => seedTenant(service.app.provisioning);

/** A user of the tenant's application with only the required fields set. */
const bareUser = (t: Tenant, login: string, externalUserId: number) =>
  service.app.provisioning.users.create({ applicationId: t.applicationId, login, password: 'password123', externalUserId });

describe.each(SURFACES)('%s', (name) => {
  const surface = surfaceOf(name, service);

  const lookup = async (headers: Headers, externalUserId: number) => value(await surface.userByExternalId(headers, externalUserId));

  describe('a successful lookup', () => {
    test('the record has exactly the nineteen fields of the spec, with the stored values', async () => {
      const t = await seed();
      const full = await createFullUser(service.app.provisioning, t.applicationId);
      const user = await lookup(t.as.owner, 4242);
      expect(Object.keys(user).sort()).toEqual(USER_FIELDS);
      const row = await prismaOf(service.db).user.findUniqueOrThrow({ where: { id: full.id } });
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
      const t = await seed();
      // The caller's own record: its last_request_at is set by this very request.
      const user = await lookup(t.as.owner, 101);
      for (const field of ['created_at', 'updated_at', 'last_request_at'] as const) {
        expect(user[field]).toMatch(ISO_UTC);
        expect(new Date(user[field] as string).toISOString()).toBe(user[field]);
      }
    });

    test('unset text fields are null while parents_contacts and user_tags are empty strings', async () => {
      const t = await seed();
      const bare = await bareUser(t, 'bare', 777);
      const user = await lookup(t.as.owner, 777);
      expect(user).toEqual({
        id: bare.id,
        login: 'bare',
        external_user_id: 777,
        ...Object.fromEntries(
          ['full_name', 'email', 'phone', 'website', 'last_request_at', 'facebook_id', 'twitter_id', 'blob_id', 'custom_data'].map((f) => [f, null]),
        ),
        parents_contacts: '',
        user_tags: '',
        age_over16: false,
        allow_statistics_analysis: false,
        allow_sales_activities: false,
        created_at: expect.stringMatching(ISO_UTC),
        updated_at: expect.stringMatching(ISO_UTC),
      });
    });

    test.each<[string, (t: Tenant) => Headers]>([
      ['a user token', (t) => t.as.owner],
      ['an API key', (t) => t.as.apiKey],
      ['an API key with On-Behalf-Of', (t) => t.as.onBehalfOf(t.outsider.id)],
    ])('%s finds the user whose external id is asked for', async (_who, headers) => {
      const t = await seed();
      expect(await lookup(headers(t), 102)).toMatchObject({
        id: t.member.id,
        external_user_id: 102,
        login: 'member',
        full_name: 'member Example',
        email: 'member@example.com',
        phone: '+10000000102',
      });
    });

    test('an API key without On-Behalf-Of returns the same record as a user token', async () => {
      const t = await seed();
      // Neither request is the outsider's, so its last_request_at stays as it is between the two.
      expect(await lookup(t.as.apiKey, 103)).toEqual(await lookup(t.as.member, 103));
    });

    test('the same external id in two applications resolves to the user of the caller’s application', async () => {
      const a = await seed();
      const b = await seed();
      expect((await lookup(a.as.owner, 102)).id).toBe(a.member.id);
      expect((await lookup(b.as.apiKey, 102)).id).toBe(b.member.id);
      expect(a.member.id).not.toBe(b.member.id);
    });
  });

  describe('a lookup that finds nothing', () => {
    test('an unknown external id is NOT_FOUND "User not found"', async () => {
      const t = await seed();
      surface.expectFailure(await surface.userByExternalId(t.as.owner, 999), 'NOT_FOUND', MESSAGES.userNotFound);
    });

    test('an external id used only in another application gives the very same answer as an unknown one', async () => {
      const a = await seed();
      const b = await seed();
      await bareUser(b, 'elsewhere', 5150);
      for (const headers of [a.as.owner, a.as.apiKey]) {
        surface.expectFailure(await surface.userByExternalId(headers, 5150), 'NOT_FOUND', MESSAGES.userNotFound);
      }
      // Found from its own application.
      expect((await lookup(b.as.owner, 5150)).login).toBe('elsewhere');
    });

    test('the largest 32-bit external id is valid and merely not found', async () => {
      const t = await seed();
      surface.expectFailure(await surface.userByExternalId(t.as.owner, 2147483647), 'NOT_FOUND', MESSAGES.userNotFound);
    });
  });

  describe('an external id that is not valid', () => {
    // Integers outside 1…2147483647 that both surfaces can carry; REST's path
    // values that are not integers, and GraphQL's Int bound, are each surface's own.
    test.each([0, -1])('the external id %p is refused as invalid input naming externalUserId', async (externalUserId) => {
      const t = await seed();
      surface.expectFailure(await surface.userByExternalId(t.as.owner, externalUserId), 'BAD_USER_INPUT', EXTERNAL_ID_RULE, 'externalUserId');
    });
  });

  describe('credentials of the lookup', () => {
    test.each(REFUSED_CREDENTIALS)('%s is refused', async (_what, headers, code, message) => {
      const t = await seed();
      surface.expectFailure(await surface.userByExternalId(headers(t), 101), code, message);
    });

    test('an expired session token is refused as one that does not exist', async () => {
      const t = await seed();
      await prismaOf(service.db).session.updateMany({ where: { userId: t.owner.id }, data: { expiresAt: new Date(Date.now() - 60_000) } });
      surface.expectFailure(await surface.userByExternalId(t.as.owner, 102), 'UNAUTHENTICATED', MESSAGES.sessionMissing);
    });

    test('credentials are checked before the user is looked up: an unknown id without credentials is refused for want of credentials', async () => {
      await seed();
      surface.expectFailure(await surface.userByExternalId({}, 999), 'UNAUTHENTICATED', MESSAGES.noCredentials);
    });
  });
});
