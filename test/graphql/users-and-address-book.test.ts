// userByExternalId, registeredUsers and uploadAddressBook through /graphql,
// each case next to its REST twin: both surfaces must return the same users
// and counts, and fail with corresponding errors (HTTP 200, extensions.code,
// the same message, and null for the failed field).
import { bookOf, type Contact, contactCount, MEMBER_PHONE, OUTSIDER_PHONE, STRANGER_PHONE } from '../support/address-book';
import { startService, type GraphQLResult, type HttpResult, type TestService } from '../support/service';
import { seedTenant } from '../support/seed';

const GQL_USER_FIELDS = [
  'id',
  'fullName',
  'email',
  'login',
  'phone',
  'website',
  'createdAt',
  'updatedAt',
  'lastRequestAt',
  'externalUserId',
  'facebookId',
  'twitterId',
  'blobId',
  'customData',
  'ageOver16',
  'allowStatisticsAnalysis',
  'allowSalesActivities',
  'parentsContacts',
  'userTags',
];

const USER_BY_EXTERNAL_ID = `query UserByExternalId($externalUserId: Int!) {
  userByExternalId(externalUserId: $externalUserId) { ${GQL_USER_FIELDS.join(' ')} }
}`;
const REGISTERED_USERS = `query RegisteredUsers($udid: String) {
  registeredUsers(udid: $udid) { ${GQL_USER_FIELDS.join(' ')} }
}`;
const UPLOAD_ADDRESS_BOOK = `mutation UploadAddressBook($contacts: [ContactInput!]!, $udid: String, $force: Boolean) {
  uploadAddressBook(contacts: $contacts, udid: $udid, force: $force) { created updated deleted }
}`;

/** REST status of each GraphQL error code. */
const STATUS_OF_CODE = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  BAD_REQUEST: 400,
  BAD_USER_INPUT: 422,
  NOT_FOUND: 404,
} as const;
type Code = keyof typeof STATUS_OF_CODE;

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => {
  await service.close();
});

/** camelCase GraphQL user → the REST record's snake_case keys. */
function toRest(user: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(user).map(([key, value]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), value]));
}

async function gql(query: string, variables: Record<string, unknown>, headers: Record<string, string>): Promise<GraphQLResult> {
  const res = await service.graphql(query, variables, headers);
  expect(res.status).toBeLessThan(500);
  return res;
}

