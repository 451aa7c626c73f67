// GET /address_book/registered_users.json and POST /address_book.json: what
// only the REST paths have. The address book's rules (matching, books per
// device, counts, force, rejected contacts, limits, credentials) are written
// once for both surfaces in test/behaviour/address-book.test.ts; here are the
// JSON of the answers and errors, the spec's 0/1 flags (compact, force,
// destroy) where GraphQL has Booleans or nothing, and how the body is parsed
// where GraphQL's input coercion would decide instead.
import { bookOf, contactCount, MEMBER_PHONE, NAME_RULE, OUTSIDER_PHONE, PHONE_RULE, STRANGER_PHONE } from '../support/address-book';
import { USER_FIELDS } from '../support/records';
import { useService } from '../support/service';
import { seedTenant } from '../support/seed';

const service = useService();

const upload = (headers: Record<string, string>, body: unknown) => service.call('POST', '/address_book.json', { headers, body });

const registered = (headers: Record<string, string>, query = '') => service.call('GET', `/address_book/registered_users.json${query}`, { headers });

describe('the answers', () => {
  test('registered users are JSON {"items":[{"user":…}]}; compact=1 holds only id and phone', async () => {
    const t = await seedTenant(service.app.provisioning);
    await upload(t.as.owner, {
      contacts: [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Outsider', phone: OUTSIDER_PHONE },
      ],
    });
    const res = await registered(t.as.owner, '?compact=1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      items: [{ user: { id: t.member.id, phone: MEMBER_PHONE } }, { user: { id: t.outsider.id, phone: OUTSIDER_PHONE } }],
    });
  });

  test('an upload answers its counts, with "rejected" keyed by index only when a contact was not taken', async () => {
    const t = await seedTenant(service.app.provisioning);
    const taken = await upload(t.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    expect([taken.status, taken.body]).toEqual([200, { created: 1, updated: 0, deleted: 0 }]);
    const some = await upload(t.as.owner, {
      contacts: [{ name: 'Broken', phone: '123' }, { name: 'Outsider', phone: OUTSIDER_PHONE }, { phone: STRANGER_PHONE }],
    });
    expect([some.status, some.body]).toEqual([200, { created: 1, updated: 0, deleted: 0, rejected: { '0': [PHONE_RULE], '2': [NAME_RULE] } }]);
  });

  test('errors are {"errors":["<message>"]} with the status of their kind', async () => {
    const t = await seedTenant(service.app.provisioning);
    const cases: [number, string, () => Promise<{ status: number; body: unknown }>][] = [
      [401, 'Token is required: send SVC-Token or Authorization: ApiKey <key>', () => registered({})],
      [403, 'Forbidden. Need user.', () => registered(t.as.app)],
      [403, 'Forbidden. Need user.', () => upload(t.as.apiKey, { contacts: [] })],
      [422, 'udid must be at most 64 characters', () => registered(t.as.owner, `?udid=${'u'.repeat(65)}`)],
      [422, 'at most 10000 contacts per upload', () => upload(t.as.owner, { contacts: Array.from({ length: 10_001 }, () => ({})) })],
    ];
    for (const [status, message, request] of cases) {
      const res = await request();
      expect([res.status, res.body]).toEqual([status, { errors: [message] }]);
    }
  });
});

describe('the flags of the read', () => {
  test('compact=0 and no compact both give the full records', async () => {
    const t = await seedTenant(service.app.provisioning);
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
    const t = await seedTenant(service.app.provisioning);
    const res = await registered(t.as.owner, `?compact=${value}`);
    expect([res.status, res.body]).toEqual([422, { errors: ['compact must be 0 or 1'] }]);
  });

  // force is the upload's flag; the spec lists it on the read too, where it has no effect.
  test('force=0 and force=1 are accepted on the read and change nothing', async () => {
    const t = await seedTenant(service.app.provisioning);
    await upload(t.as.owner, {
      contacts: [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Nobody', phone: STRANGER_PHONE },
      ],
    });
    const plain = await registered(t.as.owner, '?compact=1');
    for (const query of ['?compact=1&force=0', '?compact=1&force=1']) {
      const res = await registered(t.as.owner, query);
      expect([res.status, res.body]).toEqual([200, plain.body]);
    }
    expect(await bookOf(service, t.owner.id)).toHaveLength(2);
  });

  test.each(['2', 'yes'])('force=%s on the read is rejected with 422', async (value) => {
    const t = await seedTenant(service.app.provisioning);
    const res = await registered(t.as.owner, `?force=${value}`);
    expect([res.status, res.body]).toEqual([422, { errors: ['force must be 0 or 1'] }]);
  });
});

