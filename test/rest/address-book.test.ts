// GET /address_book/registered_users.json and POST /address_book.json: exact
// phone matching within the caller's application and book (global or per
// device), the compact form, upload counts, forced replacement, and the
// validation and credential errors of both paths.
import { bookOf, type Contact, contactCount, MEMBER_PHONE, OUTSIDER_PHONE, OWNER_PHONE, STRANGER_PHONE } from '../support/address-book';
import { USER_FIELDS } from '../support/records';
import { startService, type HttpResult, type TestService } from '../support/service';
import { seedTenant } from '../support/seed';

const PHONE_RULE = (index: number) => `contacts[${index}].phone must be 10 to 15 digits with an optional leading "+"`;

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => {
  await service.close();
});

const upload = (headers: Record<string, string>, body: unknown) =>
  service.call('POST', '/address_book.json', { headers, body });

const registered = (headers: Record<string, string>, query = '') =>
  service.call('GET', `/address_book/registered_users.json${query}`, { headers });

/** Ids of the users in a registered-users response, in response order. */
const ids = (res: HttpResult): number[] => res.body.items.map((item: { user: { id: number } }) => item.user.id);

const byPhone = (contacts: Contact[]) => [...contacts].sort((a, b) => a.phone.localeCompare(b.phone));

