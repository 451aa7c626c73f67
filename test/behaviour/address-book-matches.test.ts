// The maintained matches (address_book_matches, kept by triggers) against
// their definition: after random sequences of uploads (plain, forced, per
// udid, with destroy), user creations (the service's bulk import and Prisma's
// own create/createMany, as seeds and tests write users), phone changes and
// user removals, each book's registered users, whole and paged, are exactly
// the users of the owner's application whose phone equals a contact phone of
// that book, or denotes the same number (equal keys) — computed here from the
// contacts and users tables, not from the matches, with every stored key
// checked against the key of its phone. Phones come from a small pool, written
// plainly, formatted and as national numbers, so users share numbers and books
// share contacts; two applications use the same phones, one with a region (GB)
// and one without, so a match across applications, or a national number read
// without a region, would show. Runs on whichever database the run uses
// (embedded, or TEST_DATABASE_URL).
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import type { Database } from '../../src/db';
import type { Provisioning } from '../../src/provisioning';
import { prismaOf } from '../../src/provisioning/client';
import type { Services } from '../../src/services';
import type { ContactInput } from '../../src/services/address-book';
import type { Caller } from '../../src/services/caller';
import { phoneKey } from '../../src/services/phones';
import { hashPassword } from '../../src/services/secrets';
import { servicesOver } from '../support/seed';
import { openTestDatabase } from '../support/service';

let db: Database;
let services: Services;
let provisioning: Provisioning;
let passwordHash: string;
beforeAll(async () => {
  db = await openTestDatabase();
  ({ services, provisioning } = servicesOver(db));
  passwordHash = hashPassword('password123');
});
afterAll(async () => {
  await services?.close();
  await db?.close();
});

const PHONES = [
  '+442079460001',
  '+442079460002',
  '+10000000003',
  '+10000000004',
  '+10000000005',
  // The same numbers written otherwise: formatted, and national (the same number only in a GB application).
  '+44 20 7946 0001',
  '020 7946 0002',
  '+1 000-000-0003',
  '(020) 7946-0001',
];
/** The applications' regions: the first reads national numbers as GB's, the second has none. */
const REGIONS = ['GB', null] as const;
const UDIDS = ['', 'device-a'];

const phone = fc.constantFrom(...PHONES);
/** Which user or application an operation picks: an index taken modulo the current count. */
const pick = fc.nat({ max: 50 });

