// Issue 31, item 2: address books had no size. An upload was capped (10,000
// contacts) but a book was not, nor the number of device books: 60 uploads
// built a 600,000-contact book in 18 s, and one read of it answered 25 MB and
// took the process from 194 to 380 MB. The same uploads tested ~30,000 phone
// numbers a second against the application's users. Now: at most
// ADDRESS_BOOK_MAX_CONTACTS contacts a book (default 10,000) and
// ADDRESS_BOOK_MAX_DEVICE_BOOKS device books a user (default 5 besides the
// global one), refused whole (422 in the path's shape, nothing stored); a
// read holds at most a full book; CONTACT_DISCOVERY_PER_DAY new phone numbers
// a user a day. Sent as real uploads: POST /address_book.json.
import { ADDRESS_BOOK_DEFAULTS } from '../../src/services/address-book';
import { recordFigures } from '../support/figures';
import { seedTenant, type Tenant } from '../support/seed';
import { type TestService, useService } from '../support/service';

jest.setTimeout(120_000);

const MAX = ADDRESS_BOOK_DEFAULTS.maxContacts;
// The defaults but the discovery budget, which its own service tests.
const service = useService({ addressBooks: { discoveryPerDay: 1_000_000 } });
const figures: Record<string, unknown> = {};
afterAll(() => recordFigures('address-books', figures));

/** `count` contacts with distinct phones from `from` on (+1556…: no seeded user has them). */
const contacts = (count: number, from = 0, prefix = '+1556') =>
  Array.from({ length: count }, (_, i) => ({ name: `n${from + i}`, phone: `${prefix}${String(from + i).padStart(7, '0')}` }));

const upload = (at: TestService, t: Tenant, body: Record<string, unknown>) => at.rest('POST', '/address_book.json', { headers: t.as.owner, body });

const stored = async (at: TestService, t: Tenant, udid = ''): Promise<number> => {
  const { rows } = await at.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM contacts WHERE user_id = $1 AND udid = $2', [t.owner.id, udid]);
  return rows[0]!.n;
};

describe('contacts per book', () => {
  test(`a book takes ${MAX} contacts; an upload that would pass them is refused whole, 422 in the list shape, nothing stored`, async () => {
    const t = await seedTenant(service.app.provisioning);
    expect((await upload(service, t, { contacts: contacts(MAX) })).body).toMatchObject({ created: MAX });
    const over = await upload(service, t, { contacts: [...contacts(5, MAX), { name: 'renamed', phone: contacts(1)[0]!.phone }] });
    expect(over.status).toBe(422);
    expect(over.body).toEqual({ errors: [`an address book holds at most ${MAX} contacts: this upload would make it ${MAX + 5}`] });
    expect(await stored(service, t)).toBe(MAX);
    // The rename in the refused upload did not happen either.
    const { rows } = await service.db.pool.query('SELECT name FROM contacts WHERE user_id = $1 AND phone = $2', [t.owner.id, contacts(1)[0]!.phone]);
    expect(rows[0].name).toBe('n0');
    // Renames and destroys of a full book still go through.
    expect((await upload(service, t, { contacts: [{ name: 'renamed', phone: contacts(1)[0]!.phone }] })).body).toMatchObject({ updated: 1 });
    expect((await upload(service, t, { contacts: [{ phone: contacts(1)[0]!.phone, destroy: 1 }, ...contacts(1, MAX)] })).body).toMatchObject({
      created: 1,
      deleted: 1,
    });
  });

  test('a forced replace of a full book by another full book fits the statement timeout', async () => {
    const t = await seedTenant(service.app.provisioning);
    await upload(service, t, { contacts: contacts(MAX) });
    const started = performance.now();
    const replaced = await upload(service, t, { contacts: contacts(MAX, MAX), force: 1 });
    figures.forcedReplaceOfFullBookMs = Math.round(performance.now() - started);
    expect(replaced.body).toMatchObject({ created: MAX, deleted: MAX });
    expect(figures.forcedReplaceOfFullBookMs).toBeLessThan(5_000);
    expect(await stored(service, t)).toBe(MAX);
  });

  test('a book stored over the cap before it existed is read up to the cap, never whole', async () => {
    const t = await seedTenant(service.app.provisioning);
    await service.db.pool.query(
      `INSERT INTO contacts (user_id, udid, phone, name, phone_key)
       SELECT $1, 'old', '+1557' || lpad(i::text, 7, '0'), 'o' || i, '+1557' || lpad(i::text, 7, '0') FROM generate_series(1, $2::int) i`,
      [t.owner.id, MAX + 2_000],
    );
    const read = await service.rest('GET', '/address_book.json?udid=old', { headers: t.as.owner });
    expect(read.status).toBe(200);
    expect(read.body).toHaveLength(MAX);
    figures.fullBookReadBytes = read.text.length;
  });
});

