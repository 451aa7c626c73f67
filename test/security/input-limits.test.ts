// The input limits of docs/operation.md (Limits, Errors, Decisions) on both surfaces,
// each in its documented shape, and that a refused request stores nothing.
//
// Already proven elsewhere, not repeated here:
// - 1000 ids accepted / 1001 refused with 422 (REST) and BAD_USER_INPUT (GraphQL):
//   test/rest/delete-messages.test.ts, test/graphql/delete-messages.test.ts ("ids" blocks);
// - 10,000 contacts accepted / 10,001 refused on REST, 10,001 refused on GraphQL:
//   test/rest/address-book.test.ts, test/graphql/users-and-address-book.test.ts;
// - udid 64 accepted / 65 refused on the read (both surfaces) and 65 refused on the upload;
// - malformed ids 'xyz', upper-case, 25 and 23 hex digits → NotFound; phones '123', 'abc',
//   16 digits, spaces, '' → 422; NUL in udid and names → 422;
// - 413 on DELETE and POST with a JSON body against the OpenAPI schema: test/rest/openapi.test.ts.
// This file adds the exact boundaries (2 MiB to the byte, in JSON, form and chunked
// encodings), limits counted on the input as given (duplicates), GraphQL literals,
// the GraphQL side of the upload boundaries, and odder malformed ids and phones.
import { contactCount, MEMBER_PHONE } from '../support/address-book';
import { expectUntouched, history, sorted, UNKNOWN } from '../support/chat';
import { recordFigures } from '../support/figures';
import { fetchResult, type GraphQLResult, type HttpResult, type TestService, useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';

const MiB2 = 2 * 1024 * 1024;
const TOO_LARGE = { errors: ['Request body too large'] };
const PHONE_RULE = 'phone must be 10 to 15 digits, optionally with a leading "+" and spaces, dashes, dots or parentheses (at most 32 characters)';

const DELETE = `mutation Delete($ids: [ID!]!, $force: Boolean) {
  deleteMessages(ids: $ids, force: $force) { successfullyDeleted notFound }
}`;
const UPLOAD = `mutation Upload($contacts: [ContactInput!]!, $udid: String, $force: Boolean) {
  uploadAddressBook(contacts: $contacts, udid: $udid, force: $force) { created updated deleted }
}`;

const service = useService();
afterAll(async () => {
  recordFigures('input-limits', figures);
});

const figures: Record<string, unknown> = {};
const seed = () => seedTenant(service.app.provisioning);

const UPLOAD_REJECTED = `mutation Upload($contacts: [ContactInput!]!) {
  uploadAddressBook(contacts: $contacts) { created rejected { index reasons } }
}`;

/** A request that must not answer 5xx. */
const send = (method: string, path: string, options: Parameters<TestService['rest']>[2]) => service.call(method, path, options);

/** `text` padded with `pad` to exactly `bytes` bytes (ASCII). */
function padded(text: string, bytes: number, pad = ' '): string {
  expect(text.length).toBeLessThan(bytes);
  return text + pad.repeat(bytes - text.length);
}

/** A body sent without Content-Length (chunked), in 64 KiB pieces. */
async function chunked(method: string, path: string, headers: Record<string, string>, body: string): Promise<HttpResult> {
  const bytes = new TextEncoder().encode(body);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 65_536) controller.enqueue(bytes.subarray(at, at + 65_536));
      controller.close();
    },
  });
  return fetchResult(`${service.baseUrl}${path}`, { method, headers, body: stream, duplex: 'half' } as RequestInit);
}

/** A GraphQL operation's failure with HTTP 200: errors[0] carries the code, the field is null. */
function expectOperationError(res: GraphQLResult, field: string, code: string, message?: string): void {
  expect(res.status).toBe(200);
  expect(res.body.errors).toHaveLength(1);
  expect(res.body.errors![0]!.extensions?.code).toBe(code);
  if (message !== undefined) expect(res.body.errors![0]!.message).toBe(message);
  expect((res.body.errors![0] as { path?: unknown }).path).toEqual([field]);
  expect(res.body.data).toBeNull();
}

