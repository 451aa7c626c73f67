// Phone numbers as address books hold them (issue 19): formatted and national
// numbers are taken, stored as given, and matched by the number they denote,
// through every surface (REST and GraphQL uploads, registered users full,
// compact and as a connection, the book read back), both ways round (the
// contact formatted, or the user's phone), in the application's region; and
// exact equality still matches whatever the keys say.
import parsePhoneNumberFromString from 'libphonenumber-js/min';
import { phoneKey } from '../../src/services/phones';
import { seedTenant, type Tenant } from '../support/seed';
import { type ContactInput, type Headers, SURFACES, surfaceOf, value } from './surfaces';
import { useService } from '../support/service';

const service = useService();

/** A tenant (seed.ts: owner, member, outsider with +1000000010x) with three more users registered with the phones given. */
async function tenantWith(phones: Record<string, string>, region?: string): Promise<Tenant & { ids: Record<string, number> }> {
  const t = await seedTenant(service.app.provisioning);
  if (region) await service.app.services.phoneKeys.setRegion(t.applicationId, region);
  const ids: Record<string, number> = {};
  for (const [login, phone] of Object.entries(phones)) {
    ids[login] = (await service.app.provisioning.users.create({ applicationId: t.applicationId, login, password: 'password123', phone })).id;
  }
  return { ...t, ids };
}

describe('the key a phone is matched by', () => {
  test.each([
    ['+44 20 7946 0958', null, '+442079460958'],
    ['+442079460958', null, '+442079460958'],
    ['+44 (0)20 7946 0958', null, '+442079460958'],
    ['020 7946 0958', 'GB', '+442079460958'],
    ['(555) 123-4567', 'US', '+15551234567'],
    ['+1 555-123-4567', null, '+15551234567'],
    ['555.123.4567', 'US', '+15551234567'],
    // Without a region a national number is its digits: it matches the same digits however written.
    ['(555) 123-4567', null, '5551234567'],
    ['5551234567', null, '5551234567'],
    // No such calling code: its digits, with the plus.
    ['+999 123 456 7890', null, '+9991234567890'],
  ])('%p in region %p is %p', (phone, region, key) => {
    expect(phoneKey(phone, region)).toBe(key);
  });

  test("the trimmed metadata gives the stock metadata's E.164 for 20,000 formatted and national numbers", () => {
    const numbers: [string, string | undefined][] = [];
    for (let i = 0; i < 4000; i++) {
      const d = String(1_000_000 + i * 7919).slice(-7);
      numbers.push([`+1 (${200 + (i % 800)}) ${d.slice(0, 3)}-${d.slice(3)}`, undefined]);
      numbers.push([`(${200 + (i % 800)}) ${d.slice(0, 3)}-${d.slice(3)}`, 'US']);
      numbers.push([`+44 20 ${d.slice(0, 3)} ${d}`, undefined]);
      numbers.push([`07${String(i).padStart(3, '0')} ${d.slice(0, 6)}`, 'GB']);
      numbers.push([`+49 ${150 + (i % 30)} ${d}${i % 10}`, undefined]);
    }
    for (const [phone, region] of numbers) {
      const stock = parsePhoneNumberFromString(phone, region ? { defaultCountry: region as 'US' } : {})?.number;
      if (stock !== undefined) expect([phone, phoneKey(phone, region ?? null)]).toEqual([phone, stock]);
    }
  });
});