const rest = (method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<HttpResult> =>
  service.call(method, path, body === undefined ? { headers } : { headers, body });

const gqlLookup = (externalUserId: number, headers: Record<string, string>) => gql(USER_BY_EXTERNAL_ID, { externalUserId }, headers);
const restLookup = (externalUserId: number | string, headers: Record<string, string>) =>
  rest('GET', `/users/external/${externalUserId}.json`, headers);

const gqlRegistered = (headers: Record<string, string>, udid?: string | null) =>
  gql(REGISTERED_USERS, udid === undefined ? {} : { udid }, headers);
const restRegistered = (headers: Record<string, string>, udid?: string) =>
  rest('GET', `/address_book/registered_users.json${udid === undefined ? '' : `?udid=${encodeURIComponent(udid)}`}`, headers);

const gqlUpload = (headers: Record<string, string>, contacts: unknown, udid?: string, force?: boolean) =>
  gql(UPLOAD_ADDRESS_BOOK, { contacts, ...(udid === undefined ? {} : { udid }), ...(force === undefined ? {} : { force }) }, headers);
const restUpload = (headers: Record<string, string>, contacts: unknown, udid?: string, force?: boolean) =>
  rest('POST', '/address_book.json', headers, {
    contacts,
    ...(udid === undefined ? {} : { udid }),
    ...(force === undefined ? {} : { force: force ? 1 : 0 }),
  });

/** The one message of a REST error body, whichever of the spec's shapes it has. */
function restMessage(body: any): string {
  if (Array.isArray(body.errors)) return body.errors[0];
  if (body.errors) return (Object.values(body.errors)[0] as string[])[0]!;
  return body.message;
}

/**
 * A GraphQL failure of `field`: HTTP 200, one error with `code`, no value for
 * the field; and the REST twin fails with the corresponding status and the
 * same message.
 */
function expectSameFailure(g: GraphQLResult, r: HttpResult, field: string, code: Code, message?: string): void {
  expect(g.status).toBe(200);
  expect(g.body.errors).toHaveLength(1);
  expect(g.body.errors![0]!.extensions?.code).toBe(code);
  expect((g.body.errors![0] as { path?: unknown }).path).toEqual([field]);
  // A nullable field is null; a non-null one nulls the whole data.
  if (g.body.data !== null) expect(g.body.data).toEqual({ [field]: null });
  expect(r.status).toBe(STATUS_OF_CODE[code]);
  expect(restMessage(r.body)).toBe(g.body.errors![0]!.message);
  if (message !== undefined) expect(g.body.errors![0]!.message).toBe(message);
}

describe('userByExternalId', () => {
  test('returns the same record as the REST lookup, field for field', async () => {
    const t = await seedTenant(service.app.services);
    await service.app.services.users.create({
      applicationId: t.applicationId,
      login: 'full',
      password: 'password123',
      fullName: 'Full Record',
      website: 'https://example.com/',
      externalUserId: 4242,
      facebookId: 'fb',
      twitterId: 'tw',
      userTags: ['a', 'b'],
    });
    for (const externalUserId of [101, 102, 4242]) {
      // An API key leaves last_request_at alone, so the two reads see the same row.
      const g = await gqlLookup(externalUserId, t.as.apiKey);
      const r = await restLookup(externalUserId, t.as.apiKey);
      expect(g.status).toBe(200);
      expect(g.body.errors).toBeUndefined();
      expect(r.status).toBe(200);
      expect(toRest(g.body.data.userByExternalId)).toEqual(r.body.user);
    }
  });

  test('works with a user token, an API key and an API key with On-Behalf-Of, all returning the same user', async () => {
    const t = await seedTenant(service.app.services);
    for (const headers of [t.as.owner, t.as.apiKey, t.as.onBehalfOf(t.outsider.id)]) {
      const g = await gqlLookup(102, headers);
      const r = await restLookup(102, headers);
      expect(g.body.data.userByExternalId).toMatchObject({ id: t.member.id, externalUserId: 102, login: 'member' });
      expect(r.body.user).toMatchObject({ id: t.member.id, external_user_id: 102, login: 'member' });
    }
  });

  test('an unknown id and an id of another application are NOT_FOUND "User not found" on both surfaces', async () => {
    const a = await seedTenant(service.app.services);
    const b = await seedTenant(service.app.services);
    await service.app.services.users.create({ applicationId: b.applicationId, login: 'in-b', password: 'password123', externalUserId: 5150 });
    for (const externalUserId of [5150, 5151]) {
      const g = await gqlLookup(externalUserId, a.as.owner);
      const r = await restLookup(externalUserId, a.as.owner);
      expectSameFailure(g, r, 'userByExternalId', 'NOT_FOUND', 'User not found');
      expect(g.body.data).toEqual({ userByExternalId: null });
      expect(r.body).toEqual({ code: 'NOT_FOUND', message: 'User not found' });
    }
    expect((await gqlLookup(5150, b.as.owner)).body.data.userByExternalId.login).toBe('in-b');
  });

  test.each([0, -1])('external id %p is BAD_USER_INPUT on externalUserId, as REST’s 422', async (externalUserId) => {
    const t = await seedTenant(service.app.services);
    const g = await gqlLookup(externalUserId, t.as.owner);
    const r = await restLookup(externalUserId, t.as.owner);
    expectSameFailure(g, r, 'userByExternalId', 'BAD_USER_INPUT', 'must be an integer between 1 and 2147483647');
    expect(g.body.errors![0]!.extensions?.field).toBe('externalUserId');
    expect(r.body).toEqual({ errors: { external_user_id: ['must be an integer between 1 and 2147483647'] } });
  });

  test('an id beyond 32 bits is refused by GraphQL’s Int itself, with BAD_USER_INPUT (HTTP 400), as REST’s 422', async () => {
    const t = await seedTenant(service.app.services);
    const g = await gqlLookup(2147483648, t.as.owner);
    // Variable coercion fails before execution: Apollo answers 400 without data.
    expect(g.status).toBe(400);
    expect(g.body.errors![0]!.extensions?.code).toBe('BAD_USER_INPUT');
    expect(g.body.data).toBeUndefined();
    const r = await restLookup(2147483648, t.as.owner);
    expect(r.status).toBe(422);
  });

  test('credential failures carry the same code and message on both surfaces', async () => {
    const t = await seedTenant(service.app.services);
    const cases: [Record<string, string>, Code][] = [
      [{}, 'UNAUTHENTICATED'],
      [{ 'SVC-Token': 'made-up-token' }, 'UNAUTHENTICATED'],
      [{ Authorization: 'ApiKey no-such-key' }, 'UNAUTHENTICATED'],
      [{ Authorization: 'Bearer x' }, 'UNAUTHENTICATED'],
      [t.as.app, 'FORBIDDEN'],
      [{ ...t.as.owner, ...t.as.apiKey }, 'BAD_REQUEST'],
      [{ ...t.as.owner, 'On-Behalf-Of': String(t.member.id) }, 'BAD_REQUEST'],
    ];
    for (const [headers, code] of cases) {
      const g = await gqlLookup(101, headers);
      const r = await restLookup(101, headers);
      expectSameFailure(g, r, 'userByExternalId', code);
      expect(g.body.data).toEqual({ userByExternalId: null });
    }
    const app = await gqlLookup(101, t.as.app);
    expect(app.body.errors![0]!.message).toBe('Forbidden. Need user.');
  });
});

describe('registeredUsers', () => {
  test('the global book gives the same users in the same order on both surfaces, as full records', async () => {
    const t = await seedTenant(service.app.services);
    await restUpload(t.as.owner, [
      { name: 'Outsider', phone: OUTSIDER_PHONE },
      { name: 'Member', phone: MEMBER_PHONE },
      { name: 'Nobody', phone: STRANGER_PHONE },
    ]);
    const headers = t.as.onBehalfOf(t.owner.id);
    const g = await gqlRegistered(headers);
    const r = await restRegistered(headers);
    expect(g.body.errors).toBeUndefined();
    expect(g.body.data.registeredUsers.map((u: { id: number }) => u.id)).toEqual([t.member.id, t.outsider.id]);
    expect(g.body.data.registeredUsers.map(toRest)).toEqual(r.body.items.map((item: { user: unknown }) => item.user));
  });

  test('device books match only for their own udid on both surfaces', async () => {
    const t = await seedTenant(service.app.services);
    await gqlUpload(t.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }], 'A');
    await gqlUpload(t.as.owner, [{ name: 'Outsider', phone: OUTSIDER_PHONE }]);
    const expected: [string | undefined, number[]][] = [
      [undefined, [t.outsider.id]],
      ['', [t.outsider.id]],
      ['A', [t.member.id]],
      ['B', []],
    ];
    for (const [udid, ids] of expected) {
      const g = await gqlRegistered(t.as.owner, udid);
      const r = await restRegistered(t.as.owner, udid);
      expect([udid, g.body.data.registeredUsers.map((u: { id: number }) => u.id)]).toEqual([udid, ids]);
      expect([udid, r.body.items.map((item: { user: { id: number } }) => item.user.id)]).toEqual([udid, ids]);
    }
    // An explicit null is the global book too.
    expect((await gqlRegistered(t.as.owner, null)).body.data.registeredUsers.map((u: { id: number }) => u.id)).toEqual([t.outsider.id]);
  });

  test('users of another application with the same phone are returned by neither surface', async () => {
    const a = await seedTenant(service.app.services);
    const b = await seedTenant(service.app.services);
    await gqlUpload(a.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }]);
    const g = await gqlRegistered(a.as.owner);
    const r = await restRegistered(a.as.owner);
    expect(g.body.data.registeredUsers.map((u: { id: number }) => u.id)).toEqual([a.member.id]);
    expect(r.body.items.map((item: { user: { id: number } }) => item.user.id)).toEqual([a.member.id]);
    expect((await gqlRegistered(b.as.owner)).body.data.registeredUsers).toEqual([]);
  });

  test('selecting id and phone gives what REST’s compact=1 gives', async () => {
    const t = await seedTenant(service.app.services);
    await gqlUpload(t.as.owner, [
      { name: 'Member', phone: MEMBER_PHONE },
      { name: 'Outsider', phone: OUTSIDER_PHONE },
    ]);
    const g = await gql('{ registeredUsers { id phone } }', {}, t.as.owner);
    const r = await rest('GET', '/address_book/registered_users.json?compact=1', t.as.owner);
    expect(r.body.items).toEqual(g.body.data.registeredUsers.map((user: unknown) => ({ user })));
    expect(g.body.data.registeredUsers).toEqual([
      { id: t.member.id, phone: MEMBER_PHONE },
      { id: t.outsider.id, phone: OUTSIDER_PHONE },
    ]);
  });

  test('an application token and an API key without On-Behalf-Of are FORBIDDEN, as REST’s 403', async () => {
    const t = await seedTenant(service.app.services);
    for (const headers of [t.as.app, t.as.apiKey]) {
      const g = await gqlRegistered(headers);
      const r = await restRegistered(headers);
      expectSameFailure(g, r, 'registeredUsers', 'FORBIDDEN', 'Forbidden. Need user.');
      expect(g.body.data).toBeNull();
      expect(r.body).toEqual({ errors: ['Forbidden. Need user.'] });
    }
  });

  test('an API key with On-Behalf-Of reads that user’s book on both surfaces', async () => {
    const t = await seedTenant(service.app.services);
    await restUpload(t.as.member, [{ name: 'Outsider', phone: OUTSIDER_PHONE }]);
    const g = await gqlRegistered(t.as.onBehalfOf(t.member.id));
    const r = await restRegistered(t.as.onBehalfOf(t.member.id));
    expect(g.body.data.registeredUsers.map((u: { id: number }) => u.id)).toEqual([t.outsider.id]);
    expect(r.body.items.map((item: { user: { id: number } }) => item.user.id)).toEqual([t.outsider.id]);
    expect((await gqlRegistered(t.as.onBehalfOf(t.owner.id))).body.data.registeredUsers).toEqual([]);
  });

  test('a udid of 65 characters is BAD_USER_INPUT, as REST’s 422, and 64 is fine', async () => {
    const t = await seedTenant(service.app.services);
    const g = await gqlRegistered(t.as.owner, 'u'.repeat(65));
    const r = await restRegistered(t.as.owner, 'u'.repeat(65));
    expectSameFailure(g, r, 'registeredUsers', 'BAD_USER_INPUT', 'udid must be at most 64 characters');
    expect(g.body.errors![0]!.extensions?.field).toBe('udid');
    expect(g.body.data).toBeNull();
    const ok = await gqlRegistered(t.as.owner, 'u'.repeat(64));
    expect(ok.body).toEqual({ data: { registeredUsers: [] } });
  });

  test('missing or unknown credentials are UNAUTHENTICATED, as REST’s 401', async () => {
    await seedTenant(service.app.services);
    for (const headers of [{}, { 'SVC-Token': 'made-up-token' }] as Record<string, string>[]) {
      const g = await gqlRegistered(headers);
      const r = await restRegistered(headers);
      expectSameFailure(g, r, 'registeredUsers', 'UNAUTHENTICATED');
      expect(g.body.data).toBeNull();
    }
  });
});