describe('request bodies: 2 MiB to the byte on every REST route that takes a body', () => {
  test('DELETE /chat/Message/{ids}.json, JSON body: one byte over is 413 and changes nothing; exactly 2 MiB is served', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    const path = `/chat/Message/${m0}.json`;
    const headers = { ...t.as.owner, 'content-type': 'application/json' };
    const over = await send('DELETE', path, { headers, raw: padded('{"force":1}', MiB2 + 1) });
    expect([over.status, over.body]).toEqual([413, TOO_LARGE]);
    await expectUntouched(service, t);

    // Whitespace after the JSON value is still JSON: the request is read and served.
    const exact = await send('DELETE', path, { headers, raw: padded('{"force":0}', MiB2) });
    expect([exact.status, exact.body]).toEqual([200, { SuccessfullyDeleted: { ids: [m0] }, NotFound: { ids: [] } }]);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
  });

  test('DELETE /chat/Message/{ids}.json, form body: one byte over is 413 and changes nothing; exactly 2 MiB is served', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    const path = `/chat/Message/${m0}.json`;
    const headers = { ...t.as.owner, 'content-type': 'application/x-www-form-urlencoded' };
    const over = await send('DELETE', path, { headers, raw: padded('force=1&padding=', MiB2 + 1, 'x') });
    expect([over.status, over.body]).toEqual([413, TOO_LARGE]);
    await expectUntouched(service, t);

    const exact = await send('DELETE', path, { headers, raw: padded('force=0&padding=', MiB2, 'x') });
    expect([exact.status, exact.body]).toEqual([200, { SuccessfullyDeleted: { ids: [m0] }, NotFound: { ids: [] } }]);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
  });

  test('POST /address_book.json: one byte over is 413 and stores nothing; exactly 2 MiB is served', async () => {
    const t = await seed();
    const headers = { ...t.as.owner, 'content-type': 'application/json' };
    const json = JSON.stringify({ contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    const over = await send('POST', '/address_book.json', { headers, raw: padded(json, MiB2 + 1) });
    expect([over.status, over.body]).toEqual([413, TOO_LARGE]);
    expect(await contactCount(service, t)).toBe(0);

    const exact = await send('POST', '/address_book.json', { headers, raw: padded(json, MiB2) });
    expect([exact.status, exact.body]).toEqual([200, { created: 1, updated: 0, deleted: 0 }]);
    expect(await contactCount(service, t)).toBe(1);
  });

  test('a body over 2 MiB without Content-Length (chunked) is 413 too, on both routes, and changes nothing', async () => {
    const t = await seed();
    const headers = { ...t.as.owner, 'content-type': 'application/json' };
    const del = await chunked('DELETE', `/chat/Message/${t.messageIds[0]}.json`, headers, padded('{"force":1}', MiB2 + 1));
    expect([del.status, del.body]).toEqual([413, TOO_LARGE]);
    const contacts = JSON.stringify({ contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    const up = await chunked('POST', '/address_book.json', headers, padded(contacts, MiB2 + 1));
    expect([up.status, up.body]).toEqual([413, TOO_LARGE]);
    await expectUntouched(service, t);
    expect(await contactCount(service, t)).toBe(0);
    // The same request under the limit, chunked, is served: the 413 is about size alone.
    const small = await chunked('POST', '/address_book.json', headers, contacts);
    expect([small.status, small.body]).toEqual([200, { created: 1, updated: 0, deleted: 0 }]);
  });

  test('a GraphQL mutation in a body over 2 MiB is 413 PAYLOAD_TOO_LARGE and stores nothing', async () => {
    // The /graphql boundary itself (exactly 2 MiB served) is in graphql-limits.test.ts.
    const t = await seed();
    const json = JSON.stringify({ query: UPLOAD, variables: { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] } });
    const res = await send('POST', '/graphql', { headers: { ...t.as.owner, 'content-type': 'application/json' }, raw: padded(json, MiB2 + 1) });
    expect([res.status, res.body]).toEqual([413, { errors: [{ message: 'Request body too large', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] }]);
    expect(await contactCount(service, t)).toBe(0);
    figures.bodyLimitBytes = MiB2;
  });
});

describe('ids per delete', () => {
  test('the limit counts ids as given: 1001 copies of one id are refused on both surfaces and nothing changes', async () => {
    const t = await seed();
    const ids = Array.from({ length: 1001 }, () => t.messageIds[0]!);
    const rest = await send('DELETE', `/chat/Message/${ids.join(',')}.json`, { headers: t.as.owner });
    expect([rest.status, rest.body]).toEqual([422, { errors: ['at most 1000 ids per call (got 1001)'] }]);
    const gql = await service.graphql(DELETE, { ids, force: true }, t.as.owner);
    expectOperationError(gql, 'deleteMessages', 'BAD_USER_INPUT', 'at most 1000 ids per call (got 1001)');
    await expectUntouched(service, t);
  });

  test('ids written into the GraphQL document itself obey the same limit', async () => {
    const t = await seed();
    const literal = (ids: string[]) => `mutation { deleteMessages(ids: [${ids.map((id) => JSON.stringify(id)).join(' ')}]) { successfullyDeleted notFound } }`;
    const over = await service.graphql(literal(Array.from({ length: 1001 }, () => UNKNOWN)), undefined, t.as.owner);
    expectOperationError(over, 'deleteMessages', 'BAD_USER_INPUT', 'at most 1000 ids per call (got 1001)');
    await expectUntouched(service, t);
    const most = await service.graphql(literal([t.messageIds[0]!, ...Array.from({ length: 999 }, () => UNKNOWN)]), undefined, t.as.owner);
    expect([most.status, most.body.errors]).toEqual([200, undefined]);
    expect(most.body.data.deleteMessages).toEqual({ successfullyDeleted: [t.messageIds[0]], notFound: [UNKNOWN] });
  });

  test('a request line over 64 KiB (1000 ids of 70 characters) is 431, as the README’s limits say, and changes nothing', async () => {
    // 1000 well-formed ids (25 bytes each with the comma) fit in the 64 KiB request line;
    // ids this long cannot be messages anyway. Node's HTTP parser refuses the request before
    // the service sees it: no route shape applies (the body is Fastify's
    // {"error":"Request Header Fields Too Large",...}, not empty as the README says).
    const t = await seed();
    const ids = [t.messageIds[0]!, ...Array.from({ length: 999 }, (_, i) => `${i}`.padStart(70, 'f'))];
    const res = await send('DELETE', `/chat/Message/${ids.join(',')}.json`, { headers: t.as.owner });
    expect(res.status).toBe(431);
    expect(res.text).not.toMatch(/\bat\s+\S+:\d+:\d+|"stack"/);
    await expectUntouched(service, t);
    figures.requestLineLimit = { bytes: 64 * 1024, status: res.status, body: res.text };
  });
});

describe('malformed ids', () => {
  const ODD_IDS = ['a\u0000b', 'caf\u00e9', "' OR 1=1 --", 'a b', '../../etc/passwd', `${UNKNOWN}\n`, 'ﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀﬀ', 'f'.repeat(1000)];

  test('odd ids in the REST path are NotFound (the README’s decision), next to a real one, and change nothing else', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    const res = await send('DELETE', `/chat/Message/${[m0, ...ODD_IDS].map(encodeURIComponent).join(',')}.json`, { headers: t.as.owner });
    expect(res.status).toBe(200);
    expect({ deleted: res.body.SuccessfullyDeleted.ids, notFound: sorted(res.body.NotFound.ids) }).toEqual({ deleted: [m0], notFound: sorted(ODD_IDS) });
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
  });

  test('odd ids through GraphQL are NotFound too, numbers included (ID takes an Int)', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    const res = await service.graphql(DELETE, { ids: [m0, ...ODD_IDS, 12345, 'x'.repeat(100_000)] }, t.as.owner);
    expect([res.status, res.body.errors]).toEqual([200, undefined]);
    expect(res.body.data.deleteMessages.successfullyDeleted).toEqual([m0]);
    expect(sorted(res.body.data.deleteMessages.notFound)).toEqual(sorted([...ODD_IDS, '12345', 'x'.repeat(100_000)]));
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
  });

  // Refusals store nothing, so these share one tenant (each checks it is still untouched).
  let shared: Tenant;
  beforeAll(async () => {
    shared = await seed();
  });

  test.each([
    ['null', [null]],
    ['a float', [1.5]],
    ['a boolean', [true]],
    ['an object', [{ id: UNKNOWN }]],
    ['a list in the list', [[UNKNOWN]]],
  ])('an id that is %s is refused by GraphQL’s ID type with 400 BAD_USER_INPUT and nothing changes', async (_name, ids) => {
    const t = shared;
    const res = await service.graphql(DELETE, { ids: [t.messageIds[0], ...ids], force: true }, t.as.owner);
    expect(res.status).toBe(400);
    expect(res.body.errors![0]!.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.body).not.toHaveProperty('data');
    await expectUntouched(service, t);
  });

  // Fastify rejects such a path before routing (FST_ERR_BAD_URL); createApp's
  // frameworkErrors answers it in the route family's shape.
  test('an id that is not valid percent-encoding is a 400 in the route’s documented shape', async () => {
    const t = await seed();
    const del = await service.rest('DELETE', '/chat/Message/%zz.json', { headers: t.as.owner });
    expect([del.status, del.body]).toEqual([400, { errors: [expect.any(String)] }]);
    const lookup = await service.rest('GET', '/users/external/%zz.json', { headers: t.as.owner });
    expect([lookup.status, lookup.body]).toEqual([400, { errors: { base: [expect.any(String)] } }]);
  });

  test('an id that is not valid percent-encoding is refused with 400, never a 5xx, and changes nothing', async () => {
    const t = await seed();
    const res = await send('DELETE', `/chat/Message/${t.messageIds[0]},%zz.json`, { headers: t.as.owner });
    expect(res.status).toBe(400);
    expect(res.text).not.toMatch(/\bat\s+\S+:\d+:\d+|"stack"/);
    await expectUntouched(service, t);
  });
});

