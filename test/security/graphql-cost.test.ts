// Aliases multiply the heavy operations (issue 17, item 4): each within every
// per-field limit, thirty aliased registeredUsers over a book matching 5,000
// users answered 47 MB, and ten aliased uploads of 10,000 contacts stored
// 100,000 contacts in one request. The cost limit (src/graphql/cost.ts)
// charges each root field the rows it would read or write and refuses a
// document whose fields together are over the limits with 400
// COST_LIMIT_EXCEEDED, before any resolver runs. Sent as a client would.
import { COST_LIMITS } from '../../src/graphql/cost';
import { recordFigures } from '../support/figures';
import { expectUntouched, unknownIds } from '../support/chat';
import { seedTenant, type Tenant } from '../support/seed';
import { type GraphQLResult, useService } from '../support/service';

let t: Tenant;
const figures: Record<string, unknown> = { limits: COST_LIMITS };

/** Users the owner's global book matches (and device "big"'s). */
const BOOK = 400;

const service = useService();
beforeAll(async () => {
  t = await seedTenant(service.app.provisioning);
  // BOOK users with phones, written directly (a scrypt hash per user through
  // the service would take minutes); the owner's books list their phones.
  await service.db.pool.query(
    `INSERT INTO users (application_id, login, password_hash, phone)
     SELECT $1, 'bulk' || g, $2, '+1555' || lpad(g::text, 7, '0') FROM generate_series(1, $3::int) g`,
    [t.applicationId, t.owner.passwordHash, BOOK],
  );
  const contacts = Array.from({ length: BOOK }, (_, i) => ({ name: `Bulk ${i + 1}`, phone: `+1555${String(i + 1).padStart(7, '0')}` }));
  for (const udid of ['', 'big']) {
    const res = await service.rest('POST', '/address_book.json', { headers: t.as.owner, body: { contacts, udid } });
    expect(res.status).toBe(200);
  }
  // Device "small" matches the member only.
  await service.rest('POST', '/address_book.json', { headers: t.as.owner, body: { contacts: [{ name: 'Member', phone: '+10000000102' }], udid: 'small' } });
});
afterAll(async () => {
  recordFigures('graphql-cost', figures);
});

const gql = (query: string, variables?: Record<string, unknown>) => service.graphql(query, variables, t.as.owner);

/** Refused before execution: 400, one COST_LIMIT_EXCEEDED error, no data. */
function expectRefused(res: GraphQLResult, message: RegExp): void {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ errors: [{ message: expect.stringMatching(message), extensions: { code: 'COST_LIMIT_EXCEEDED' } }] });
}

const aliased = (n: number, field: (i: number) => string) => Array.from({ length: n }, (_, i) => `a${i}: ${field(i)}`).join('\n');

test('30 aliased registeredUsers over a book matching 400 users: refused before any of them runs', async () => {
  const statements = service.db.statementCount();
  const started = performance.now();
  const res = await gql(`{ ${aliased(30, () => 'registeredUsers { id login phone fullName email }')} }`);
  const ms = performance.now() - started;
  expectRefused(res, /^document cost 12000 is over the limit of 10000 rows/);
  // Authentication and one count of the book: no lookup ran.
  const ran = service.db.statementCount() - statements;
  expect(ran).toBeLessThanOrEqual(2);
  figures.registeredUsers30 = { bookMatches: BOOK, cost: 30 * BOOK, status: res.status, bytes: res.text.length, ms: Math.round(ms), statements: ran };
});

test('registeredUsers aliased up to the limit are answered, one more is refused', async () => {
  const fit = COST_LIMITS.rows / BOOK;
  const ok = await gql(`{ ${aliased(fit, () => 'registeredUsers { id }')} }`);
  expect(ok.status).toBe(200);
  expect(ok.body.errors).toBeUndefined();
  expect(Object.values(ok.body.data).map((users) => (users as unknown[]).length)).toEqual(Array(fit).fill(BOOK));
  expectRefused(await gql(`{ ${aliased(fit + 1, () => 'registeredUsers { id }')} }`), /^document cost 10400 /);
  figures.registeredUsersBoundary = { accepted: fit, refused: fit + 1, acceptedBytes: ok.text.length };
});

test('two aliased registeredUsers with different udids are answered, each from its own book', async () => {
  const res = await gql('{ small: registeredUsers(udid: "small") { id } big: registeredUsers(udid: "big") { id } }');
  expect(res.status).toBe(200);
  expect(res.body.errors).toBeUndefined();
  expect(res.body.data.small).toEqual([{ id: t.member.id }]);
  expect(res.body.data.big).toHaveLength(BOOK);
});