describe.each(SURFACES)('%s', (name) => {
  const surface = surfaceOf(name, service);
  const upload = async (headers: Headers, contacts: ContactInput[], udid?: string) => value(await surface.uploadAddressBook(headers, { contacts, udid }));
  const registered = async (headers: Headers, udid?: string) => value(await surface.registeredUsers(headers, udid));
  const compact = async (headers: Headers, udid?: string) => value(await surface.registeredUsersCompact(headers, udid));

  test('formatted contacts are taken, stored and read back as given, and find the users registered with the same numbers', async () => {
    const t = await tenantWith({ london: '+442079460958', newyork: '+15551234567' });
    const book = [
      { name: 'London', phone: '+44 20 7946 0958' },
      { name: 'New York', phone: '+1 (555) 123-4567' },
      { name: 'Member', phone: '+1 000-000-0102' },
      { name: 'Nobody', phone: '+44 20 7946 0959' },
    ];
    expect(await upload(t.as.owner, book)).toMatchObject({ created: 4, rejected: [] });
    expect(value(await surface.addressBook(t.as.owner))).toEqual(book);
    // Each user's phone as stored, not as the book writes it.
    expect(await compact(t.as.owner)).toEqual(
      [
        { id: t.member.id, phone: '+10000000102' },
        { id: t.ids.london!, phone: '+442079460958' },
        { id: t.ids.newyork!, phone: '+15551234567' },
      ].sort((a, b) => a.id - b.id),
    );
    const full = await registered(t.as.owner);
    expect(full.map((u) => [u.id, u.phone])).toEqual((await compact(t.as.owner)).map((u) => [u.id, u.phone]));
  });

  test('users registered with formatted phones are found by books that write them plainly', async () => {
    const t = await tenantWith({ london: '+44 20 7946 0958', newyork: '+1 (555) 123-4567' });
    await upload(
      t.as.owner,
      [
        { name: 'London', phone: '+442079460958' },
        { name: 'New York', phone: '+15551234567' },
      ],
      'phone-1',
    );
    expect(await compact(t.as.owner, 'phone-1')).toEqual([
      { id: t.ids.london!, phone: '+44 20 7946 0958' },
      { id: t.ids.newyork!, phone: '+1 (555) 123-4567' },
    ]);
    // The global book holds none of them.
    expect(await compact(t.as.owner)).toEqual([]);
  });

  test("national numbers are read in the application's region; without one they match only the same digits", async () => {
    const t = await tenantWith({ london: '+44 20 7946 0958', local: '(555) 123-4567' }, 'GB');
    await upload(t.as.owner, [
      { name: 'London', phone: '020 7946 0958' },
      { name: 'Local, digits', phone: '555 123 4567' },
    ]);
    // 555 123 4567 read in GB is not the US number, but it is the local user's digits, read in GB too.
    expect((await compact(t.as.owner)).map((u) => u.id)).toEqual([t.ids.london!, t.ids.local!]);

    const none = await tenantWith({ london: '+44 20 7946 0958', local: '(555) 123-4567' });
    await upload(none.as.owner, [
      { name: 'London', phone: '020 7946 0958' },
      { name: 'Local, digits', phone: '555-123-4567' },
    ]);
    expect((await compact(none.as.owner)).map((u) => u.id)).toEqual([none.ids.local!]);
  });

  test('removing one way of writing a number keeps the match while the book holds another', async () => {
    const t = await tenantWith({ london: '+442079460958' });
    await upload(t.as.owner, [
      { name: 'London', phone: '+44 20 7946 0958' },
      { name: 'London again', phone: '+44 (0)20 7946 0958' },
    ]);
    expect((await compact(t.as.owner)).map((u) => u.id)).toEqual([t.ids.london!]);
    expect(await upload(t.as.owner, [{ phone: '+44 20 7946 0958', destroy: true }])).toMatchObject({ deleted: 1 });
    expect((await compact(t.as.owner)).map((u) => u.id)).toEqual([t.ids.london!]);
    expect(await upload(t.as.owner, [{ phone: '+44 (0)20 7946 0958', destroy: true }])).toMatchObject({ deleted: 1 });
    expect(await compact(t.as.owner)).toEqual([]);
  });
});