type Op =
  | { kind: 'upload'; owner: number; udid: string; force: boolean; contacts: ContactInput[] }
  | { kind: 'createUsers'; app: number; phones: (string | null)[]; via: 'service' | 'prisma' }
  | { kind: 'changePhone'; user: number; phone: string | null; via: 'update' | 'updateMany' }
  | { kind: 'removeUser'; user: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('upload' as const),
      owner: pick,
      udid: fc.constantFrom(...UDIDS),
      force: fc.boolean(),
      contacts: fc.array(fc.record({ name: fc.constantFrom('A', 'B'), phone, destroy: fc.boolean().map((d) => (d ? true : null)) }), { maxLength: 6 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('createUsers' as const),
      app: fc.nat({ max: 1 }),
      phones: fc.array(fc.option(phone, { nil: null }), { minLength: 1, maxLength: 3 }),
      via: fc.constantFrom('service' as const, 'prisma' as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('changePhone' as const),
      user: pick,
      phone: fc.option(phone, { nil: null }),
      via: fc.constantFrom('update' as const, 'updateMany' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('removeUser' as const), user: pick }) },
);

let sequence = 0;

interface World {
  apps: number[];
  /** Users created in this run (removed ones included: the matches must drop them). */
  users: number[];
}

async function createUsers(world: World, app: number, phones: (string | null)[], via: 'service' | 'prisma'): Promise<void> {
  const applicationId = world.apps[app]!;
  const logins = phones.map(() => `u${sequence++}`);
  if (via === 'service') {
    await services.users.createMany(
      applicationId,
      logins.map((login, i) => ({ login, passwordHash, ...(phones[i] ? { phone: phones[i] } : {}) })),
    );
  } else {
    await prismaOf(db).user.createMany({ data: logins.map((login, i) => ({ applicationId, login, passwordHash, phone: phones[i] })) });
  }
  const created = await prismaOf(db).user.findMany({ where: { applicationId, login: { in: logins } }, orderBy: { id: 'asc' } });
  world.users.push(...created.map((u) => u.id));
}

async function apply(world: World, o: Op): Promise<void> {
  const existing = await prismaOf(db).user.findMany({ where: { id: { in: world.users } }, orderBy: { id: 'asc' } });
  const nth = (i: number) => existing[i % existing.length];
  switch (o.kind) {
    case 'upload': {
      const owner = nth(o.owner);
      if (!owner) return;
      const caller: Caller = { kind: 'user', applicationId: owner.applicationId, userId: owner.id, via: 'apiKey' };
      await services.addressBook.upload(caller, o.contacts, o.udid, o.force);
      return;
    }
    case 'createUsers':
      return createUsers(world, o.app, o.phones, o.via);
    case 'changePhone': {
      const user = nth(o.user);
      if (!user) return;
      if (o.via === 'update') await prismaOf(db).user.update({ where: { id: user.id }, data: { phone: o.phone } });
      // Several users in one statement: every user of the application with this user's phone.
      else await prismaOf(db).user.updateMany({ where: { applicationId: user.applicationId, phone: user.phone }, data: { phone: o.phone } });
      return;
    }
    case 'removeUser': {
      const user = nth(o.user);
      if (user) await prismaOf(db).user.delete({ where: { id: user.id } });
    }
  }
}

/** Every book's registered users: as the service answers (whole, and in pages of 2), and by the definition. */
async function compare(world: World): Promise<void> {
  const users = await prismaOf(db).user.findMany({ where: { id: { in: world.users } }, orderBy: { id: 'asc' } });
  const contacts = await prismaOf(db).contact.findMany({ where: { userId: { in: users.map((u) => u.id) } } });
  const regionOf = (applicationId: number) => REGIONS[world.apps.indexOf(applicationId)] ?? null;
  const appOf = new Map(users.map((u) => [u.id, u.applicationId]));
  // A stored key is the key of its phone in its application's region, or none (a phone written by Prisma: it then matches as written).
  for (const u of users) if (u.phoneKey !== null) expect([u.id, u.phoneKey]).toEqual([u.id, phoneKey(u.phone!, regionOf(u.applicationId))]);
  for (const c of contacts) if (c.phoneKey !== null) expect([c.id, c.phoneKey]).toEqual([c.id, phoneKey(c.phone, regionOf(appOf.get(c.userId)!))]);
  for (const owner of users) {
    const caller: Caller = { kind: 'user', applicationId: owner.applicationId, userId: owner.id, via: 'apiKey' };
    for (const udid of UDIDS) {
      const book = contacts.filter((c) => c.userId === owner.id && c.udid === udid);
      const matched = users.filter(
        (u) =>
          u.applicationId === owner.applicationId &&
          u.phone !== null &&
          book.some((c) => c.phone === u.phone || (c.phoneKey !== null && c.phoneKey === u.phoneKey)),
      );
      const expected = matched.map((u) => u.id);
      const where = `owner ${owner.id}, udid "${udid}"`;
      expect([where, (await services.addressBook.registeredUsers(caller, udid)).map((u) => u.id)]).toEqual([where, expected]);
      // The compact form, read from the matches alone: each user's current phone.
      expect([where, await services.addressBook.registeredUserPhones(caller, udid)]).toEqual([where, matched.map((u) => ({ id: u.id, phone: u.phone }))]);
      const paged: number[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await services.addressBook.registeredUsersPage(caller, udid, { first: 2, after });
        paged.push(...page.users.map((u) => u.id));
        if (!page.pageInfo.hasNextPage) break;
        after = page.cursors.at(-1);
      }
      expect([where, paged]).toEqual([where, expected]);
      // And backward, from the end: the same users.
      const back: number[] = [];
      let before: string | undefined;
      for (;;) {
        const page = await services.addressBook.registeredUsersPage(caller, udid, { last: 2, before });
        back.unshift(...page.users.map((u) => u.id));
        if (!page.pageInfo.hasPreviousPage) break;
        before = page.cursors[0];
      }
      expect([where, back]).toEqual([where, expected]);
    }
  }
}

test('registered users equal the definition (the same phone or the same number, within the application) after any sequence of writes', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
      const world: World = { apps: [], users: [] };
      for (let i = 0; i < 2; i++) {
        const { application } = await provisioning.applications.create(`matches ${randomBytes(4).toString('hex')}`, REGIONS[i]);
        world.apps.push(application.id);
      }
      // Both applications start with users on the shared phones.
      await createUsers(world, 0, [PHONES[0]!, PHONES[1]!, null], 'service');
      await createUsers(world, 1, [PHONES[0]!, PHONES[1]!], 'prisma');
      for (const o of ops) await apply(world, o);
      await compare(world);
      // Each run leaves nothing behind for the next (the applications cascade).
      await prismaOf(db).application.deleteMany({ where: { id: { in: world.apps } } });
    }),
    { numRuns: 40 },
  );
}, 120_000);

test('the matches table holds exactly the defined matches, whoever wrote contacts and users', async () => {
  // The same definition in SQL, over the whole database: no stray row from
  // any test file that ran before, on a server shared with them.
  const { rows } = await db.pool.query<{ missing: number; stray: number }>(`
    WITH defined AS (
      SELECT c.user_id AS owner_id, c.udid, u.id AS user_id, u.phone
        FROM contacts c JOIN users o ON o.id = c.user_id
        JOIN users u ON u.application_id = o.application_id AND (u.phone = c.phone OR u.phone_key = c.phone_key)
    )
    SELECT (SELECT count(*) FROM (SELECT * FROM defined EXCEPT SELECT owner_id, udid, user_id, phone FROM address_book_matches) x)::int AS missing,
           (SELECT count(*) FROM (SELECT owner_id, udid, user_id, phone FROM address_book_matches EXCEPT SELECT * FROM defined) x)::int AS stray`);
  expect(rows[0]).toEqual({ missing: 0, stray: 0 });
});
