// The address book, written once and run on both surfaces: GET
// /address_book/registered_users.json (compact=1 for the compact form), POST
// and GET /address_book.json on REST; registeredUsers, uploadAddressBook and
// addressBook on GraphQL. Exact phone matching within the caller's
// application and book (global or per device), upload counts, forced
// replacement, rejected contacts, limits and credentials, checked against what
// the database holds. REST's 0/1 flags, query and body parsing, and GraphQL's
// input coercion, stay in test/rest and test/graphql.
import { MESSAGES } from '../../src/errors';
import { prismaOf } from '../../src/provisioning/client';
import {
  bookOf,
  byPhone,
  type Contact,
  contactCount,
  manyContacts,
  MEMBER_PHONE,
  NAME_RULE,
  OUTSIDER_PHONE,
  OWNER_PHONE,
  PHONE_RULE,
  STRANGER_PHONE,
} from '../support/address-book';
import { USER_FIELDS } from '../support/records';
import { seedTenant } from '../support/seed';
import { type ContactInput, type Headers, REFUSED_CREDENTIALS, type Refusal, type Result, SURFACES, surfaceOf, type Upload, value } from './surfaces';
import { useService } from '../support/service';

const service = useService();

const seed = () => seedTenant(service.app.provisioning);
/** Two contacts that are users of every tenant and one that is no one's. */
const BOOK: Contact[] = [
  { name: 'Member', phone: MEMBER_PHONE },
  { name: 'Outsider', phone: OUTSIDER_PHONE },
  { name: 'Nobody', phone: STRANGER_PHONE },
];
const counts = (created: number, updated: number, deleted: number, rejected: { index: number; reasons: string[] }[] = []) => ({
  created,
  updated,
  deleted,
  rejected,
});

/** Credentials the address book refuses: those every operation refuses, and an API key acting for no one. */
const REFUSED: Refusal[] = [...REFUSED_CREDENTIALS, ['an API key without On-Behalf-Of', (t) => t.as.apiKey, 'FORBIDDEN', MESSAGES.needUser]];