describe('uploadAddressBook', () => {
  test('a sequence of uploads yields the same counts and the same book as the REST sequence', async () => {
    const t = await seedTenant(service.app.services);
    // The owner's book goes through GraphQL, the member's through REST.
    const steps: { contacts: Contact[]; udid?: string; force?: boolean; counts: { created: number; updated: number; deleted: number } }[] = [
      {
        contacts: [
          { name: 'Outsider', phone: OUTSIDER_PHONE },
          { name: 'Nobody', phone: STRANGER_PHONE },
          { name: 'Nobody twice', phone: STRANGER_PHONE },
        ],
        counts: { created: 2, updated: 0, deleted: 0 },
      },
      { contacts: [{ name: 'Outsider renamed', phone: OUTSIDER_PHONE }], counts: { created: 0, updated: 1, deleted: 0 } },
      { contacts: [{ name: 'Outsider renamed', phone: OUTSIDER_PHONE }], counts: { created: 0, updated: 0, deleted: 0 } },
      { contacts: [], force: false, counts: { created: 0, updated: 0, deleted: 0 } },
      { contacts: [{ name: 'Device', phone: OUTSIDER_PHONE }], udid: 'A', counts: { created: 1, updated: 0, deleted: 0 } },
      { contacts: [{ name: 'Third', phone: '+10000000101' }], force: true, counts: { created: 1, updated: 0, deleted: 2 } },
    ];
    for (const [index, step] of steps.entries()) {
      const g = await gqlUpload(t.as.owner, step.contacts, step.udid, step.force);
      const r = await restUpload(t.as.member, step.contacts, step.udid, step.force);
      expect([index, g.body.data?.uploadAddressBook]).toEqual([index, step.counts]);
      expect([index, r.body]).toEqual([index, step.counts]);
    }
    expect(await bookOf(service, t.owner.id)).toEqual([{ name: 'Third', phone: '+10000000101' }]);
    expect(await bookOf(service, t.member.id)).toEqual([{ name: 'Third', phone: '+10000000101' }]);
    expect(await bookOf(service, t.owner.id, 'A')).toEqual([{ name: 'Device', phone: OUTSIDER_PHONE }]);
    expect(await bookOf(service, t.member.id, 'A')).toEqual([{ name: 'Device', phone: OUTSIDER_PHONE }]);
    // And the two surfaces read each other's writes.
    expect((await gqlRegistered(t.as.member)).body.data.registeredUsers.map((u: { id: number }) => u.id)).toEqual([t.owner.id]);
    expect((await restRegistered(t.as.owner, 'A')).body.items.map((item: { user: { id: number } }) => item.user.id)).toEqual([t.outsider.id]);
  });

  test('an invalid phone is BAD_USER_INPUT on the contact, as REST’s 422, and nothing is stored', async () => {
    const t = await seedTenant(service.app.services);
    for (const phone of ['123', 'abc']) {
      const contacts = [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Broken', phone },
      ];
      const g = await gqlUpload(t.as.owner, contacts);
      const r = await restUpload(t.as.member, contacts);
      expectSameFailure(g, r, 'uploadAddressBook', 'BAD_USER_INPUT', 'contacts[1].phone must be 10 to 15 digits with an optional leading "+"');
      expect(g.body.errors![0]!.extensions?.field).toBe('contacts[1].phone');
      expect(g.body.data).toBeNull();
    }
    expect(await contactCount(service, t)).toBe(0);
  });

  test('10,001 contacts are BAD_USER_INPUT, as REST’s 422, and nothing is stored', async () => {
    const t = await seedTenant(service.app.services);
    const contacts = Array.from({ length: 10_001 }, (_, i) => ({ name: `c${i}`, phone: `+1555${String(i).padStart(7, '0')}` }));
    const g = await gqlUpload(t.as.owner, contacts);
    const r = await restUpload(t.as.owner, contacts);
    expectSameFailure(g, r, 'uploadAddressBook', 'BAD_USER_INPUT', 'at most 10000 contacts per upload');
    expect(await contactCount(service, t)).toBe(0);
  });

  test('a udid of 65 characters is BAD_USER_INPUT, as REST’s 422', async () => {
    const t = await seedTenant(service.app.services);
    const contacts = [{ name: 'Member', phone: MEMBER_PHONE }];
    const g = await gqlUpload(t.as.owner, contacts, 'u'.repeat(65));
    const r = await restUpload(t.as.owner, contacts, 'u'.repeat(65));
    expectSameFailure(g, r, 'uploadAddressBook', 'BAD_USER_INPUT', 'udid must be at most 64 characters');
    expect(await contactCount(service, t)).toBe(0);
  });

  test('a contact without a phone, or contacts missing, is refused by GraphQL’s input types with BAD_USER_INPUT (HTTP 400)', async () => {
    const t = await seedTenant(service.app.services);
    for (const variables of [{ contacts: [{ name: 'No phone' }] }, {}, { contacts: 'x' }, { contacts: null }]) {
      const g = await gql(UPLOAD_ADDRESS_BOOK, variables, t.as.owner);
      expect([variables, g.status, g.body.errors![0]!.extensions?.code]).toEqual([variables, 400, 'BAD_USER_INPUT']);
      expect(g.body.data).toBeUndefined();
    }
    expect(await contactCount(service, t)).toBe(0);
  });

  test('application tokens, API keys without On-Behalf-Of and missing credentials fail alike on both surfaces', async () => {
    const t = await seedTenant(service.app.services);
    const contacts = [{ name: 'Member', phone: MEMBER_PHONE }];
    const cases: [Record<string, string>, Code][] = [
      [t.as.app, 'FORBIDDEN'],
      [t.as.apiKey, 'FORBIDDEN'],
      [{}, 'UNAUTHENTICATED'],
      [{ ...t.as.owner, ...t.as.apiKey }, 'BAD_REQUEST'],
    ];
    for (const [headers, code] of cases) {
      const g = await gqlUpload(headers, contacts);
      const r = await restUpload(headers, contacts);
      expectSameFailure(g, r, 'uploadAddressBook', code);
      expect(g.body.data).toBeNull();
    }
    expect(await contactCount(service, t)).toBe(0);
  });

  test('an API key with On-Behalf-Of uploads into that user’s book', async () => {
    const t = await seedTenant(service.app.services);
    const g = await gqlUpload(t.as.onBehalfOf(t.outsider.id), [{ name: 'Member', phone: MEMBER_PHONE }]);
    expect(g.body).toEqual({ data: { uploadAddressBook: { created: 1, updated: 0, deleted: 0 } } });
    expect(await bookOf(service, t.outsider.id)).toEqual([{ name: 'Member', phone: MEMBER_PHONE }]);
    expect(await contactCount(service, t)).toBe(1);
  });
});