describe('contacts per upload', () => {
  const many = (n: number, phone?: string) => Array.from({ length: n }, (_, i) => ({ name: `c${i}`, phone: phone ?? `+1555${String(i).padStart(7, '0')}` }));

  test('GraphQL takes 10,000 contacts in one upload and stores them all', async () => {
    const t = await seed();
    const res = await service.graphql(UPLOAD, { contacts: many(10_000) }, t.as.owner);
    expect([res.status, res.body]).toEqual([200, { data: { uploadAddressBook: { created: 10_000, updated: 0, deleted: 0 } } }]);
    expect(await contactCount(service, t)).toBe(10_000);
  });

  test('the limit counts contacts as given: 10,001 entries of one phone are refused on both surfaces and nothing is stored', async () => {
    const t = await seed();
    const contacts = many(10_001, MEMBER_PHONE);
    const rest = await send('POST', '/address_book.json', { headers: t.as.owner, body: { contacts } });
    expect([rest.status, rest.body]).toEqual([422, { errors: ['at most 10000 contacts per upload'] }]);
    const gql = await service.graphql(UPLOAD, { contacts, force: true }, t.as.owner);
    expectOperationError(gql, 'uploadAddressBook', 'BAD_USER_INPUT', 'at most 10000 contacts per upload');
    expect(await contactCount(service, t)).toBe(0);
  });

  test('a forced upload over the limit does not empty the book either', async () => {
    const t = await seed();
    expect((await send('POST', '/address_book.json', { headers: t.as.owner, body: { contacts: many(3) } })).status).toBe(200);
    const rest = await send('POST', '/address_book.json', { headers: t.as.owner, body: { contacts: many(10_001), force: 1 } });
    expect(rest.status).toBe(422);
    const gql = await service.graphql(UPLOAD, { contacts: many(10_001), force: true }, t.as.owner);
    expectOperationError(gql, 'uploadAddressBook', 'BAD_USER_INPUT');
    expect(await contactCount(service, t)).toBe(3);
  });

  test('contacts written into the GraphQL document are bounded by the token limit first: large lists travel as variables', async () => {
    // 8 tokens a contact: about 240 fit in 2000 tokens. Past that the parser stops (400).
    const t = await seed();
    const literal = (n: number) =>
      `mutation { uploadAddressBook(contacts: [${many(n)
        .map((c) => `{name: "${c.name}", phone: "${c.phone}"}`)
        .join(' ')}]) { created } }`;
    const fits = await service.graphql(literal(240), undefined, t.as.owner);
    expect([fits.status, fits.body]).toEqual([200, { data: { uploadAddressBook: { created: 240 } } }]);
    const tooMany = await service.graphql(literal(250), undefined, t.as.owner);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errors![0]!.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(await contactCount(service, t)).toBe(240);
    figures.graphqlLiteralContacts = { accepted: 240, refusedAt: 250, code: 'GRAPHQL_PARSE_FAILED' };
  });
});

