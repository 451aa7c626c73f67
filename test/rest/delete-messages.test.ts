// DELETE /chat/Message/{ids}.json — the spec's "Delete messages" rules 1–4,
// its credentials, id handling, the force flag and the limits, checked
// against what the database holds after each call.
import { type HttpResult, type RequestOptions, startService, type TestService } from '../support/service';
import { deletedForEveryone, expectUntouched, hides, history, memberDialog, sorted, UNKNOWN, unknownIds } from '../support/messages';
import { seedTenant } from '../support/seed';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => {
  await service.close();
});

interface DeleteOptions extends Omit<RequestOptions, 'headers'> {
  /** Query string, without the "?". */
  query?: string;
}

async function del(ids: readonly string[], headers: Record<string, string>, options: DeleteOptions = {}): Promise<HttpResult> {
  const { query, ...rest } = options;
  const path = `/chat/Message/${ids.join(',')}.json${query === undefined ? '' : `?${query}`}`;
  // No request a client can make is a server error.
  return service.call('DELETE', path, { ...rest, headers });
}

/** The body with its id arrays sorted (their order is not specified). */
function normalized(body: any): unknown {
  if (body === null || typeof body !== 'object') return body;
  const sortIds = (part: any) => (part && Array.isArray(part.ids) ? { ...part, ids: sorted(part.ids) } : part);
  const out = { ...body };
  if ('SuccessfullyDeleted' in out) out.SuccessfullyDeleted = sortIds(out.SuccessfullyDeleted);
  if ('NotFound' in out) out.NotFound = sortIds(out.NotFound);
  return out;
}

function expectResult(res: HttpResult, deleted: readonly string[], notFound: readonly string[]): void {
  expect({ status: res.status, body: normalized(res.body) }).toEqual({
    status: 200,
    body: { SuccessfullyDeleted: { ids: sorted(deleted) }, NotFound: { ids: sorted(notFound) } },
  });
}

function expectError(res: HttpResult, status: number, message?: string): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ errors: [expect.any(String)] });
  if (message !== undefined) expect(res.body.errors).toEqual([message]);
}

const seed = () => seedTenant(service.app.services);

describe('rule 1: a user session without force hides messages from the caller only', () => {
  test('the owner hides a message from their own history while the member still sees it', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await del([m0], t.as.owner), [m0], []);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([]);
    expect(await hides(service, t.messageIds)).toEqual([`${m0}:${t.owner.id}`]);
  });

  test('a member who does not own the dialog hides messages from their own history only', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await del([m0, m2], t.as.member), [m0, m2], []);
    expect(await history(service, t.dialogId, t.member.id)).toEqual([m1]);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted(t.messageIds));
    const message = await service.db.prisma.message.findUnique({ where: { id: m0 } });
    expect(message?.deletedAt).toBeNull();
    expect(await hides(service, t.messageIds)).toEqual(sorted([`${m0}:${t.member.id}`, `${m2}:${t.member.id}`]));
  });

  test('a user of the application outside the dialog gets every id back as not found and nothing changes', async () => {
    const t = await seed();
    expectResult(await del(t.messageIds, t.as.outsider), [], t.messageIds);
    await expectUntouched(service, t);
  });

  test('both occupants can hide the same message, each from their own history', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await del([m0], t.as.member), [m0], []);
    expectResult(await del([m0], t.as.owner), [m0], []);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted([m1, m2]));
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([]);
  });
});