// The spec's flags are integers 0/1; GraphQL's force and destroy are Booleans
// (see test/graphql/users-and-address-book.test.ts), so true is refused here.
describe('the flags of the upload', () => {
  test('destroy "1" as text removes the phone as destroy 1 does', async () => {
    const t = await seedTenant(service.app.provisioning);
    await upload(t.as.owner, {
      contacts: [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Outsider', phone: OUTSIDER_PHONE },
      ],
    });
    const res = await upload(t.as.owner, {
      contacts: [
        { phone: MEMBER_PHONE, destroy: '1' },
        { name: 'Nobody', phone: STRANGER_PHONE, destroy: '0' },
      ],
    });
    expect(res.body).toEqual({ created: 1, updated: 0, deleted: 1 });
    expect(await bookOf(service, t.owner.id)).toEqual([
      { name: 'Outsider', phone: OUTSIDER_PHONE },
      { name: 'Nobody', phone: STRANGER_PHONE },
    ]);
  });

  test.each([2, 'yes', true])('destroy %p is not one of the 0/1 flags: 422 and nothing changes', async (destroy) => {
    const t = await seedTenant(service.app.provisioning);
    const res = await upload(t.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE, destroy }] });
    expect([res.status, res.body]).toEqual([422, { errors: ['destroy must be 0 or 1'] }]);
    expect(await contactCount(service, t)).toBe(0);
  });

  test.each([2, 'yes', true])('force %p in the body is rejected with 422 and nothing changes', async (force) => {
    const t = await seedTenant(service.app.provisioning);
    await upload(t.as.owner, { contacts: [{ name: 'Member', phone: MEMBER_PHONE }] });
    const res = await upload(t.as.owner, { force, contacts: [] });
    expect([res.status, res.body]).toEqual([422, { errors: ['force must be 0 or 1'] }]);
    expect(await contactCount(service, t)).toBe(1);
  });
});

describe('the body of the upload', () => {
  // GraphQL's coercion refuses a number for a String (400); the shim passes it
  // as missing, so only that contact is rejected, as QuickBlox does.
  test('fields of another JSON type than a string make the contact rejected, not the upload', async () => {
    const t = await seedTenant(service.app.provisioning);
    const res = await upload(t.as.owner, {
      contacts: [
        { name: 'Member', phone: MEMBER_PHONE },
        { name: 'Number', phone: 15550000002 },
        { name: ['x'], phone: OUTSIDER_PHONE },
      ],
    });
    expect(res.body).toEqual({ created: 1, updated: 0, deleted: 0, rejected: { '1': [PHONE_RULE], '2': [NAME_RULE] } });
  });

  // graphql-js reports a variable of the wrong type as a GraphQLError wrapping
  // another GraphQLError; the shim must answer 422, not 500.
  test('a contacts value that is not a list is rejected with 422', async () => {
    const t = await seedTenant(service.app.provisioning);
    for (const contacts of ['x', 42, true]) {
      const res = await service.rest('POST', '/address_book.json', { headers: t.as.owner, body: { contacts } });
      expect([contacts, res.status]).toEqual([contacts, 422]);
      expect(res.body.errors).toEqual([expect.any(String)]);
    }
    expect(await contactCount(service, t)).toBe(0);
  });

  test('a body without contacts is rejected with 422', async () => {
    const t = await seedTenant(service.app.provisioning);
    for (const options of [{ body: {} }, { body: { udid: 'A' } }, {}]) {
      const res = await service.rest('POST', '/address_book.json', { headers: t.as.owner, ...options });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([expect.any(String)]);
    }
    expect(await contactCount(service, t)).toBe(0);
  });

  test('a contact that is not an object makes the upload malformed as a whole: 422 and nothing is stored', async () => {
    const t = await seedTenant(service.app.provisioning);
    for (const stray of ['Member', 15550000002, null, [MEMBER_PHONE]]) {
      const res = await service.rest('POST', '/address_book.json', {
        headers: t.as.owner,
        body: { contacts: [{ name: 'Member', phone: MEMBER_PHONE }, stray] },
      });
      expect([stray, res.status]).toEqual([stray, 422]);
      expect(res.body.errors).toEqual([expect.any(String)]);
    }
    expect(await contactCount(service, t)).toBe(0);
  });

  // GraphQL input coercion turns a single object into a one-element list (see
  // test/graphql/users-and-address-book.test.ts); a JSON client means a list.
  test('a single contact object instead of a list is rejected with 422', async () => {
    const t = await seedTenant(service.app.provisioning);
    const res = await service.rest('POST', '/address_book.json', {
      headers: t.as.owner,
      body: { contacts: { name: 'Member', phone: MEMBER_PHONE } },
    });
    expect([res.status, res.body]).toEqual([422, { errors: ['contacts must be a list of {name, phone}'] }]);
    expect(await contactCount(service, t)).toBe(0);
  });

  test('a body that is not a JSON object is rejected with 400', async () => {
    const t = await seedTenant(service.app.provisioning);
    const res = await upload(t.as.owner, [{ name: 'Member', phone: MEMBER_PHONE }]);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.stringMatching(/^Malformed request body/)]);
    expect(await contactCount(service, t)).toBe(0);
  });

  test('malformed JSON is rejected with 400 "Malformed request body: invalid JSON"', async () => {
    const t = await seedTenant(service.app.provisioning);
    const res = await service.call('POST', '/address_book.json', {
      headers: { ...t.as.owner, 'content-type': 'application/json' },
      raw: `{"contacts": [{"name": "Member", "phone": "${MEMBER_PHONE}"}`,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: ['Malformed request body: invalid JSON'] });
    expect(await contactCount(service, t)).toBe(0);
  });
});