test('the GraphQL connection form pages the users formatted contacts match', async () => {
  const t = await tenantWith({ a: '+44 20 7946 0001', b: '+44 20 7946 0002', c: '+44 20 7946 0003' });
  await surfaceOf('REST', service).uploadAddressBook(t.as.owner, {
    contacts: [
      { name: 'A', phone: '+44 (20) 7946-0001' },
      { name: 'B', phone: '+44.20.7946.0002' },
      { name: 'C', phone: '+442079460003' },
    ],
  });
  const ids: number[] = [];
  let after: string | null = null;
  for (;;) {
    const res = await service.graphql(
      'query ($after: String) { registeredUsersConnection(first: 2, after: $after) { edges { cursor node { id phone } } pageInfo { hasNextPage endCursor } } }',
      { after },
      t.as.owner,
    );
    const connection = (
      res.body.data as { registeredUsersConnection: { edges: { node: { id: string | number } }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } }
    ).registeredUsersConnection;
    ids.push(...connection.edges.map((e) => Number(e.node.id)));
    if (!connection.pageInfo.hasNextPage) break;
    after = connection.pageInfo.endCursor;
  }
  expect(ids).toEqual([t.ids.a!, t.ids.b!, t.ids.c!]);
});

describe('stored phones', () => {
  test('phones written without a key (by hand) match as written, and phones:normalise gives them their keys', async () => {
    const t = await tenantWith({});
    const [london] = await service.db.pool
      .query<{ id: number }>(`INSERT INTO users (application_id, login, password_hash, phone) VALUES ($1, 'byhand', 'x', '+44 20 7946 0958') RETURNING id`, [
        t.applicationId,
      ])
      .then((r) => r.rows);
    await surfaceOf('REST', service).uploadAddressBook(t.as.owner, {
      contacts: [
        { name: 'London', phone: '+442079460958' },
        { name: 'Exact', phone: '+44 20 7946 0958' },
      ],
    });
    const ids = async () => value(await surfaceOf('REST', service).registeredUsersCompact(t.as.owner)).map((u) => u.id);
    // The exact contact matches it without a key.
    expect(await ids()).toEqual([london!.id]);
    await service.db.pool.query(`DELETE FROM contacts WHERE user_id = $1 AND phone = '+44 20 7946 0958'`, [t.owner.id]);
    expect(await ids()).toEqual([]);
    expect(await service.app.services.phoneKeys.normalise(t.applicationId)).toMatchObject({ usersUpdated: 1, contactsUpdated: 0 });
    expect(await ids()).toEqual([london!.id]);
    // A phone changed by hand drops its key: it matches as written again, not as the old number.
    await service.db.pool.query(`UPDATE users SET phone = '+44 20 7946 0999' WHERE id = $1`, [london!.id]);
    expect((await service.db.pool.query('SELECT phone_key FROM users WHERE id = $1', [london!.id])).rows).toEqual([{ phone_key: null }]);
    expect(await ids()).toEqual([]);
  });

  test("a change of region rekeys the application's phones and matches, and the same digits match in any region", async () => {
    const t = await tenantWith({ london: '+44 20 7946 0958', national: '020 7946 0958' });
    await surfaceOf('REST', service).uploadAddressBook(t.as.owner, { contacts: [{ name: 'London', phone: '02079460958' }] });
    const ids = async () => value(await surfaceOf('REST', service).registeredUsersCompact(t.as.owner)).map((u) => u.id);
    // No region: "02079460958" is the national user's digits only.
    expect(await ids()).toEqual([t.ids.national!]);
    expect(await service.app.services.phoneKeys.setRegion(t.applicationId, 'GB')).toMatchObject({ region: 'GB', usersUpdated: 1, contactsUpdated: 1 });
    expect(await ids()).toEqual([t.ids.london!, t.ids.national!]);
    // In the US the national number is another one, but the same digits still match.
    await service.app.services.phoneKeys.setRegion(t.applicationId, 'US');
    expect(await ids()).toEqual([t.ids.national!]);
    await service.app.services.phoneKeys.setRegion(t.applicationId, null);
    expect(await ids()).toEqual([t.ids.national!]);
  });

  test('an unknown region is refused, naming it', async () => {
    const t = await tenantWith({});
    await expect(service.app.services.phoneKeys.setRegion(t.applicationId, 'XX')).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    await expect(service.app.provisioning.applications.create('bad region', 'gb')).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});