describe('rule 2: a user session with force=1 deletes for everyone, and only the owner may', () => {
  test('the owner with force=1 deletes messages from every history', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await del([m0, m1], t.as.owner, { body: { force: 1 } }), [m0, m1], []);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual([m2]);
    expect(await history(service, t.dialogId, t.member.id)).toEqual([m2]);
    const message = await service.db.prisma.message.findUnique({ where: { id: m0 } });
    expect(message?.deletedAt).toBeInstanceOf(Date);
    expect(await deletedForEveryone(service, t.messageIds)).toEqual(sorted([m0, m1]));
  });

  test('a member who does not own the dialog gets 403 WrongPermissions with force=1 and nothing changes', async () => {
    const t = await seed();
    const res = await del(t.messageIds, t.as.member, { body: { force: 1 } });
    expectError(res, 403, 'WrongPermissions');
    await expectUntouched(service, t);
  });

  test('a user of the application outside the dialog gets 403 WrongPermissions with force=1, as a non-owner, and nothing changes', async () => {
    const t = await seed();
    expectError(await del(t.messageIds, t.as.outsider, { body: { force: 1 } }), 403, 'WrongPermissions');
    await expectUntouched(service, t);
  });

  test('force=1 over messages of a dialog the caller owns and of one they do not is refused as a whole', async () => {
    const t = await seed();
    const own = await memberDialog(service, t);
    const res = await del([own.messageId, t.messageIds[0]!], t.as.member, { body: { force: 1 } });
    expectError(res, 403, 'WrongPermissions');
    await expectUntouched(service, t, [own.messageId]);
    expect(await history(service, own.dialogId, t.member.id)).toEqual([own.messageId]);
    expect(await history(service, own.dialogId, t.owner.id)).toEqual([own.messageId]);
  });

  test('a member who owns another dialog deletes its messages for everyone with force=1', async () => {
    const t = await seed();
    const own = await memberDialog(service, t);
    expectResult(await del([own.messageId], t.as.member, { body: { force: 1 } }), [own.messageId], []);
    expect(await history(service, own.dialogId, t.member.id)).toEqual([]);
    expect(await history(service, own.dialogId, t.owner.id)).toEqual([]);
    expect(await deletedForEveryone(service, [own.messageId])).toEqual([own.messageId]);
    await expectUntouched(service, t);
  });

  test('the owner with force=1 deletes for everyone a message the member had already hidden', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await del([m0], t.as.member), [m0], []);
    expectResult(await del([m0], t.as.owner, { body: { force: 1 } }), [m0], []);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted([m1, m2]));
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([m0]);
  });
});

describe('rule 3: an API key without On-Behalf-Of deletes for everyone within its application', () => {
  test('an API key without force deletes messages from every history', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await del([m1], t.as.apiKey), [m1], []);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m0, m2]));
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted([m0, m2]));
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([m1]);
    expect(await hides(service, t.messageIds)).toEqual([]);
  });

  test('an API key with force=1 gives the same result as without', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await del([m1], t.as.apiKey, { body: { force: 1 } }), [m1], []);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m0, m2]));
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted([m0, m2]));
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([m1]);
  });

  test('an API key with force=0 still deletes for everyone', async () => {
    const t = await seed();
    expectResult(await del(t.messageIds, t.as.apiKey, { body: { force: 0 } }), t.messageIds, []);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual([]);
    expect(await history(service, t.dialogId, t.member.id)).toEqual([]);
  });

  test("an API key gets 403 WrongPermissions for another application's messages and nothing is deleted in either", async () => {
    const t = await seed();
    const other = await seed();
    const res = await del(other.messageIds, t.as.apiKey);
    expectError(res, 403, 'WrongPermissions');
    await expectUntouched(service, other);
    await expectUntouched(service, t);
  });

  test("an API key request mixing its own and another application's messages deletes nothing", async () => {
    const t = await seed();
    const other = await seed();
    const res = await del([t.messageIds[0]!, other.messageIds[0]!, t.messageIds[1]!], t.as.apiKey, { body: { force: 1 } });
    expectError(res, 403, 'WrongPermissions');
    await expectUntouched(service, t);
    await expectUntouched(service, other);
  });
});