describe('udid', () => {
  test('a 64-character udid is accepted by the GraphQL upload and one of 65 refused, nothing stored', async () => {
    const t = await seed();
    const contacts = [{ name: 'Member', phone: MEMBER_PHONE }];
    const over = await service.graphql(UPLOAD, { contacts, udid: 'u'.repeat(65) }, t.as.owner);
    expectOperationError(over, 'uploadAddressBook', 'BAD_USER_INPUT', 'udid must be at most 64 characters');
    expect(await contactCount(service, t)).toBe(0);
    const ok = await service.graphql(UPLOAD, { contacts, udid: 'u'.repeat(64) }, t.as.owner);
    expect(ok.body).toEqual({ data: { uploadAddressBook: { created: 1, updated: 0, deleted: 0 } } });
  });

  test('the limit is in characters: 64 non-ASCII characters are accepted, 65 refused, on both surfaces', async () => {
    const t = await seed();
    const contacts = [{ name: 'Member', phone: MEMBER_PHONE }];
    const udid64 = '\u00e9'.repeat(64);
    const rest = await send('POST', '/address_book.json', { headers: t.as.owner, body: { contacts, udid: udid64 } });
    expect([rest.status, rest.body]).toEqual([200, { created: 1, updated: 0, deleted: 0 }]);
    const read = await send('GET', `/address_book/registered_users.json?compact=1&udid=${encodeURIComponent(udid64)}`, { headers: t.as.owner });
    expect(read.body).toEqual({ items: [{ user: { id: t.member.id, phone: MEMBER_PHONE } }] });
    const restOver = await send('POST', '/address_book.json', { headers: t.as.owner, body: { contacts, udid: `${udid64}\u00e9` } });
    expect([restOver.status, restOver.body]).toEqual([422, { errors: ['udid must be at most 64 characters'] }]);
    const gqlOver = await service.graphql(UPLOAD, { contacts, udid: `${udid64}\u00e9` }, t.as.owner);
    expectOperationError(gqlOver, 'uploadAddressBook', 'BAD_USER_INPUT', 'udid must be at most 64 characters');
    expect(await contactCount(service, t)).toBe(1);
  });
});