describe.each(SURFACES)('%s', (name) => {
  const surface = surfaceOf(name, service);

  const upload = async (headers: Headers, contacts: ContactInput[], options: Omit<Upload, 'contacts'> = {}) =>
    value(await surface.uploadAddressBook(headers, { contacts, ...options }));
  /** Ids of the users the book matches, in answer order. */
  const registered = async (headers: Headers, udid?: string) => value(await surface.registeredUsers(headers, udid)).map((u) => u.id);

  describe('registered users of the address book', () => {
    test('are, as full records, the users whose phone equals a contact phone in the global book', async () => {
      const t = await seed();
      await upload(t.as.owner, BOOK);
      // An API key on behalf of the owner leaves every last_request_at as it is between the reads.
      const users = value(await surface.registeredUsers(t.as.onBehalfOf(t.owner.id)));
      expect(users.map((u) => u.id)).toEqual([t.member.id, t.outsider.id]);
      for (const user of users) expect(Object.keys(user).sort()).toEqual(USER_FIELDS);
      // The same record as the external-id lookup returns.
      expect(users[0]).toEqual(value(await surface.userByExternalId(t.as.apiKey, 102)));
      expect(users[1]).toMatchObject({ login: 'outsider', phone: OUTSIDER_PHONE, external_user_id: 103 });
    });

    test('an empty book, or a book whose phones match nobody, matches no one', async () => {
      const t = await seed();
      expect(await registered(t.as.owner)).toEqual([]);
      await upload(t.as.owner, [{ name: 'Nobody', phone: STRANGER_PHONE }]);
      expect(await registered(t.as.owner)).toEqual([]);
    });

    test('phones of other numbers do not match, though a plus sign or a digit apart', async () => {
      const t = await seed();
      const near = [
        { name: 'no plus', phone: MEMBER_PHONE.slice(1) },
        { name: 'one digit more', phone: `${MEMBER_PHONE}0` },
        { name: 'one digit less', phone: MEMBER_PHONE.slice(0, -1) },
        { name: 'other prefix', phone: `+2${MEMBER_PHONE.slice(2)}` },
      ];
      expect(await upload(t.as.owner, near)).toEqual(counts(4, 0, 0));
      expect(await registered(t.as.owner)).toEqual([]);
    });

    test('users of another application with the same phone are never returned', async () => {
      const a = await seed();
      const b = await seed();
      // Both tenants have a member with the phone MEMBER_PHONE.
      expect(await prismaOf(service.db).user.count({ where: { phone: MEMBER_PHONE, applicationId: { in: [a.applicationId, b.applicationId] } } })).toBe(2);
      await upload(a.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }]);
      expect(await registered(a.as.owner)).toEqual([a.member.id]);
      expect(await registered(b.as.owner)).toEqual([]);
      await upload(b.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }]);
      expect(await registered(b.as.owner)).toEqual([b.member.id]);
    });

    test('are ordered by user id, each user once, the caller included when their own phone is in the book', async () => {
      const t = await seed();
      // A second user of the application with the member's phone.
      const twin = await service.app.provisioning.users.create({
        applicationId: t.applicationId,
        login: 'twin',
        password: 'password123',
        phone: MEMBER_PHONE,
        externalUserId: 104,
      });
      await upload(t.as.owner, [
        { name: 'Outsider', phone: OUTSIDER_PHONE },
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Member again', phone: MEMBER_PHONE },
      ]);
      await upload(t.as.owner, [{ name: 'Myself', phone: OWNER_PHONE }]);
      expect(await registered(t.as.owner)).toEqual([t.owner.id, t.member.id, t.outsider.id, twin.id].sort((x, y) => x - y));
    });

    test('a device book is matched only for its own udid, and the global book only without one (or with an empty one)', async () => {
      const t = await seed();
      await upload(t.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }], { udid: 'A' });
      await upload(t.as.owner, [{ name: 'Outsider', phone: OUTSIDER_PHONE }]);
      const expected: [string | undefined, number[]][] = [
        ['A', [t.member.id]],
        [undefined, [t.outsider.id]],
        ['', [t.outsider.id]],
        ['B', []],
        // udid is case-sensitive: "a" is another device.
        ['a', []],
      ];
      for (const [udid, ids] of expected) expect([udid, await registered(t.as.owner, udid)]).toEqual([udid, ids]);
    });

    test('the compact form gives only id and phone for each user', async () => {
      const t = await seed();
      await upload(t.as.owner, [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Outsider', phone: OUTSIDER_PHONE },
      ]);
      expect(value(await surface.registeredUsersCompact(t.as.owner))).toEqual([
        { id: t.member.id, phone: MEMBER_PHONE },
        { id: t.outsider.id, phone: OUTSIDER_PHONE },
      ]);
      await upload(t.as.owner, [{ name: 'Owner', phone: OWNER_PHONE }], { udid: 'A' });
      expect(value(await surface.registeredUsersCompact(t.as.owner, 'A'))).toEqual([{ id: t.owner.id, phone: OWNER_PHONE }]);
    });

    test('a udid of 64 characters is accepted and one of 65 is refused', async () => {
      const t = await seed();
      const udid64 = 'd'.repeat(64);
      await upload(t.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }], { udid: udid64 });
      expect(await registered(t.as.owner, udid64)).toEqual([t.member.id]);
      surface.expectFailure(await surface.registeredUsers(t.as.owner, `${udid64}e`), 'BAD_USER_INPUT', 'udid must be at most 64 characters', 'udid');
    });

    // PostgreSQL text cannot hold NUL ("invalid byte sequence for encoding UTF8:
    // 0x00"): it must be refused before it reaches the database.
    test('a NUL character in the udid is refused', async () => {
      const t = await seed();
      surface.expectFailure(await surface.registeredUsers(t.as.owner, 'a\u0000b'), 'BAD_USER_INPUT', 'udid must not contain NUL characters', 'udid');
    });

    test('an API key with On-Behalf-Of reads that user’s book', async () => {
      const t = await seed();
      await upload(t.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }]);
      await upload(t.as.member, [{ name: 'Outsider', phone: OUTSIDER_PHONE }]);
      expect(await registered(t.as.onBehalfOf(t.owner.id))).toEqual([t.member.id]);
      expect(await registered(t.as.onBehalfOf(t.member.id))).toEqual([t.outsider.id]);
      expect(await registered(t.as.onBehalfOf(t.outsider.id))).toEqual([]);
    });
  });

  describe('uploading an address book', () => {
    test('the first upload creates every contact and stores them in the global book', async () => {
      const t = await seed();
      expect(await upload(t.as.owner, BOOK)).toEqual(counts(3, 0, 0));
      expect(await bookOf(service, t.owner.id)).toEqual(byPhone(BOOK));
      expect(await contactCount(service, t)).toBe(3);
    });

    test('re-uploading a phone with a new name updates it, and with the same name changes nothing', async () => {
      const t = await seed();
      await upload(t.as.owner, [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Outsider', phone: OUTSIDER_PHONE },
      ]);
      expect(await upload(t.as.owner, [{ name: 'Member Renamed', phone: MEMBER_PHONE }])).toEqual(counts(0, 1, 0));
      expect(await bookOf(service, t.owner.id)).toEqual([
        { name: 'Member Renamed', phone: MEMBER_PHONE },
        { name: 'Outsider', phone: OUTSIDER_PHONE },
      ]);
      expect(
        await upload(t.as.owner, [
          { name: 'Member Renamed', phone: MEMBER_PHONE },
          { name: 'Outsider', phone: OUTSIDER_PHONE },
        ]),
      ).toEqual(counts(0, 0, 0));
      const mixed = [
        { name: 'Member Renamed', phone: MEMBER_PHONE },
        { name: 'Outsider 2', phone: OUTSIDER_PHONE },
        { name: 'Nobody', phone: STRANGER_PHONE },
      ];
      expect(await upload(t.as.owner, mixed)).toEqual(counts(1, 1, 0));
      expect(await contactCount(service, t)).toBe(3);
    });

    test('force with a smaller list deletes the missing contacts and leaves exactly the new list', async () => {
      const t = await seed();
      await upload(t.as.owner, BOOK);
      const next = [
        { name: 'Member (new name)', phone: MEMBER_PHONE },
        { name: 'Owner', phone: OWNER_PHONE },
      ];
      expect(await upload(t.as.owner, next, { force: true })).toEqual(counts(1, 1, 2));
      expect(await bookOf(service, t.owner.id)).toEqual(byPhone(next));
      expect(await registered(t.as.owner)).toEqual([t.owner.id, t.member.id]);
      expect(await upload(t.as.owner, [], { force: true })).toEqual(counts(0, 0, 2));
      expect(await bookOf(service, t.owner.id)).toEqual([]);
    });

    test('without force, or with force off, an upload never deletes contacts', async () => {
      const t = await seed();
      await upload(t.as.owner, BOOK);
      expect(await upload(t.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }])).toEqual(counts(0, 0, 0));
      expect(await upload(t.as.owner, [], { force: false })).toEqual(counts(0, 0, 0));
      expect(await bookOf(service, t.owner.id)).toEqual(byPhone(BOOK));
    });

    test('a phone listed twice in one upload counts once and keeps its last name', async () => {
      const t = await seed();
      const twice = [
        { name: 'First', phone: MEMBER_PHONE },
        { name: 'Second', phone: MEMBER_PHONE },
      ];
      expect(await upload(t.as.owner, twice)).toEqual(counts(1, 0, 0));
      expect(await bookOf(service, t.owner.id)).toEqual([{ name: 'Second', phone: MEMBER_PHONE }]);
    });

    test.each([
      '123',
      'abc',
      '+1234567890123456',
      '+1 555 0100',
      '+49 (151) 1234-5678-9012-3',
      '0049 151 1234567 x1',
      '+ 1 (555) 123 - 4567 . . . . . . .',
      '++15551234567',
      '',
    ])('a contact with the invalid phone %p is rejected by its index and the valid ones are stored', async (phone) => {
      const t = await seed();
      const res = await upload(t.as.owner, [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Broken', phone },
      ]);
      expect(res).toEqual(counts(1, 0, 0, [{ index: 1, reasons: [PHONE_RULE] }]));
      expect(await bookOf(service, t.owner.id)).toEqual([{ name: 'Member', phone: MEMBER_PHONE }]);
    });

    test('a contact name of 255 characters is taken and one of 256, or an empty one, is rejected', async () => {
      const t = await seed();
      const res = await upload(t.as.owner, [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'n'.repeat(256), phone: OUTSIDER_PHONE },
        { name: '', phone: OWNER_PHONE },
      ]);
      expect(res).toEqual(
        counts(1, 0, 0, [
          { index: 1, reasons: [NAME_RULE] },
          { index: 2, reasons: [NAME_RULE] },
        ]),
      );
      expect(await contactCount(service, t)).toBe(1);
      expect(await upload(t.as.owner, [{ name: 'n'.repeat(255), phone: OUTSIDER_PHONE }])).toEqual(counts(1, 0, 0));
    });

    test('a contact missing its name, its phone or both is rejected with each reason', async () => {
      const t = await seed();
      const res = await upload(t.as.owner, [{}, { name: 'x' }, { phone: MEMBER_PHONE }]);
      expect(res).toEqual(
        counts(0, 0, 0, [
          { index: 0, reasons: [PHONE_RULE, NAME_RULE] },
          { index: 1, reasons: [PHONE_RULE] },
          { index: 2, reasons: [NAME_RULE] },
        ]),
      );
      expect(await contactCount(service, t)).toBe(0);
    });

    test('a contact to destroy needs a valid phone: without one it is rejected', async () => {
      const t = await seed();
      await upload(t.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }]);
      const res = await upload(t.as.owner, [{ phone: 'abc', destroy: true }, { destroy: true }, { name: 'Outsider', phone: OUTSIDER_PHONE }]);
      expect(res).toEqual(
        counts(1, 0, 0, [
          { index: 0, reasons: [PHONE_RULE] },
          { index: 1, reasons: [PHONE_RULE] },
        ]),
      );
      expect(await contactCount(service, t)).toBe(2);
    });

    test('a forced upload whose contacts are all rejected leaves the book empty: it becomes exactly the contacts taken', async () => {
      const t = await seed();
      await upload(t.as.owner, [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Outsider', phone: OUTSIDER_PHONE },
      ]);
      expect(await upload(t.as.owner, [{ name: 'Broken', phone: 'abc' }], { force: true })).toEqual(counts(0, 0, 2, [{ index: 0, reasons: [PHONE_RULE] }]));
      expect(await contactCount(service, t)).toBe(0);
    });

    test('destroy removes that phone from the book, needs no name, and counts as deleted', async () => {
      const t = await seed();
      await upload(t.as.owner, [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Outsider', phone: OUTSIDER_PHONE },
      ]);
      // Destroying a phone that is not in the book is no error and deletes nothing.
      expect(
        await upload(t.as.owner, [
          { phone: MEMBER_PHONE, destroy: true },
          { phone: STRANGER_PHONE, destroy: true },
        ]),
      ).toEqual(counts(0, 0, 1));
      expect(await bookOf(service, t.owner.id)).toEqual([{ name: 'Outsider', phone: OUTSIDER_PHONE }]);
      // destroy off is an ordinary contact.
      expect(await upload(t.as.owner, [{ name: 'Member', phone: MEMBER_PHONE, destroy: false }])).toEqual(counts(1, 0, 0));
    });

    test('the last entry for a phone decides: added then destroyed is removed, destroyed then added is kept', async () => {
      const t = await seed();
      await upload(t.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }]);
      const res = await upload(t.as.owner, [
        { name: 'Again', phone: MEMBER_PHONE },
        { phone: MEMBER_PHONE, destroy: true },
        { phone: OUTSIDER_PHONE, destroy: true },
        { name: 'Outsider', phone: OUTSIDER_PHONE },
      ]);
      expect(res).toEqual(counts(1, 0, 1));
      expect(await bookOf(service, t.owner.id)).toEqual([{ name: 'Outsider', phone: OUTSIDER_PHONE }]);
    });

    test('a NUL character in the udid refuses the upload; in a contact name, that contact is rejected', async () => {
      const t = await seed();
      const contacts = [{ name: 'Member', phone: MEMBER_PHONE }];
      surface.expectFailure(
        await surface.uploadAddressBook(t.as.owner, { contacts, udid: 'a\u0000b' }),
        'BAD_USER_INPUT',
        'udid must not contain NUL characters',
        'udid',
      );
      expect(await upload(t.as.owner, [{ name: 'Mem\u0000ber', phone: MEMBER_PHONE }])).toEqual(
        counts(0, 0, 0, [{ index: 0, reasons: ['name must not contain NUL characters'] }]),
      );
      expect(await contactCount(service, t)).toBe(0);
    });

    test('10,001 contacts are refused and nothing is stored; 10,000 are accepted', async () => {
      const t = await seed();
      surface.expectFailure(
        await surface.uploadAddressBook(t.as.owner, { contacts: manyContacts(10_001) }),
        'BAD_USER_INPUT',
        'at most 10000 contacts per upload',
        'contacts',
      );
      expect(await contactCount(service, t)).toBe(0);
      expect(await upload(t.as.owner, manyContacts(10_000))).toEqual(counts(10_000, 0, 0));
      expect(await contactCount(service, t)).toBe(10_000);
    });

    test('a udid of 65 characters is refused and nothing is stored', async () => {
      const t = await seed();
      const res = await surface.uploadAddressBook(t.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }], udid: 'u'.repeat(65) });
      surface.expectFailure(res, 'BAD_USER_INPUT', 'udid must be at most 64 characters', 'udid');
      expect(await contactCount(service, t)).toBe(0);
    });

    test('device books and the global book are independent, also under force', async () => {
      const t = await seed();
      const bookA = [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Outsider', phone: OUTSIDER_PHONE },
      ];
      expect(await upload(t.as.owner, bookA, { udid: 'A' })).toEqual(counts(2, 0, 0));
      // The same phone in another book is a new contact there.
      expect(await upload(t.as.owner, [{ name: 'Member in B', phone: MEMBER_PHONE }], { udid: 'B' })).toEqual(counts(1, 0, 0));
      expect(await upload(t.as.owner, [{ name: 'Global', phone: STRANGER_PHONE }])).toEqual(counts(1, 0, 0));
      // Forcing B or the global book to empty touches neither A nor the other.
      expect(await upload(t.as.owner, [], { udid: 'B', force: true })).toEqual(counts(0, 0, 1));
      expect(await bookOf(service, t.owner.id, 'A')).toEqual(bookA);
      expect(await bookOf(service, t.owner.id, '')).toEqual([{ name: 'Global', phone: STRANGER_PHONE }]);
      expect(await upload(t.as.owner, [], { force: true })).toEqual(counts(0, 0, 1));
      expect(await bookOf(service, t.owner.id, 'A')).toEqual(bookA);
      expect(await contactCount(service, t)).toBe(2);
    });

    test('an empty udid in the upload means the global book', async () => {
      const t = await seed();
      await upload(t.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }], { udid: '' });
      expect(await bookOf(service, t.owner.id, '')).toEqual([{ name: 'Member', phone: MEMBER_PHONE }]);
      expect(await registered(t.as.owner)).toEqual([t.member.id]);
    });

    test('books of different users are independent', async () => {
      const t = await seed();
      await upload(t.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }]);
      expect(await upload(t.as.member, [{ name: 'Owner', phone: OWNER_PHONE }], { force: true })).toEqual(counts(1, 0, 0));
      expect(await bookOf(service, t.owner.id)).toEqual([{ name: 'Member', phone: MEMBER_PHONE }]);
      expect(await bookOf(service, t.member.id)).toEqual([{ name: 'Owner', phone: OWNER_PHONE }]);
    });

    test('an API key with On-Behalf-Of uploads into that user’s book', async () => {
      const t = await seed();
      expect(await upload(t.as.onBehalfOf(t.member.id), [{ name: 'Outsider', phone: OUTSIDER_PHONE }])).toEqual(counts(1, 0, 0));
      expect(await bookOf(service, t.member.id)).toEqual([{ name: 'Outsider', phone: OUTSIDER_PHONE }]);
      expect(await bookOf(service, t.owner.id)).toEqual([]);
      expect(await registered(t.as.member)).toEqual([t.outsider.id]);
    });
  });

  describe('reading the address book back', () => {
    test('gives the contacts of the book asked for, in upload order, and none for an empty book', async () => {
      const t = await seed();
      const book = async (headers: Headers, udid?: string): Promise<Contact[]> => value(await surface.addressBook(headers, udid));
      await upload(
        t.as.owner,
        [
          { name: 'Outsider', phone: OUTSIDER_PHONE },
          { name: 'Member', phone: MEMBER_PHONE },
        ],
        { udid: 'A' },
      );
      expect(await book(t.as.owner, 'A')).toEqual([
        { name: 'Outsider', phone: OUTSIDER_PHONE },
        { name: 'Member', phone: MEMBER_PHONE },
      ]);
      expect(await book(t.as.owner)).toEqual([]);
      expect(await book(t.as.owner, '')).toEqual([]);
      await upload(t.as.owner, [{ phone: OUTSIDER_PHONE, destroy: true }], { udid: 'A' });
      expect(await book(t.as.owner, 'A')).toEqual([{ name: 'Member', phone: MEMBER_PHONE }]);
      // Through an API key, the book of the user it acts for.
      expect(await book(t.as.onBehalfOf(t.owner.id), 'A')).toEqual([{ name: 'Member', phone: MEMBER_PHONE }]);
      expect(await book(t.as.onBehalfOf(t.member.id), 'A')).toEqual([]);
    });

    test('a udid of 65 characters is refused', async () => {
      const t = await seed();
      surface.expectFailure(await surface.addressBook(t.as.owner, 'u'.repeat(65)), 'BAD_USER_INPUT', 'udid must be at most 64 characters', 'udid');
    });
  });

  // Each operation needs a user: a user session token, or an API key acting for one.
  describe('credentials', () => {
    const OPERATIONS: [string, (headers: Headers) => Promise<Result<unknown>>][] = [
      ['reading the registered users', (headers) => surface.registeredUsers(headers)],
      ['uploading', (headers) => surface.uploadAddressBook(headers, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] })],
      ['reading the book', (headers) => surface.addressBook(headers)],
    ];
    test.each(
      OPERATIONS.flatMap(([operation, call]) => REFUSED.map(([what, headers, code, message]) => [operation, what, call, headers, code, message] as const)),
    )('%s with %s is refused and nothing is stored', async (_operation, _what, call, headers, code, message) => {
      const t = await seed();
      surface.expectFailure(await call(headers(t)), code, message);
      expect(await contactCount(service, t)).toBe(0);
    });
  });
});