describe('rule 4: an API key with On-Behalf-Of acts as that user', () => {
  test("On-Behalf-Of hides messages from that user's history only", async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await del([m0, m1], t.as.onBehalfOf(t.member.id)), [m0, m1], []);
    expect(await history(service, t.dialogId, t.member.id)).toEqual([m2]);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted(t.messageIds));
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([]);
    expect(await hides(service, t.messageIds)).toEqual(sorted([`${m0}:${t.member.id}`, `${m1}:${t.member.id}`]));
  });

  test('On-Behalf-Of a user outside the dialog gets the ids back as not found and nothing changes', async () => {
    const t = await seed();
    expectResult(await del(t.messageIds, t.as.onBehalfOf(t.outsider.id)), [], t.messageIds);
    await expectUntouched(service, t);
  });

  test('On-Behalf-Of the owner with force=1 deletes for everyone', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await del([m2], t.as.onBehalfOf(t.owner.id), { body: { force: 1 } }), [m2], []);
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted([m0, m1]));
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([m2]);
  });

  test('On-Behalf-Of a member who does not own the dialog with force=1 gets 403 WrongPermissions and nothing changes', async () => {
    const t = await seed();
    expectError(await del(t.messageIds, t.as.onBehalfOf(t.member.id), { body: { force: 1 } }), 403, 'WrongPermissions');
    await expectUntouched(service, t);
  });

  test('On-Behalf-Of naming a user of another application gets 403 and nothing changes', async () => {
    const t = await seed();
    const other = await seed();
    const res = await del(t.messageIds, t.as.onBehalfOf(other.member.id));
    expectError(res, 403, 'On-Behalf-Of does not name a user of this application');
    await expectUntouched(service, t);
  });

  test.each(['abc', '0', '-1', '1.5', '1e3', ' 1', '99999999999'])(
    'On-Behalf-Of %j, which is not a user id, gets 403 and nothing changes',
    async (onBehalfOf) => {
      const t = await seed();
      const res = await del(t.messageIds, { ...t.as.apiKey, 'On-Behalf-Of': onBehalfOf });
      expectError(res, 403, 'On-Behalf-Of does not name a user of this application');
      await expectUntouched(service, t);
    },
  );
});

describe('credentials', () => {
  test('a user session token together with On-Behalf-Of is a bad request and nothing changes', async () => {
    const t = await seed();
    const res = await del(t.messageIds, { ...t.as.owner, 'On-Behalf-Of': String(t.member.id) });
    expectError(res, 400);
    await expectUntouched(service, t);
  });

  test('sending both SVC-Token and Authorization is a bad request and nothing changes', async () => {
    const t = await seed();
    const res = await del(t.messageIds, { ...t.as.owner, ...t.as.apiKey });
    expectError(res, 400);
    await expectUntouched(service, t);
  });

  test('a request without credentials gets 401 and nothing changes', async () => {
    const t = await seed();
    expectError(await del(t.messageIds, {}), 401);
    await expectUntouched(service, t);
  });

  test('an unknown session token gets 401 "Required session does not exist"', async () => {
    const t = await seed();
    const res = await del(t.messageIds, { 'SVC-Token': 'no-such-token' });
    expectError(res, 401, 'Required session does not exist');
    await expectUntouched(service, t);
  });

  test('an expired session gets 401 and nothing changes', async () => {
    const t = await seed();
    await service.db.prisma.session.updateMany({ where: { userId: t.owner.id }, data: { expiresAt: new Date(Date.now() - 60_000) } });
    const res = await del(t.messageIds, t.as.owner, { body: { force: 1 } });
    expectError(res, 401, 'Required session does not exist');
    await expectUntouched(service, t);
  });

  test('an unknown API key gets 401 and nothing changes', async () => {
    const t = await seed();
    expectError(await del(t.messageIds, { Authorization: 'ApiKey not-a-key-of-any-application' }), 401);
    await expectUntouched(service, t);
  });

  test.each(['Bearer x', 'ApiKey', 'ApiKey ', 'apikey KEY', 'Basic dXNlcjpwYXNz'])(
    'a malformed Authorization header %j gets 401 and nothing changes',
    async (authorization) => {
      const t = await seed();
      expectError(await del(t.messageIds, { Authorization: authorization }), 401);
      await expectUntouched(service, t);
    },
  );

  test('the API key in a malformed Authorization header (wrong scheme) is not accepted', async () => {
    const t = await seed();
    expectError(await del(t.messageIds, { Authorization: `Bearer ${t.apiKey}` }), 401);
    await expectUntouched(service, t);
  });

  test('an application session token gets 403 "Forbidden. Need user." and nothing changes', async () => {
    const t = await seed();
    for (const body of [undefined, { force: 1 }]) {
      const res = await del(t.messageIds, t.as.app, body === undefined ? {} : { body });
      expectError(res, 403, 'Forbidden. Need user.');
    }
    await expectUntouched(service, t);
  });

  test("a user token of another application cannot delete this tenant's messages: the ids are not found", async () => {
    const t = await seed();
    const other = await seed();
    expectResult(await del(t.messageIds, other.as.owner), [], t.messageIds);
    expectResult(await del(t.messageIds, other.as.owner, { body: { force: 1 } }), [], t.messageIds);
    await expectUntouched(service, t);
  });
});

