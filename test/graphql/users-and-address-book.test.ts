// userByExternalId, registeredUsers, addressBook and uploadAddressBook: what
// only GraphQL has. Their rules are written once for both surfaces in
// test/behaviour/users.test.ts and test/behaviour/address-book.test.ts; here
// are the nullability of data on an error, the explicit null, and where
// GraphQL's input coercion decides before the resolver runs, each next to the
// REST answer it differs from.
import { MESSAGES } from '../../src/errors';
import { prismaOf } from '../../src/provisioning/client';
import { bookOf, contactCount, MEMBER_PHONE, OUTSIDER_PHONE } from '../support/address-book';
import { type GraphQLResult, useService } from '../support/service';
import { seedTenant } from '../support/seed';

const UPLOAD_ADDRESS_BOOK = `mutation UploadAddressBook($contacts: [ContactInput!]!, $udid: String, $force: Boolean) {
  uploadAddressBook(contacts: $contacts, udid: $udid, force: $force) { created updated deleted }
}`;

const service = useService();

async function gql(query: string, variables: Record<string, unknown>, headers: Record<string, string>): Promise<GraphQLResult> {
  const res = await service.graphql(query, variables, headers);
  expect(res.status).toBeLessThan(500);
  return res;
}

/** A variable refused by GraphQL's coercion before execution: Apollo answers 400 without data. */
function expectCoercionError(res: GraphQLResult): void {
  expect([res.status, res.body.errors?.[0]?.extensions?.code]).toEqual([400, 'BAD_USER_INPUT']);
  expect(res.body.data).toBeUndefined();
}

const ids = (res: GraphQLResult): number[] => res.body.data.registeredUsers.map((u: { id: number }) => u.id);

// userByExternalId is nullable, so its failure nulls only the field; the
// others are non-null, so theirs nulls the whole data.
describe('data on a resolver’s error', () => {
  test.each([
    ['userByExternalId', '{ userByExternalId(externalUserId: 101) { id } }', { userByExternalId: null }],
    ['registeredUsers', '{ registeredUsers { id } }', null],
    ['addressBook', '{ addressBook { phone } }', null],
    ['uploadAddressBook', `mutation { uploadAddressBook(contacts: [{name: "Member", phone: "${MEMBER_PHONE}"}]) { created } }`, null],
  ])('a refused %s answers HTTP 200 with data %p', async (field, query, data) => {
    const t = await seedTenant(service.app.provisioning);
    const res = await gql(query, {}, t.as.app);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data,
      errors: [expect.objectContaining({ message: MESSAGES.needUser, path: [field], extensions: { code: 'FORBIDDEN' } })],
    });
  });
});

describe('userByExternalId', () => {
  // REST's path value is text, checked by the service's rule (422); GraphQL's
  // Int refuses what is not a 32-bit integer itself.
  test.each([2147483648, 1.5])('the external id %p is refused by GraphQL’s Int itself (HTTP 400), where REST answers 422', async (externalUserId) => {
    const t = await seedTenant(service.app.provisioning);
    expectCoercionError(await gql('query ($id: Int!) { userByExternalId(externalUserId: $id) { id } }', { id: externalUserId }, t.as.owner));
    const r = await service.call('GET', `/users/external/${externalUserId}.json`, { headers: t.as.owner });
    expect([r.status, r.body]).toEqual([422, { errors: { external_user_id: ['must be an integer between 1 and 2147483647'] } }]);
  });
});