test('10 aliased uploadAddressBook of 10,000 contacts each (one variable, ten devices): refused, nothing stored', async () => {
  const contacts = Array.from({ length: 10_000 }, (_, i) => ({ name: `C${i}`, phone: `+1666${String(i).padStart(7, '0')}` }));
  // The owner's own contacts: other files' uploads run in parallel on a shared server database.
  const stored = () => service.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM contacts WHERE user_id = $1', [t.owner.id]);
  const before = await stored();
  const res = await gql(`mutation($c: [ContactInput!]!) { ${aliased(10, (i) => `uploadAddressBook(contacts: $c, udid: "dev${i}") { created }`)} }`, {
    c: contacts,
  });
  expectRefused(res, /^at most 10000 contacts per document, all uploadAddressBook fields together \(got 100000\)$/);
  const after = await stored();
  expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  figures.uploads10 = { contacts: 100_000, status: res.status, stored: after.rows[0]!.n - before.rows[0]!.n };
});

test('contacts and ids are capped per document: 5,000 + 5,001 contacts and 600 + 401 ids refused, the limits themselves answered', async () => {
  const contacts = (n: number, from: number) => Array.from({ length: n }, (_, i) => ({ name: 'C', phone: `+1777${String(from + i).padStart(7, '0')}` }));
  const upload =
    'mutation($a: [ContactInput!]!, $b: [ContactInput!]!) { a: uploadAddressBook(contacts: $a, udid: "ua") { created } b: uploadAddressBook(contacts: $b, udid: "ub") { created } }';
  expectRefused(await gql(upload, { a: contacts(5_000, 0), b: contacts(5_001, 5_000) }), /\(got 10001\)$/);
  const fits = await gql(upload, { a: contacts(5_000, 0), b: contacts(5_000, 5_000) });
  expect(fits.body).toEqual({ data: { a: { created: 5_000 }, b: { created: 5_000 } } });

  const remove =
    'mutation($a: [ID!]!, $b: [ID!]!) { a: deleteMessages(ids: $a, force: true) { notFound } b: deleteMessages(ids: $b, force: true) { notFound } }';
  const ids = unknownIds(1_000);
  expectRefused(
    await gql(remove, { a: [t.messageIds[0], ...ids.slice(0, 599)], b: ids.slice(599) }),
    /^at most 1000 ids per document, all deleteMessages fields together \(got 1001\)$/,
  );
  await expectUntouched(service, t);
  const allowed = await gql(remove, { a: ids.slice(0, 600), b: ids.slice(600, 1_000) });
  expect(allowed.status).toBe(200);
  expect(allowed.body.data.a.notFound).toHaveLength(600);
});

test("registeredUsersConnection costs its `first` (given as a variable, which graphql-armor's cost does not read): ten pages of 1,000 answered, eleven refused", async () => {
  const pages = (n: number) => `query($n: Int!) { ${aliased(n, () => 'registeredUsersConnection(first: $n) { pageInfo { hasNextPage } }')} }`;
  const ok = await gql(pages(10), { n: 1_000 });
  expect([ok.status, ok.body.errors]).toEqual([200, undefined]);
  expectRefused(await gql(pages(11), { n: 1_000 }), /^document cost 11000 /);
});

test('aliases inside fragments and skipped fields count as graphql-js would run them', async () => {
  // Twenty-six in a fragment and an inline fragment: refused.
  const spread = `query { ...A ... on Query { ${aliased(13, (i) => `b${i}: registeredUsers { id }`).replace(/a(\d+): b/g, 'b')} } } fragment A on Query { ${aliased(13, () => 'registeredUsers { id }')} }`;
  expectRefused(await gql(spread), /^document cost 10400 /);
  // The same with one of them skipped: 25, answered.
  const skipped = spread.replace('b0: registeredUsers', 'b0: registeredUsers @skip(if: true)');
  const res = await gql(skipped);
  expect(res.status).toBe(200);
  expect(Object.keys(res.body.data)).toHaveLength(25);
});

test("one field alone is bounded by its own limits: 10,001 contacts answer the field's BAD_USER_INPUT, not the cost limit", async () => {
  const contacts = Array.from({ length: 10_001 }, (_, i) => ({ name: 'C', phone: `+1888${String(i).padStart(7, '0')}` }));
  const res = await gql('mutation($c: [ContactInput!]!) { uploadAddressBook(contacts: $c, udid: "one") { created } }', { c: contacts });
  expect(res.status).toBe(200);
  expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
});