describe('ids', () => {
  test('existing ids are reported as deleted, unknown and malformed ids as not found', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    const malformed = ['xyz', m0.toUpperCase(), `${m0}0`, m0.slice(1)];
    const res = await del([m0, UNKNOWN, ...malformed, m2], t.as.owner);
    expectResult(res, [m0, m2], [UNKNOWN, ...malformed]);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual([m1]);
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
  });

  test('only unknown ids give 200 with every id under NotFound and an empty SuccessfullyDeleted', async () => {
    const t = await seed();
    const res = await del([UNKNOWN, 'xyz'], t.as.apiKey);
    expect(res.status).toBe(200);
    expect(normalized(res.body)).toEqual({ SuccessfullyDeleted: { ids: [] }, NotFound: { ids: sorted([UNKNOWN, 'xyz']) } });
    await expectUntouched(service, t);
  });

  test('the response has exactly the keys SuccessfullyDeleted and NotFound, each holding only ids', async () => {
    const t = await seed();
    const res = await del([t.messageIds[0]!, UNKNOWN], t.as.owner);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['NotFound', 'SuccessfullyDeleted']);
    expect(Object.keys(res.body.SuccessfullyDeleted)).toEqual(['ids']);
    expect(Object.keys(res.body.NotFound)).toEqual(['ids']);
    expect(res.body).toEqual({ SuccessfullyDeleted: { ids: [t.messageIds[0]] }, NotFound: { ids: [UNKNOWN] } });
  });

  test('an id given twice is reported once', async () => {
    const t = await seed();
    const [m0] = t.messageIds as [string];
    const res = await del([m0, UNKNOWN, m0, 'xyz', UNKNOWN, 'xyz'], t.as.owner, { body: { force: 1 } });
    expectResult(res, [m0], [UNKNOWN, 'xyz']);
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([m0]);
  });

  test('deleting a message again after hiding it reports it as not found', async () => {
    const t = await seed();
    const [m0, m1] = t.messageIds as [string, string];
    expectResult(await del([m0], t.as.member), [m0], []);
    expectResult(await del([m0, m1], t.as.member), [m1], [m0]);
    expect(await hides(service, t.messageIds)).toEqual(sorted([`${m0}:${t.member.id}`, `${m1}:${t.member.id}`]));
  });

  test('a message deleted for everyone is not found for any later delete', async () => {
    const t = await seed();
    const [m0] = t.messageIds as [string];
    expectResult(await del([m0], t.as.owner, { body: { force: 1 } }), [m0], []);
    expectResult(await del([m0], t.as.owner, { body: { force: 1 } }), [], [m0]);
    expectResult(await del([m0], t.as.owner), [], [m0]);
    expectResult(await del([m0], t.as.member), [], [m0]);
    expectResult(await del([m0], t.as.apiKey), [], [m0]);
    expectResult(await del([m0], t.as.onBehalfOf(t.member.id)), [], [m0]);
    expect(await hides(service, t.messageIds)).toEqual([]);
  });
});