describe('registeredUsers and addressBook', () => {
  // REST has no null: its udid is present or absent.
  test('an explicit null udid is the global book', async () => {
    const t = await seedTenant(service.app.provisioning);
    await gql(UPLOAD_ADDRESS_BOOK, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }], udid: 'A' }, t.as.owner);
    await gql(UPLOAD_ADDRESS_BOOK, { contacts: [{ name: 'Outsider', phone: OUTSIDER_PHONE }], udid: null }, t.as.owner);
    expect(ids(await gql('query ($udid: String) { registeredUsers(udid: $udid) { id } }', { udid: null }, t.as.owner))).toEqual([t.outsider.id]);
    const book = await gql('query ($udid: String) { addressBook(udid: $udid) { name phone } }', { udid: null }, t.as.owner);
    expect(book.body).toEqual({ data: { addressBook: [{ name: 'Outsider', phone: OUTSIDER_PHONE }] } });
  });

  // One implementation behind both surfaces: a book written through one is the book read through the other.
  test('a book uploaded through REST is read through GraphQL, and the other way round', async () => {
    const t = await seedTenant(service.app.provisioning);
    await service.call('POST', '/address_book.json', { headers: t.as.member, body: { contacts: [{ name: 'Owner', phone: '+10000000101' }] } });
    expect(ids(await gql('{ registeredUsers { id } }', {}, t.as.member))).toEqual([t.owner.id]);
    await gql(UPLOAD_ADDRESS_BOOK, { contacts: [{ name: 'Outsider', phone: OUTSIDER_PHONE }], udid: 'A' }, t.as.owner);
    const r = await service.call('GET', '/address_book/registered_users.json?udid=A', { headers: t.as.owner });
    expect(r.body.items.map((item: { user: { id: number } }) => item.user.id)).toEqual([t.outsider.id]);
  });
});

// registeredUsers reads id and phone from the maintained matches alone when
// nothing else is selected (the REST compact form), and whole user rows
// otherwise: whatever shape the selection takes, every field asked for is
// answered.
describe('registeredUsers, whatever the selection', () => {
  const NEW_PHONE = '+10000000199';

  test.each([
    ['id and phone', '{ registeredUsers { id phone } }', {}, ['id', 'phone']],
    ['aliases and __typename', '{ registeredUsers { __typename i: id p: phone } }', {}, ['__typename', 'i', 'p']],
    ['a field in a named fragment', '{ registeredUsers { id phone ...F } } fragment F on User { login }', {}, ['id', 'phone', 'login']],
    ['a field in an inline fragment', '{ registeredUsers { id ... on User { externalUserId } } }', {}, ['id', 'externalUserId']],
    ['a field under @include(if: true)', 'query ($x: Boolean!) { registeredUsers { id phone login @include(if: $x) } }', { x: true }, ['id', 'phone', 'login']],
    ['a field under @include(if: false)', 'query ($x: Boolean!) { registeredUsers { id phone login @include(if: $x) } }', { x: false }, ['id', 'phone']],
    ['a field under @skip(if: true)', 'query ($x: Boolean!) { registeredUsers { id phone createdAt @skip(if: $x) } }', { x: true }, ['id', 'phone']],
  ])('%s: each selected field answered', async (_name, query, variables, keys) => {
    const t = await seedTenant(service.app.provisioning);
    await gql(UPLOAD_ADDRESS_BOOK, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] }, t.as.owner);
    const res = await gql(query, variables, t.as.owner);
    expect(res.body.errors).toBeUndefined();
    const expected: Record<string, unknown> = {
      __typename: 'User',
      id: t.member.id,
      i: t.member.id,
      phone: MEMBER_PHONE,
      p: MEMBER_PHONE,
      login: 'member',
      externalUserId: 102,
    };
    expect(res.body.data.registeredUsers).toEqual([Object.fromEntries(keys.map((k) => [k, expected[k]]))]);
  });

  test('a user’s new phone shows at once in both forms', async () => {
    const t = await seedTenant(service.app.provisioning);
    await gql(
      UPLOAD_ADDRESS_BOOK,
      {
        contacts: [
          { name: 'Member', phone: MEMBER_PHONE },
          { name: 'Member, new phone', phone: NEW_PHONE },
        ],
      },
      t.as.owner,
    );
    await prismaOf(service.db).user.update({ where: { id: t.member.id }, data: { phone: NEW_PHONE } });
    const compact = await gql('{ registeredUsers { id phone } }', {}, t.as.owner);
    const full = await gql('{ registeredUsers { id phone login } }', {}, t.as.owner);
    expect(compact.body.data.registeredUsers).toEqual([{ id: t.member.id, phone: NEW_PHONE }]);
    expect(full.body.data.registeredUsers).toEqual([{ id: t.member.id, phone: NEW_PHONE, login: 'member' }]);
  });
});