describe('device books per user', () => {
  test(`${ADDRESS_BOOK_DEFAULTS.maxDeviceBooks} device books besides the global one; a new one past them is refused, nothing stored; the others still take uploads`, async () => {
    const t = await seedTenant(service.app.provisioning);
    for (let i = 0; i < ADDRESS_BOOK_DEFAULTS.maxDeviceBooks; i++) {
      expect((await upload(service, t, { udid: `device-${i}`, contacts: contacts(2, 10 * i) })).status).toBe(200);
    }
    const over = await upload(service, t, { udid: 'one-more', contacts: contacts(2, 900) });
    expect(over.status).toBe(422);
    expect(over.body).toEqual({ errors: [`at most ${ADDRESS_BOOK_DEFAULTS.maxDeviceBooks} device address books (udids) per user besides the global one`] });
    expect(await stored(service, t, 'one-more')).toBe(0);
    expect((await upload(service, t, { udid: 'device-0', contacts: contacts(1, 500) })).status).toBe(200);
    expect((await upload(service, t, { contacts: contacts(1, 600) })).status).toBe(200);
    // An emptied device book frees its place.
    expect((await upload(service, t, { udid: 'device-1', contacts: [], force: 1 })).status).toBe(200);
    expect((await upload(service, t, { udid: 'one-more', contacts: contacts(2, 900) })).status).toBe(200);
  });

  test('new device books racing each other never pass the cap', async () => {
    const t = await seedTenant(service.app.provisioning);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => upload(service, t, { udid: `race-${i}`, contacts: contacts(1, i) })));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(ADDRESS_BOOK_DEFAULTS.maxDeviceBooks);
    expect(answers.filter((a) => a.status === 422)).toHaveLength(12 - ADDRESS_BOOK_DEFAULTS.maxDeviceBooks);
    const { rows } = await service.db.pool.query<{ n: number }>("SELECT count(DISTINCT udid)::int AS n FROM contacts WHERE user_id = $1 AND udid <> ''", [
      t.owner.id,
    ]);
    expect(rows[0]!.n).toBe(ADDRESS_BOOK_DEFAULTS.maxDeviceBooks);
  });
});

describe('contact discovery by numbers, not requests', () => {
  const PER_DAY = 50;
  let budgeted: TestService;
  beforeAll(async () => {
    budgeted = await service.start({ addressBooks: { discoveryPerDay: PER_DAY } });
  });

  test(`a user adds ${PER_DAY} phone numbers new to their books a day; an upload past them is 429 with Retry-After, nothing stored`, async () => {
    const t = await seedTenant(budgeted.app.provisioning);
    expect((await upload(budgeted, t, { contacts: contacts(40) })).body).toMatchObject({ created: 40 });
    // Numbers already in a book (here, in another book of the user) are not new.
    expect((await upload(budgeted, t, { udid: 'phone', contacts: contacts(40) })).body).toMatchObject({ created: 40 });
    const over = await upload(budgeted, t, { contacts: contacts(11, 40) });
    expect(over.status).toBe(429);
    expect(over.body.errors[0]).toMatch(
      new RegExp(`^Too many requests: at most ${PER_DAY} phone numbers new to your address books a day \\(this upload adds 11\\); retry in \\d+ s$`),
    );
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(3_600);
    expect(await stored(budgeted, t)).toBe(40);
    expect((await upload(budgeted, t, { contacts: contacts(10, 40) })).body).toMatchObject({ created: 10 });
    // Another user has a budget of their own.
    const other = await seedTenant(budgeted.app.provisioning);
    expect((await upload(budgeted, other, { contacts: contacts(PER_DAY) })).status).toBe(200);
  });

  test('the same budget over GraphQL', async () => {
    const t = await seedTenant(budgeted.app.provisioning);
    const document = 'mutation Up($contacts: [ContactInput!]!) { uploadAddressBook(contacts: $contacts) { created } }';
    const over = await budgeted.graphql(document, { contacts: contacts(PER_DAY + 1, 0, '+1558') }, t.as.owner);
    expect(over.body.errors?.[0]?.extensions?.code).toBe('TOO_MANY_REQUESTS');
    expect(await stored(budgeted, t)).toBe(0);
  });
});