describe('the force flag', () => {
  test.each([
    ['a JSON body {"force":1}', { body: { force: 1 } }],
    ['a JSON body {"force":"1"}', { body: { force: '1' } }],
    ['a form body force=1', { body: { force: '1' }, form: true }],
    ['the query string ?force=1', { query: 'force=1' }],
  ] as [string, DeleteOptions][])('force=1 in %s makes the owner delete for everyone', async (_how, options) => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await del([m0], t.as.owner, options), [m0], []);
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted([m1, m2]));
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([m0]);
  });

  test.each([
    ['no body', {}],
    ['a JSON body {"force":0}', { body: { force: 0 } }],
    ['a JSON body {}', { body: {} }],
    ['a JSON body {"force":null}', { body: { force: null } }],
    ['a form body force=0', { body: { force: '0' }, form: true }],
    ['the query string ?force=0', { query: 'force=0' }],
    ['an empty body with Content-Type: application/json', { raw: '', headers: { 'content-type': 'application/json' } }],
    ['a blank body with Content-Type: application/json', { raw: '  \n', headers: { 'content-type': 'application/json' } }],
  ] as [string, DeleteOptions & { headers?: Record<string, string> }][])(
    '%s deletes for the caller only',
    async (_how, options) => {
      const t = await seed();
      const [m0, m1, m2] = t.messageIds as [string, string, string];
      const { headers, ...rest } = options;
      expectResult(await del([m0], { ...t.as.owner, ...headers }, rest), [m0], []);
      expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
      expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
      expect(await deletedForEveryone(service, t.messageIds)).toEqual([]);
    },
  );

  test.each([
    ['a JSON body {"force":2}', { body: { force: 2 } }],
    ['a JSON body {"force":"yes"}', { body: { force: 'yes' } }],
    ['a JSON body {"force":"true"}', { body: { force: 'true' } }],
    ['a JSON body {"force":true}', { body: { force: true } }],
    ['a JSON body {"force":-1}', { body: { force: -1 } }],
    ['a JSON body {"force":""}', { body: { force: '' } }],
    ['a JSON body {"force":[1]}', { body: { force: [1] } }],
    ['a form body force=2', { body: { force: '2' }, form: true }],
    ['a form body force=true', { body: { force: 'true' }, form: true }],
    ['the query string ?force=2', { query: 'force=2' }],
    ['the query string ?force=yes', { query: 'force=yes' }],
    ['the query string ?force=true', { query: 'force=true' }],
  ] as [string, DeleteOptions][])('%s gets 422 "force must be 0 or 1" and nothing changes', async (_how, options) => {
    const t = await seed();
    expectError(await del(t.messageIds, t.as.owner, options), 422, 'force must be 0 or 1');
    await expectUntouched(service, t);
  });

  test('a malformed JSON body gets 400 and nothing changes', async () => {
    const t = await seed();
    const res = await del(t.messageIds, { ...t.as.owner, 'content-type': 'application/json' }, { raw: '{bad' });
    expectError(res, 400);
    await expectUntouched(service, t);
  });

  test('a JSON body that is not an object gets 400 and nothing changes', async () => {
    const t = await seed();
    for (const raw of ['[1]', '1', '"force"']) {
      const res = await del(t.messageIds, { ...t.as.owner, 'content-type': 'application/json' }, { raw });
      expectError(res, 400);
    }
    await expectUntouched(service, t);
  });
});

describe('the id list in the path', () => {
  test('an empty id list gets 422 and nothing changes', async () => {
    const t = await seed();
    expectError(await del([], t.as.owner), 422);
    await expectUntouched(service, t);
  });

  test.each([
    ['an empty element between ids', (ids: string[]) => [ids[0]!, '', ids[1]!]],
    ['a trailing comma', (ids: string[]) => [ids[0]!, '']],
    ['a leading comma', (ids: string[]) => ['', ids[0]!]],
  ])('%s gets 422 and nothing changes', async (_how, build) => {
    const t = await seed();
    expectError(await del(build(t.messageIds), t.as.apiKey), 422);
    await expectUntouched(service, t);
  });

  test('1001 ids get 422 and nothing changes', async () => {
    const t = await seed();
    const ids = [...t.messageIds, ...unknownIds(1001 - t.messageIds.length)];
    expect(ids).toHaveLength(1001);
    expectError(await del(ids, t.as.apiKey), 422);
    await expectUntouched(service, t);
  });

  test('exactly 1000 ids are accepted', async () => {
    const t = await seed();
    const unknown = unknownIds(1000 - t.messageIds.length);
    const res = await del([...t.messageIds, ...unknown], t.as.owner);
    expectResult(res, t.messageIds, unknown);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual([]);
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
  });

  test('a path without the .json suffix gets 404 and nothing changes', async () => {
    const t = await seed();
    for (const path of [`/chat/Message/${t.messageIds.join(',')}`, `/chat/Message/${t.messageIds[0]}.xml`]) {
      const res = await service.rest('DELETE', path, { headers: t.as.apiKey });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ errors: [expect.any(String)] });
    }
    await expectUntouched(service, t);
  });
});