// The keyset-paged form exists only on GraphQL. Its matching rules are
// registeredUsers' (test/behaviour/address-book.test.ts); the property test
// test/behaviour/address-book-matches.test.ts pages through random books.
describe('registeredUsersConnection', () => {
  const PAGE = `query ($udid: String, $first: Int, $after: String) {
    registeredUsersConnection(udid: $udid, first: $first, after: $after) {
      edges { cursor node { id login phone } }
      pageInfo { hasNextPage endCursor }
    }
  }`;
  const page = async (headers: Record<string, string>, variables: Record<string, unknown>) => {
    const res = await gql(PAGE, variables, headers);
    expect(res.body.errors).toBeUndefined();
    return res.body.data.registeredUsersConnection;
  };

  test('pages through the users registeredUsers lists, in user id order, each once', async () => {
    const t = await seedTenant(service.app.provisioning);
    await gql(
      UPLOAD_ADDRESS_BOOK,
      {
        contacts: [
          { name: 'Owner', phone: '+10000000101' },
          { name: 'Member', phone: MEMBER_PHONE },
          { name: 'Outsider', phone: OUTSIDER_PHONE },
        ],
      },
      t.as.owner,
    );
    const first = await page(t.as.owner, { first: 2 });
    expect(first.edges.map((e: { node: { id: number } }) => e.node)).toEqual([
      { id: t.owner.id, login: 'owner', phone: '+10000000101' },
      { id: t.member.id, login: 'member', phone: MEMBER_PHONE },
    ]);
    expect(first.pageInfo).toEqual({ hasNextPage: true, endCursor: first.edges[1].cursor });
    const second = await page(t.as.owner, { first: 2, after: first.pageInfo.endCursor });
    expect(second.edges.map((e: { node: { id: number } }) => e.node.id)).toEqual([t.outsider.id]);
    expect(second.pageInfo).toEqual({ hasNextPage: false, endCursor: second.edges[0].cursor });
    // Any edge's cursor continues after it; without first, a page is 100.
    const rest = await page(t.as.owner, { after: first.edges[0].cursor });
    expect(rest.edges.map((e: { node: { id: number } }) => e.node.id)).toEqual([t.member.id, t.outsider.id]);
    expect(ids(await gql('{ registeredUsers { id } }', {}, t.as.owner))).toEqual([t.owner.id, t.member.id, t.outsider.id]);
  });

  test('an empty book, or a device book, is its own: an empty page has no end cursor', async () => {
    const t = await seedTenant(service.app.provisioning);
    expect(await page(t.as.owner, { first: 5 })).toEqual({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
    await gql(UPLOAD_ADDRESS_BOOK, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }], udid: 'A' }, t.as.owner);
    expect((await page(t.as.owner, { first: 5 })).edges).toEqual([]);
    expect((await page(t.as.owner, { udid: 'A', first: 5 })).edges.map((e: { node: { id: number } }) => e.node.id)).toEqual([t.member.id]);
  });

  test.each([
    ['first', { first: 0 }, 'first must be an integer between 1 and 1000'],
    ['first', { first: 1001 }, 'first must be an integer between 1 and 1000'],
    ['after', { after: 'not a cursor' }, 'after must be a cursor that registeredUsersConnection returned'],
    ['after', { after: Buffer.from('u:0').toString('base64url') }, 'after must be a cursor that registeredUsersConnection returned'],
    ['after', { after: Buffer.from('u:2147483648').toString('base64url') }, 'after must be a cursor that registeredUsersConnection returned'],
    ['after', { after: `${Buffer.from('u:1').toString('base64url')}=` }, 'after must be a cursor that registeredUsersConnection returned'],
  ])('a bad %s (%j) is BAD_USER_INPUT naming it, with no data', async (field, variables, message) => {
    const t = await seedTenant(service.app.provisioning);
    const res = await gql(PAGE, variables, t.as.owner);
    expect([res.status, res.body]).toEqual([
      200,
      { data: null, errors: [expect.objectContaining({ message, path: ['registeredUsersConnection'], extensions: { code: 'BAD_USER_INPUT', field } })] },
    ]);
  });

  test('needs a user, as registeredUsers does', async () => {
    const t = await seedTenant(service.app.provisioning);
    const res = await gql(PAGE, {}, t.as.app);
    expect(res.body).toEqual({ data: null, errors: [expect.objectContaining({ message: MESSAGES.needUser, extensions: { code: 'FORBIDDEN' } })] });
  });
});