describe('malformed phones', () => {
  // Each upload stores the valid contact, so each test has a tenant of its own.
  let t: Tenant;
  beforeEach(async () => {
    t = await seed();
  });

  const BAD_PHONES = [
    '+15550000002\n',
    ' +15550000002',
    // Spaces and dashes between digits are a phone as people write it now
    // (test/behaviour/phones.test.ts); these are not:
    '(+1) 555-000-0002',
    '555-000-000',
    '+1 555 000 0002 x1',
    '++15550000002',
    '+',
    '\u0661\u0665\u0665\u0665\u0660\u0660\u0660\u0660\u0660\u0660\u0662', // Arabic-Indic digits
    '\uff0b\uff11\uff15\uff15\uff15\uff10\uff10\uff10\uff10\uff10\uff10\uff12', // full-width
    '+1555000000\u0000',
    '0x15550000002',
    '1'.repeat(10_000),
  ];

  test.each(BAD_PHONES.map((p) => [JSON.stringify(p).slice(0, 40), p]))(
    'phone %s: that contact is rejected by index on both surfaces, and only the valid one is stored',
    async (_name, phone) => {
      const contacts = [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Broken', phone },
      ];
      const rest = await send('POST', '/address_book.json', { headers: t.as.owner, body: { contacts } });
      expect([rest.status, rest.body]).toEqual([200, { created: 1, updated: 0, deleted: 0, rejected: { '1': [PHONE_RULE] } }]);
      const gql = await service.graphql(UPLOAD_REJECTED, { contacts }, t.as.owner);
      expect(gql.body).toEqual({ data: { uploadAddressBook: { created: 0, rejected: [{ index: 1, reasons: [PHONE_RULE] }] } } });
      expect(await contactCount(service, t)).toBe(1);
    },
  );

  test.each([
    ['a number', 15550000002],
    ['a list', ['+15550000002']],
    ['an object', { number: '+15550000002' }],
    ['a boolean', true],
  ])(
    'a phone that is %s: rejected by index on REST (JSON has no other way to say it); 400 BAD_USER_INPUT on GraphQL, whose input type says String',
    async (_name, phone) => {
      const contacts = [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Broken', phone },
      ];
      const gql = await service.graphql(UPLOAD, { contacts }, t.as.owner);
      expect(gql.status).toBe(400);
      expect(gql.body.errors![0]!.extensions?.code).toBe('BAD_USER_INPUT');
      expect(gql.body).not.toHaveProperty('data');
      expect(await contactCount(service, t)).toBe(0);
      const rest = await send('POST', '/address_book.json', { headers: t.as.owner, body: { contacts } });
      expect([rest.status, rest.body]).toEqual([200, { created: 1, updated: 0, deleted: 0, rejected: { '1': [PHONE_RULE] } }]);
      expect(await contactCount(service, t)).toBe(1);
    },
  );
});
