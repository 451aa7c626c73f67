// DELETE /chat/Message/{ids}.json: what only the REST path has. The spec's
// rules 1–4, the credentials, the ids and the limits are written once for both
// surfaces in test/behaviour/delete-messages.test.ts; here are the response's
// exact JSON, the force flag as REST takes it (0/1 in a JSON or form body or
// the query string, where GraphQL takes a Boolean), the body's parsing and
// the path itself (its empty list, its .json suffix).
import { type HttpResult, type RequestOptions, useService } from '../support/service';
import { deletedForEveryone, expectUntouched, history, sorted, UNKNOWN } from '../support/chat';
import { seedTenant } from '../support/seed';

const service = useService();

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

/** A success: 200 and both id lists (their order is not specified). */
function expectResult(res: HttpResult, deleted: readonly string[], notFound: readonly string[]): void {
  expect(res.status).toBe(200);
  expect({ deleted: sorted(res.body.SuccessfullyDeleted.ids), notFound: sorted(res.body.NotFound.ids) }).toEqual({
    deleted: sorted(deleted),
    notFound: sorted(notFound),
  });
}

/** The error body of the delete path: {"errors": ["<message>"]}. */
function expectError(res: HttpResult, status: number, message: string | RegExp = /./): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { errors: [typeof message === 'string' ? message : expect.stringMatching(message)] },
  });
}

const seed = () => seedTenant(service.app.provisioning);

describe('the response', () => {
  test('is JSON with exactly the keys SuccessfullyDeleted and NotFound, each holding only ids', async () => {
    const t = await seed();
    const res = await del([t.messageIds[0]!, UNKNOWN], t.as.owner);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['NotFound', 'SuccessfullyDeleted']);
    expect(res.body).toEqual({ SuccessfullyDeleted: { ids: [t.messageIds[0]] }, NotFound: { ids: [UNKNOWN] } });
  });

  test('an error is a list of messages, as the spec shows it for this path', async () => {
    const t = await seed();
    const res = await del(t.messageIds, t.as.member, { body: { force: 1 } });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({ errors: ['WrongPermissions'] });
  });
});

// The shared suite sends force as a JSON number (1, 0, null); these are the
// other ways REST takes it.
describe('the force flag', () => {
  test.each([
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
    ['a JSON body {}', { body: {} }],
    ['a form body force=0', { body: { force: '0' }, form: true }],
    ['the query string ?force=0', { query: 'force=0' }],
    ['a JSON body {"force":0} with ?force=1 (the body wins)', { body: { force: 0 }, query: 'force=1' }],
    ['an empty body with Content-Type: application/json', { raw: '', headers: { 'content-type': 'application/json' } }],
    ['a blank body with Content-Type: application/json', { raw: '  \n', headers: { 'content-type': 'application/json' } }],
  ] as [string, DeleteOptions & { headers?: Record<string, string> }][])('%s deletes for the caller only', async (_how, options) => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    const { headers, ...rest } = options;
    expectResult(await del([m0], { ...t.as.owner, ...headers }, rest), [m0], []);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([]);
  });

  // GraphQL's force is a Boolean (its coercion refuses these with 400, see
  // test/graphql/delete-messages.test.ts); REST's is the spec's integer 0/1,
  // so true and "true" are refused here.
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
    expectError(res, 400, /^Malformed request body/);
    await expectUntouched(service, t);
  });

  test('a JSON body that is not an object gets 400 and nothing changes', async () => {
    const t = await seed();
    for (const raw of ['[1]', '1', '"force"']) {
      const res = await del(t.messageIds, { ...t.as.owner, 'content-type': 'application/json' }, { raw });
      expectError(res, 400, /^Malformed request body/);
    }
    await expectUntouched(service, t);
  });
});

describe('the id list in the path', () => {
  // The path cannot name no id: "/chat/Message/.json" is one empty id (GraphQL's
  // empty list is refused with its own message, see test/graphql).
  test('an empty id list is one empty id: 422 and nothing changes', async () => {
    const t = await seed();
    expectError(await del([], t.as.owner), 422, 'ids must not be empty');
    await expectUntouched(service, t);
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