describe('uploadAddressBook input', () => {
  test('contacts missing, or not contacts, are refused by GraphQL’s input types with BAD_USER_INPUT (HTTP 400)', async () => {
    const t = await seedTenant(service.app.provisioning);
    for (const variables of [{ contacts: ['+10000000102'] }, {}, { contacts: 'x' }, { contacts: null }]) {
      const g = await gql(UPLOAD_ADDRESS_BOOK, variables, t.as.owner);
      expect([variables, g.status, g.body.errors![0]!.extensions?.code]).toEqual([variables, 400, 'BAD_USER_INPUT']);
      expect(g.body.data).toBeUndefined();
    }
    expect(await contactCount(service, t)).toBe(0);
  });

  // REST rejects only that contact (test/rest/address-book.test.ts); a String
  // variable cannot hold a number, so here the whole request is refused.
  test('a phone given as a number is refused by String coercion (HTTP 400) and nothing is stored', async () => {
    const t = await seedTenant(service.app.provisioning);
    expectCoercionError(
      await gql(
        UPLOAD_ADDRESS_BOOK,
        {
          contacts: [
            { name: 'Member', phone: MEMBER_PHONE },
            { name: 'Number', phone: 15550000002 },
          ],
        },
        t.as.owner,
      ),
    );
    expect(await contactCount(service, t)).toBe(0);
  });

  // REST refuses a lone object with 422: its JSON clients mean a list.
  test('a single contact object for contacts is coerced into a one-element list', async () => {
    const t = await seedTenant(service.app.provisioning);
    const g = await gql(UPLOAD_ADDRESS_BOOK, { contacts: { name: 'Member', phone: MEMBER_PHONE } }, t.as.owner);
    expect(g.body).toEqual({ data: { uploadAddressBook: { created: 1, updated: 0, deleted: 0 } } });
    expect(await bookOf(service, t.owner.id)).toEqual([{ name: 'Member', phone: MEMBER_PHONE }]);
  });

  // REST's flags are the spec's integers, where 1 is the flag and true is refused; here the reverse.
  test.each([
    ['force 1', { contacts: [], force: 1 }],
    ['force "yes"', { contacts: [], force: 'yes' }],
    ['destroy 1', { contacts: [{ phone: MEMBER_PHONE, destroy: 1 }] }],
    ['destroy "1"', { contacts: [{ phone: MEMBER_PHONE, destroy: '1' }] }],
  ])('%s, which is not a Boolean, is refused by coercion (HTTP 400) and nothing changes', async (_what, variables) => {
    const t = await seedTenant(service.app.provisioning);
    await gql(UPLOAD_ADDRESS_BOOK, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] }, t.as.owner);
    expectCoercionError(await gql(UPLOAD_ADDRESS_BOOK, variables, t.as.owner));
    expect(await bookOf(service, t.owner.id)).toEqual([{ name: 'Member', phone: MEMBER_PHONE }]);
  });
});