describe('registered users of the address book', () => {
  test('returns, as full records, the users whose phone equals a contact phone in the global book', async () => {
    const t = await seedTenant(service.app.services);
    const up = await upload(t.as.owner, {
      contacts: [
        { name: 'Outsider', phone: OUTSIDER_PHONE },
        { name: 'Nobody', phone: STRANGER_PHONE },
        { name: 'Member', phone: MEMBER_PHONE },
      ],
    });
    expect(up.status).toBe(200);

    const res = await registered(t.as.owner);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['items']);
    expect(ids(res)).toEqual([t.member.id, t.outsider.id]);
    for (const item of res.body.items) {
      expect(Object.keys(item)).toEqual(['user']);
      expect(Object.keys(item.user).sort()).toEqual(USER_FIELDS);
    }
    // The same record as the external-id lookup returns.
    const lookup = await service.call('GET', '/users/external/102.json', { headers: t.as.apiKey });
    expect(res.body.items[0].user).toEqual(lookup.body.user);
    expect(res.body.items[1].user).toMatchObject({ login: 'outsider', phone: OUTSIDER_PHONE, external_user_id: 103 });
  });

  test('an empty book, or a book whose phones match nobody, gives an empty list', async () => {
    const t = await seedTenant(service.app.services);
    const empty = await registered(t.as.owner);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ items: [] });

    await upload(t.as.owner, { contacts: [{ name: 'Nobody', phone: STRANGER_PHONE }] });
    expect((await registered(t.as.owner)).body).toEqual({ items: [] });
  });

  test('only exactly equal phones match, not ones that differ by a plus sign or a digit', async () => {
    const t = await seedTenant(service.app.services);
    const up = await upload(t.as.owner, {
      contacts: [
        { name: 'no plus', phone: MEMBER_PHONE.slice(1) },
        { name: 'one digit more', phone: `${MEMBER_PHONE}0` },
        { name: 'one digit less', phone: MEMBER_PHONE.slice(0, -1) },
        { name: 'other prefix', phone: `+2${MEMBER_PHONE.slice(2)}` },
      ],
    });
    expect(up.body).toEqual({ created: 4, updated: 0, deleted: 0 });
    const res = await registered(t.as.owner);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ items: [] });
  });

  test('users of another application with the same phone are never returned', async () => {
    const a = await seedTenant(service.app.services);
    const b = await seedTenant(service.app.services);
    // Both tenants have a member with the phone MEMBER_PHONE.
    expect(await service.db.prisma.user.count({ where: { phone: MEMBER_PHONE, applicationId: { in: [a.applicationId, b.applicationId] } } })).toBe(2);
    await upload(a.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    await upload(b.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });

    expect(ids(await registered(a.as.owner))).toEqual([a.member.id]);
    expect(ids(await registered(b.as.owner))).toEqual([b.member.id]);
  });

  test('items are ordered by user id and each user appears once', async () => {
    const t = await seedTenant(service.app.services);
    // A second user of the application with the member's phone.
    const twin = await service.app.services.users.create({
      applicationId: t.applicationId,
      login: 'twin',
      password: 'password123',
      phone: MEMBER_PHONE,
      externalUserId: 104,
    });
    await upload(t.as.owner, {
      contacts: [
        { name: 'Outsider', phone: OUTSIDER_PHONE },
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Member again', phone: MEMBER_PHONE },
      ],
    });
    await upload(t.as.owner, { contacts: [{ name: 'Myself', phone: OWNER_PHONE }] });

    const res = await registered(t.as.owner);
    expect(ids(res)).toEqual([t.owner.id, t.member.id, t.outsider.id, twin.id].sort((x, y) => x - y));
    expect(new Set(ids(res)).size).toBe(4);
  });

  test('a device book is matched only for its own udid, and the global book only without one', async () => {
    const t = await seedTenant(service.app.services);
    await upload(t.as.owner, { udid: 'A', contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    await upload(t.as.owner, { contacts: [{ name: 'Outsider', phone: OUTSIDER_PHONE }] });

    expect(ids(await registered(t.as.owner, '?udid=A'))).toEqual([t.member.id]);
    expect(ids(await registered(t.as.owner))).toEqual([t.outsider.id]);
    expect(ids(await registered(t.as.owner, '?udid='))).toEqual([t.outsider.id]);
    expect(ids(await registered(t.as.owner, '?udid=B'))).toEqual([]);
    // udid is case-sensitive: "a" is another device.
    expect(ids(await registered(t.as.owner, '?udid=a'))).toEqual([]);
  });

  test('compact=1 gives only id and phone for each user', async () => {
    const t = await seedTenant(service.app.services);
    await upload(t.as.owner, {
      contacts: [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Outsider', phone: OUTSIDER_PHONE },
      ],
    });
    const res = await registered(t.as.owner, '?compact=1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      items: [
        { user: { id: t.member.id, phone: MEMBER_PHONE } },
        { user: { id: t.outsider.id, phone: OUTSIDER_PHONE } },
      ],
    });
  });

  test('compact=0 and no compact both give the full records', async () => {
    const t = await seedTenant(service.app.services);
    await upload(t.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    // The API key does not touch the member's last_request_at between the two reads.
    const headers = t.as.onBehalfOf(t.owner.id);
    const full = await registered(headers, '?compact=0');
    const absent = await registered(headers);
    expect(full.status).toBe(200);
    expect(Object.keys(full.body.items[0].user).sort()).toEqual(USER_FIELDS);
    expect(absent.body).toEqual(full.body);
  });

  test.each(['2', 'x', 'true', '-1'])('compact=%s is rejected with 422 "compact must be 0 or 1"', async (value) => {
    const t = await seedTenant(service.app.services);
    const res = await registered(t.as.owner, `?compact=${value}`);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: ['compact must be 0 or 1'] });
  });

  test('force=0 and force=1 are accepted on the read and change nothing', async () => {
    const t = await seedTenant(service.app.services);
    await upload(t.as.owner, {
      contacts: [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Nobody', phone: STRANGER_PHONE },
      ],
    });
    const plain = await registered(t.as.owner, '?compact=1');
    const force0 = await registered(t.as.owner, '?compact=1&force=0');
    const force1 = await registered(t.as.owner, '?compact=1&force=1');
    expect(force0.status).toBe(200);
    expect(force1.status).toBe(200);
    expect(force0.body).toEqual(plain.body);
    expect(force1.body).toEqual(plain.body);
    expect(await bookOf(service, t.owner.id)).toHaveLength(2);
  });

  test.each(['2', 'yes'])('force=%s on the read is rejected with 422', async (value) => {
    const t = await seedTenant(service.app.services);
    const res = await registered(t.as.owner, `?force=${value}`);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: ['force must be 0 or 1'] });
  });

  test('a udid of 64 characters is accepted and one of 65 is rejected with 422', async () => {
    const t = await seedTenant(service.app.services);
    const udid64 = 'd'.repeat(64);
    expect((await upload(t.as.owner, { udid: udid64, contacts: [{ name: 'Member', phone: MEMBER_PHONE }] })).status).toBe(200);
    const ok = await registered(t.as.owner, `?udid=${udid64}`);
    expect(ok.status).toBe(200);
    expect(ids(ok)).toEqual([t.member.id]);

    const tooLong = await registered(t.as.owner, `?udid=${udid64}e`);
    expect(tooLong.status).toBe(422);
    expect(tooLong.body).toEqual({ errors: ['udid must be at most 64 characters'] });
  });

  test('an application session token is forbidden with 403 "Forbidden. Need user."', async () => {
    const t = await seedTenant(service.app.services);
    const res = await registered(t.as.app);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ errors: ['Forbidden. Need user.'] });
  });

  test('an API key without On-Behalf-Of is forbidden with the same 403', async () => {
    const t = await seedTenant(service.app.services);
    const res = await registered(t.as.apiKey);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ errors: ['Forbidden. Need user.'] });
  });

  test('an API key with On-Behalf-Of reads that user’s book', async () => {
    const t = await seedTenant(service.app.services);
    await upload(t.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    await upload(t.as.member, { contacts: [{ name: 'Outsider', phone: OUTSIDER_PHONE }] });

    const asOwner = await registered(t.as.onBehalfOf(t.owner.id));
    expect(asOwner.status).toBe(200);
    expect(ids(asOwner)).toEqual([t.member.id]);
    expect(ids(await registered(t.as.onBehalfOf(t.member.id)))).toEqual([t.outsider.id]);
    expect(ids(await registered(t.as.onBehalfOf(t.outsider.id)))).toEqual([]);
  });

  test('a request without credentials is 401 with an errors list', async () => {
    await seedTenant(service.app.services);
    const res = await registered({});
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ errors: ['Token is required: send SVC-Token or Authorization: ApiKey <key>'] });
  });
});

describe('uploading an address book', () => {
  test('the first upload creates every contact and stores them in the global book', async () => {
    const t = await seedTenant(service.app.services);
    const contacts = [
      { name: 'Member', phone: MEMBER_PHONE },
      { name: 'Outsider', phone: OUTSIDER_PHONE },
      { name: 'Nobody', phone: STRANGER_PHONE },
    ];
    const res = await upload(t.as.owner, { contacts });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ created: 3, updated: 0, deleted: 0 });
    expect(await bookOf(service, t.owner.id)).toEqual(byPhone(contacts));
    expect(await contactCount(service, t)).toBe(3);
  });

  test('re-uploading a phone with a new name updates it, and with the same name changes nothing', async () => {
    const t = await seedTenant(service.app.services);
    await upload(t.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }, { name: 'Outsider', phone: OUTSIDER_PHONE }] });

    const renamed = await upload(t.as.owner, { contacts: [{ name: 'Member Renamed', phone: MEMBER_PHONE }] });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ created: 0, updated: 1, deleted: 0 });
    expect(await bookOf(service, t.owner.id)).toEqual([
      { name: 'Member Renamed', phone: MEMBER_PHONE },
      { name: 'Outsider', phone: OUTSIDER_PHONE },
    ]);

    const same = await upload(t.as.owner, { contacts: [{ name: 'Member Renamed', phone: MEMBER_PHONE }, { name: 'Outsider', phone: OUTSIDER_PHONE }] });
    expect(same.body).toEqual({ created: 0, updated: 0, deleted: 0 });

    const mixed = await upload(t.as.owner, {
      contacts: [
        { name: 'Member Renamed', phone: MEMBER_PHONE },
        { name: 'Outsider 2', phone: OUTSIDER_PHONE },
        { name: 'Nobody', phone: STRANGER_PHONE },
      ],
    });
    expect(mixed.body).toEqual({ created: 1, updated: 1, deleted: 0 });
    expect(await contactCount(service, t)).toBe(3);
  });

  test('force=1 with a smaller list deletes the missing contacts and leaves exactly the new list', async () => {
    const t = await seedTenant(service.app.services);
    await upload(t.as.owner, {
      contacts: [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Outsider', phone: OUTSIDER_PHONE },
        { name: 'Nobody', phone: STRANGER_PHONE },
      ],
    });
    const next = [
      { name: 'Member (new name)', phone: MEMBER_PHONE },
      { name: 'Owner', phone: OWNER_PHONE },
    ];
    const res = await upload(t.as.owner, { force: 1, contacts: next });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ created: 1, updated: 1, deleted: 2 });
    expect(await bookOf(service, t.owner.id)).toEqual(byPhone(next));
    expect(ids(await registered(t.as.owner))).toEqual([t.owner.id, t.member.id]);

    const emptied = await upload(t.as.owner, { force: 1, contacts: [] });
    expect(emptied.body).toEqual({ created: 0, updated: 0, deleted: 2 });
    expect(await bookOf(service, t.owner.id)).toEqual([]);
  });

  test('without force, or with force=0, an upload never deletes contacts', async () => {
    const t = await seedTenant(service.app.services);
    const all = [
      { name: 'Member', phone: MEMBER_PHONE },
      { name: 'Outsider', phone: OUTSIDER_PHONE },
      { name: 'Nobody', phone: STRANGER_PHONE },
    ];
    await upload(t.as.owner, { contacts: all });

    const plain = await upload(t.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    expect(plain.body).toEqual({ created: 0, updated: 0, deleted: 0 });
    const force0 = await upload(t.as.owner, { force: 0, contacts: [] });
    expect(force0.status).toBe(200);
    expect(force0.body).toEqual({ created: 0, updated: 0, deleted: 0 });
    expect(await bookOf(service, t.owner.id)).toEqual(byPhone(all));
  });

  test('a phone listed twice in one upload counts once and keeps its last name', async () => {
    const t = await seedTenant(service.app.services);
    const res = await upload(t.as.owner, {
      contacts: [
        { name: 'First', phone: MEMBER_PHONE },
        { name: 'Second', phone: MEMBER_PHONE },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ created: 1, updated: 0, deleted: 0 });
    expect(await bookOf(service, t.owner.id)).toEqual([{ name: 'Second', phone: MEMBER_PHONE }]);
  });

  test.each(['123', 'abc', '+1234567890123456', '0049 151 1234567', ''])(
    'an invalid phone %p is rejected with 422 and nothing of the upload is stored',
    async (phone) => {
      const t = await seedTenant(service.app.services);
      const res = await upload(t.as.owner, {
        contacts: [
          { name: 'Member', phone: MEMBER_PHONE },
          { name: 'Broken', phone },
        ],
      });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ errors: [PHONE_RULE(1)] });
      expect(await contactCount(service, t)).toBe(0);
    },
  );

  test('a contact name of 255 characters is accepted and one of 256 is rejected with 422', async () => {
    const t = await seedTenant(service.app.services);
    const tooLong = await upload(t.as.owner, {
      contacts: [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'n'.repeat(256), phone: OUTSIDER_PHONE },
      ],
    });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body).toEqual({ errors: ['names are at most 255 characters'] });
    expect(await contactCount(service, t)).toBe(0);

    const longest = await upload(t.as.owner, { contacts: [{ name: 'n'.repeat(255), phone: OUTSIDER_PHONE }] });
    expect(longest.body).toEqual({ created: 1, updated: 0, deleted: 0 });
  });

  test('an invalid phone in a forced upload deletes nothing either', async () => {
    const t = await seedTenant(service.app.services);
    await upload(t.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }, { name: 'Outsider', phone: OUTSIDER_PHONE }] });
    const res = await upload(t.as.owner, { force: 1, contacts: [{ name: 'Broken', phone: 'abc' }] });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: [PHONE_RULE(0)] });
    expect(await contactCount(service, t)).toBe(2);
  });

  // graphql-js reports a variable of the wrong type as a GraphQLError wrapping
  // another GraphQLError; the shim must answer 422, not 500.
  test('a contacts value that is not a list is rejected with 422', async () => {
    const t = await seedTenant(service.app.services);
    for (const contacts of ['x', 42, true]) {
      const res = await service.rest('POST', '/address_book.json', { headers: t.as.owner, body: { contacts } });
      expect([contacts, res.status]).toEqual([contacts, 422]);
      expect(res.body.errors).toEqual([expect.any(String)]);
    }
    expect(await contactCount(service, t)).toBe(0);
  });

  test('a body without contacts is rejected with 422', async () => {
    const t = await seedTenant(service.app.services);
    for (const options of [{ body: {} }, { body: { udid: 'A' } }, {}]) {
      const res = await service.rest('POST', '/address_book.json', { headers: t.as.owner, ...options });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([expect.any(String)]);
    }
    expect(await contactCount(service, t)).toBe(0);
  });

  test('a contact without a phone is rejected with 422 and nothing is stored', async () => {
    const t = await seedTenant(service.app.services);
    const res = await service.rest('POST', '/address_book.json', {
      headers: t.as.owner,
      body: { contacts: [{ name: 'Member', phone: MEMBER_PHONE }, { name: 'No phone' }] },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.any(String)]);
    expect(await contactCount(service, t)).toBe(0);
  });

  // GraphQL input coercion would turn a single object into a one-element list.
  test('a single contact object instead of a list is rejected with 422', async () => {
    const t = await seedTenant(service.app.services);
    const res = await service.rest('POST', '/address_book.json', {
      headers: t.as.owner,
      body: { contacts: { name: 'Member', phone: MEMBER_PHONE } },
    });
    expect(res.status).toBe(422);
    expect(await contactCount(service, t)).toBe(0);
  });

  // PostgreSQL text cannot hold NUL ("invalid byte sequence for encoding UTF8:
  // 0x00"): it must be refused before it reaches the database.
  test('a NUL character in the udid of the read is rejected with 422', async () => {
    const t = await seedTenant(service.app.services);
    const res = await service.rest('GET', '/address_book/registered_users.json?udid=a%00b', { headers: t.as.owner });
    expect(res.status).toBe(422);
  });

  test('a NUL character in the udid or a contact name of an upload is rejected with 422', async () => {
    const t = await seedTenant(service.app.services);
    for (const body of [
      { udid: 'a\u0000b', contacts: [{ name: 'Member', phone: MEMBER_PHONE }] },
      { contacts: [{ name: 'Mem\u0000ber', phone: MEMBER_PHONE }] },
    ]) {
      const res = await service.rest('POST', '/address_book.json', { headers: t.as.owner, body });
      expect(res.status).toBe(422);
    }
    expect(await contactCount(service, t)).toBe(0);
  });

  test('a body that is not a JSON object is rejected with 400', async () => {
    const t = await seedTenant(service.app.services);
    const res = await upload(t.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }]);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.stringMatching(/^Malformed request body/)]);
    expect(await contactCount(service, t)).toBe(0);
  });

  test('malformed JSON is rejected with 400 "Malformed request body: invalid JSON"', async () => {
    const t = await seedTenant(service.app.services);
    const res = await service.call('POST', '/address_book.json', {
      headers: { ...t.as.owner, 'content-type': 'application/json' },
      raw: `{"contacts": [{"name": "Member", "phone": "${MEMBER_PHONE}"}`,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: ['Malformed request body: invalid JSON'] });
    expect(await contactCount(service, t)).toBe(0);
  });

  test('10,001 contacts are rejected with 422 and 10,000 are accepted', async () => {
    const t = await seedTenant(service.app.services);
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `c${i}`, phone: `+1555${String(i).padStart(7, '0')}` }));
    const tooMany = await upload(t.as.owner, { contacts: many(10_001) });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body).toEqual({ errors: ['at most 10000 contacts per upload'] });
    expect(await contactCount(service, t)).toBe(0);

    const most = await upload(t.as.owner, { contacts: many(10_000) });
    expect(most.status).toBe(200);
    expect(most.body).toEqual({ created: 10_000, updated: 0, deleted: 0 });
    expect(await contactCount(service, t)).toBe(10_000);
  });

  test('device books and the global book are independent, also under force', async () => {
    const t = await seedTenant(service.app.services);
    const bookA = [
      { name: 'Member', phone: MEMBER_PHONE },
      { name: 'Outsider', phone: OUTSIDER_PHONE },
    ];
    expect((await upload(t.as.owner, { udid: 'A', contacts: bookA })).body).toEqual({ created: 2, updated: 0, deleted: 0 });
    // The same phone in another book is a new contact there.
    expect((await upload(t.as.owner, { udid: 'B', contacts: [{ name: 'Member in B', phone: MEMBER_PHONE }] })).body).toEqual({
      created: 1,
      updated: 0,
      deleted: 0,
    });
    expect((await upload(t.as.owner, { contacts: [{ name: 'Global', phone: STRANGER_PHONE }] })).body).toEqual({
      created: 1,
      updated: 0,
      deleted: 0,
    });

    // Forcing B or the global book to empty touches neither A nor the other.
    expect((await upload(t.as.owner, { udid: 'B', force: 1, contacts: [] })).body).toEqual({ created: 0, updated: 0, deleted: 1 });
    expect(await bookOf(service, t.owner.id, 'A')).toEqual(bookA);
    expect(await bookOf(service, t.owner.id, '')).toEqual([{ name: 'Global', phone: STRANGER_PHONE }]);
    expect((await upload(t.as.owner, { force: 1, contacts: [] })).body).toEqual({ created: 0, updated: 0, deleted: 1 });
    expect(await bookOf(service, t.owner.id, 'A')).toEqual(bookA);
    expect(await contactCount(service, t)).toBe(2);
  });

  test('an empty udid in the upload means the global book', async () => {
    const t = await seedTenant(service.app.services);
    await upload(t.as.owner, { udid: '', contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    expect(await bookOf(service, t.owner.id, '')).toEqual([{ name: 'Member', phone: MEMBER_PHONE }]);
    expect(ids(await registered(t.as.owner))).toEqual([t.member.id]);
  });

  test('books of different users are independent', async () => {
    const t = await seedTenant(service.app.services);
    await upload(t.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    const res = await upload(t.as.member, { force: 1, contacts: [{ name: 'Owner', phone: OWNER_PHONE }] });
    expect(res.body).toEqual({ created: 1, updated: 0, deleted: 0 });
    expect(await bookOf(service, t.owner.id)).toEqual([{ name: 'Member', phone: MEMBER_PHONE }]);
    expect(await bookOf(service, t.member.id)).toEqual([{ name: 'Owner', phone: OWNER_PHONE }]);
  });

  test('a udid of 65 characters is rejected with 422 and nothing is stored', async () => {
    const t = await seedTenant(service.app.services);
    const res = await upload(t.as.owner, { udid: 'u'.repeat(65), contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: ['udid must be at most 64 characters'] });
    expect(await contactCount(service, t)).toBe(0);
  });

  test.each([2, 'yes', true])('force %p in the body is rejected with 422 and nothing changes', async (force) => {
    const t = await seedTenant(service.app.services);
    await upload(t.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    const res = await upload(t.as.owner, { force, contacts: [] });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ errors: ['force must be 0 or 1'] });
    expect(await contactCount(service, t)).toBe(1);
  });

  test('an application token or an API key without On-Behalf-Of may not upload', async () => {
    const t = await seedTenant(service.app.services);
    for (const headers of [t.as.app, t.as.apiKey]) {
      const res = await upload(headers, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ errors: ['Forbidden. Need user.'] });
    }
    const none = await upload({}, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ errors: ['Token is required: send SVC-Token or Authorization: ApiKey <key>'] });
    expect(await contactCount(service, t)).toBe(0);
  });

  test('an API key with On-Behalf-Of uploads into that user’s book', async () => {
    const t = await seedTenant(service.app.services);
    const res = await upload(t.as.onBehalfOf(t.member.id), { contacts: [{ name: 'Outsider', phone: OUTSIDER_PHONE }] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ created: 1, updated: 0, deleted: 0 });
    expect(await bookOf(service, t.member.id)).toEqual([{ name: 'Outsider', phone: OUTSIDER_PHONE }]);
    expect(await bookOf(service, t.owner.id)).toEqual([]);
    expect(ids(await registered(t.as.member))).toEqual([t.outsider.id]);
  });
});
