// mutation deleteMessages(ids, force) — the same cases as
// test/rest/delete-messages.test.ts, through POST /graphql: the same outcome,
// errors as `errors[0].extensions.code`, and the same id partition as REST.
import { ERROR_STATUS, type ErrorCode } from '../../src/errors';
import { type GraphQLResult, type HttpResult, startService, type TestService } from '../support/service';
import { deletedForEveryone, expectUntouched, hides, history, memberDialog, sorted, UNKNOWN, unknownIds } from '../support/messages';
import { historyIds, seedTenant, type Tenant } from '../support/seed';

let service: TestService;
beforeAll(async () => {
  service = await startService();
});
afterAll(async () => {
  await service.close();
});

const DELETE = /* GraphQL */ `
  mutation DeleteMessages($ids: [ID!]!, $force: Boolean) {
    deleteMessages(ids: $ids, force: $force) {
      successfullyDeleted
      notFound
    }
  }
`;

async function gql(ids: readonly string[], headers: Record<string, string>, force?: unknown): Promise<GraphQLResult> {
  const variables: Record<string, unknown> = { ids };
  if (force !== undefined) variables.force = force;
  const res = await service.graphql(DELETE, variables, headers);
  // No request a client can make is a server error.
  expect(res.status).toBeLessThan(500);
  return res;
}

function expectResult(res: GraphQLResult, deleted: readonly string[], notFound: readonly string[]): void {
  const result = res.body.data?.deleteMessages;
  expect({
    status: res.status,
    errors: res.body.errors,
    result: result && { successfullyDeleted: sorted(result.successfullyDeleted), notFound: sorted(result.notFound) },
  }).toEqual({
    status: 200,
    errors: undefined,
    result: { successfullyDeleted: sorted(deleted), notFound: sorted(notFound) },
  });
}

/** A resolver's error: HTTP 200, no data, the code in extensions. */
function expectError(res: GraphQLResult, code: ErrorCode, message?: string): void {
  expect(res.status).toBe(200);
  expect(res.body.data ?? null).toBeNull();
  expect(res.body.errors).toHaveLength(1);
  expect(res.body.errors?.[0]?.extensions?.code).toBe(code);
  if (message !== undefined) expect(res.body.errors?.[0]?.message).toBe(message);
}

const seed = () => seedTenant(service.app.services);

describe('the result type', () => {
  test('deleteMessages returns successfullyDeleted and notFound as arrays of ids', async () => {
    const t = await seed();
    const res = await service.graphql(
      `mutation($ids: [ID!]!) { deleteMessages(ids: $ids) { __typename successfullyDeleted notFound } }`,
      { ids: [t.messageIds[0], UNKNOWN] },
      t.as.owner,
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: { deleteMessages: { __typename: 'DeleteMessagesResult', successfullyDeleted: [t.messageIds[0]], notFound: [UNKNOWN] } },
    });
  });

  test('both arrays are present, and empty rather than null, when nothing is found', async () => {
    const t = await seed();
    const res = await gql([UNKNOWN, 'xyz'], t.as.apiKey);
    expect(res.body.data?.deleteMessages).toEqual({ successfullyDeleted: [], notFound: expect.any(Array) });
    expect(sorted(res.body.data?.deleteMessages.notFound)).toEqual(sorted([UNKNOWN, 'xyz']));
    await expectUntouched(service, t);
  });
});

describe('rule 1: a user session without force hides messages from the caller only', () => {
  test('the owner hides a message from their own history while the member still sees it', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await gql([m0], t.as.owner), [m0], []);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([]);
    expect(await hides(service, t.messageIds)).toEqual([`${m0}:${t.owner.id}`]);
  });

  test('a member who does not own the dialog hides messages from their own history only', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await gql([m0, m2], t.as.member), [m0, m2], []);
    expect(await history(service, t.dialogId, t.member.id)).toEqual([m1]);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted(t.messageIds));
    const message = await service.db.prisma.message.findUnique({ where: { id: m0 } });
    expect(message?.deletedAt).toBeNull();
  });

  test('a user of the application outside the dialog gets every id back as not found and nothing changes', async () => {
    const t = await seed();
    expectResult(await gql(t.messageIds, t.as.outsider), [], t.messageIds);
    await expectUntouched(service, t);
  });

  test.each([false, null])('force: %p deletes for the caller only, like no force', async (force) => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await gql([m0], t.as.owner, force), [m0], []);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m1, m2]));
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([]);
  });
});

describe('rule 2: a user session with force deletes for everyone, and only the owner may', () => {
  test('the owner with force: true deletes messages from every history', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await gql([m0, m1], t.as.owner, true), [m0, m1], []);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual([m2]);
    expect(await history(service, t.dialogId, t.member.id)).toEqual([m2]);
    const message = await service.db.prisma.message.findUnique({ where: { id: m0 } });
    expect(message?.deletedAt).toBeInstanceOf(Date);
  });

  test('a member who does not own the dialog gets WRONG_PERMISSIONS with force and nothing changes', async () => {
    const t = await seed();
    expectError(await gql(t.messageIds, t.as.member, true), 'WRONG_PERMISSIONS', 'WrongPermissions');
    await expectUntouched(service, t);
  });

  test('a user of the application outside the dialog gets WRONG_PERMISSIONS with force and nothing changes', async () => {
    const t = await seed();
    expectError(await gql(t.messageIds, t.as.outsider, true), 'WRONG_PERMISSIONS', 'WrongPermissions');
    await expectUntouched(service, t);
  });

  test('force over messages of a dialog the caller owns and of one they do not is refused as a whole', async () => {
    const t = await seed();
    const own = await memberDialog(service, t);
    expectError(await gql([own.messageId, t.messageIds[0]!], t.as.member, true), 'WRONG_PERMISSIONS', 'WrongPermissions');
    await expectUntouched(service, t, [own.messageId]);
    expect(await history(service, own.dialogId, t.member.id)).toEqual([own.messageId]);
    expect(await history(service, own.dialogId, t.owner.id)).toEqual([own.messageId]);
  });

  test('a member who owns another dialog deletes its messages for everyone with force', async () => {
    const t = await seed();
    const own = await memberDialog(service, t);
    expectResult(await gql([own.messageId], t.as.member, true), [own.messageId], []);
    expect(await history(service, own.dialogId, t.owner.id)).toEqual([]);
    expect(await history(service, own.dialogId, t.member.id)).toEqual([]);
    await expectUntouched(service, t);
  });
});

describe('rule 3: an API key without On-Behalf-Of deletes for everyone within its application', () => {
  test.each([undefined, true, false, null])('an API key with force %p deletes messages from every history', async (force) => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await gql([m1], t.as.apiKey, force), [m1], []);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted([m0, m2]));
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted([m0, m2]));
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([m1]);
    expect(await hides(service, t.messageIds)).toEqual([]);
  });

  test("an API key gets WRONG_PERMISSIONS for another application's messages and nothing is deleted in either", async () => {
    const t = await seed();
    const other = await seed();
    expectError(await gql(other.messageIds, t.as.apiKey), 'WRONG_PERMISSIONS', 'WrongPermissions');
    await expectUntouched(service, other);
    await expectUntouched(service, t);
  });

  test("an API key request mixing its own and another application's messages deletes nothing", async () => {
    const t = await seed();
    const other = await seed();
    const ids = [t.messageIds[0]!, other.messageIds[0]!, t.messageIds[1]!];
    expectError(await gql(ids, t.as.apiKey, true), 'WRONG_PERMISSIONS', 'WrongPermissions');
    await expectUntouched(service, t);
    await expectUntouched(service, other);
  });
});

describe('rule 4: an API key with On-Behalf-Of acts as that user', () => {
  test("On-Behalf-Of hides messages from that user's history only", async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectResult(await gql([m0, m1], t.as.onBehalfOf(t.member.id)), [m0, m1], []);
    expect(await history(service, t.dialogId, t.member.id)).toEqual([m2]);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual(sorted(t.messageIds));
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([]);
  });

  test('On-Behalf-Of the owner with force deletes for everyone; a member with force gets WRONG_PERMISSIONS', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectError(await gql([m0], t.as.onBehalfOf(t.member.id), true), 'WRONG_PERMISSIONS', 'WrongPermissions');
    await expectUntouched(service, t);
    expectResult(await gql([m2], t.as.onBehalfOf(t.owner.id), true), [m2], []);
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted([m0, m1]));
  });

  test('On-Behalf-Of naming a user of another application gets FORBIDDEN and nothing changes', async () => {
    const t = await seed();
    const other = await seed();
    const res = await gql(t.messageIds, t.as.onBehalfOf(other.member.id));
    expectError(res, 'FORBIDDEN', 'On-Behalf-Of does not name a user of this application');
    await expectUntouched(service, t);
  });

  test.each(['abc', '0', '-1', '1.5', '99999999999'])('On-Behalf-Of %j, which is not a user id, gets FORBIDDEN', async (onBehalfOf) => {
    const t = await seed();
    const res = await gql(t.messageIds, { ...t.as.apiKey, 'On-Behalf-Of': onBehalfOf });
    expectError(res, 'FORBIDDEN', 'On-Behalf-Of does not name a user of this application');
    await expectUntouched(service, t);
  });
});

describe('credentials', () => {
  test('a user session token together with On-Behalf-Of gets BAD_REQUEST and nothing changes', async () => {
    const t = await seed();
    expectError(await gql(t.messageIds, { ...t.as.owner, 'On-Behalf-Of': String(t.member.id) }), 'BAD_REQUEST');
    await expectUntouched(service, t);
  });

  test('sending both SVC-Token and Authorization gets BAD_REQUEST and nothing changes', async () => {
    const t = await seed();
    expectError(await gql(t.messageIds, { ...t.as.owner, ...t.as.apiKey }), 'BAD_REQUEST');
    await expectUntouched(service, t);
  });

  test('a request without credentials gets UNAUTHENTICATED and nothing changes', async () => {
    const t = await seed();
    expectError(await gql(t.messageIds, {}), 'UNAUTHENTICATED');
    await expectUntouched(service, t);
  });

  test('an unknown session token gets UNAUTHENTICATED "Required session does not exist"', async () => {
    const t = await seed();
    expectError(await gql(t.messageIds, { 'SVC-Token': 'no-such-token' }), 'UNAUTHENTICATED', 'Required session does not exist');
    await expectUntouched(service, t);
  });

  test('an expired session gets UNAUTHENTICATED and nothing changes', async () => {
    const t = await seed();
    await service.db.prisma.session.updateMany({ where: { userId: t.owner.id }, data: { expiresAt: new Date(Date.now() - 60_000) } });
    expectError(await gql(t.messageIds, t.as.owner, true), 'UNAUTHENTICATED', 'Required session does not exist');
    await expectUntouched(service, t);
  });

  test('an unknown API key gets UNAUTHENTICATED and nothing changes', async () => {
    const t = await seed();
    expectError(await gql(t.messageIds, { Authorization: 'ApiKey not-a-key-of-any-application' }), 'UNAUTHENTICATED');
    await expectUntouched(service, t);
  });

  test.each(['Bearer x', 'ApiKey', 'apikey KEY'])('a malformed Authorization header %j gets UNAUTHENTICATED', async (authorization) => {
    const t = await seed();
    expectError(await gql(t.messageIds, { Authorization: authorization }), 'UNAUTHENTICATED');
    await expectUntouched(service, t);
  });

  test('an application session token gets FORBIDDEN "Forbidden. Need user." and nothing changes', async () => {
    const t = await seed();
    expectError(await gql(t.messageIds, t.as.app), 'FORBIDDEN', 'Forbidden. Need user.');
    expectError(await gql(t.messageIds, t.as.app, true), 'FORBIDDEN', 'Forbidden. Need user.');
    await expectUntouched(service, t);
  });

  test("a user token of another application cannot delete this tenant's messages: the ids are not found", async () => {
    const t = await seed();
    const other = await seed();
    expectResult(await gql(t.messageIds, other.as.owner), [], t.messageIds);
    await expectUntouched(service, t);
  });
});

describe('ids', () => {
  test('existing ids are reported as deleted, unknown and malformed ids as not found', async () => {
    const t = await seed();
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    const malformed = ['xyz', m0.toUpperCase(), `${m0}0`];
    expectResult(await gql([m0, UNKNOWN, ...malformed, m2], t.as.owner), [m0, m2], [UNKNOWN, ...malformed]);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual([m1]);
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
  });

  test('an id given twice is reported once', async () => {
    const t = await seed();
    const [m0] = t.messageIds as [string];
    expectResult(await gql([m0, UNKNOWN, m0, 'xyz', UNKNOWN, 'xyz'], t.as.owner, true), [m0], [UNKNOWN, 'xyz']);
    expect(await deletedForEveryone(service, t.messageIds)).toEqual([m0]);
  });

  test('deleting a message again after hiding it reports it as not found', async () => {
    const t = await seed();
    const [m0, m1] = t.messageIds as [string, string];
    expectResult(await gql([m0], t.as.member), [m0], []);
    expectResult(await gql([m0, m1], t.as.member), [m1], [m0]);
  });

  test('a message deleted for everyone is not found for any later delete', async () => {
    const t = await seed();
    const [m0] = t.messageIds as [string];
    expectResult(await gql([m0], t.as.apiKey), [m0], []);
    expectResult(await gql([m0], t.as.apiKey), [], [m0]);
    expectResult(await gql([m0], t.as.owner, true), [], [m0]);
    expectResult(await gql([m0], t.as.member), [], [m0]);
    expect(await hides(service, t.messageIds)).toEqual([]);
  });
});

describe('invalid input', () => {
  test.each([2, 'yes', 'true', 1, '1'])('force %j, which is not a Boolean, is rejected as BAD_USER_INPUT and nothing changes', async (force) => {
    const t = await seed();
    const res = await gql(t.messageIds, t.as.owner, force);
    // A variable of the wrong type fails before execution: Apollo answers 400.
    expect(res.status).toBe(400);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    await expectUntouched(service, t);
  });

  test('a literal force: 1 in the document fails validation and nothing changes', async () => {
    const t = await seed();
    const res = await service.graphql(
      `mutation($ids: [ID!]!) { deleteMessages(ids: $ids, force: 1) { successfullyDeleted notFound } }`,
      { ids: t.messageIds },
      t.as.owner,
    );
    expect(res.status).toBe(400);
    expect(res.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    await expectUntouched(service, t);
  });

  test('a malformed JSON request body gets 400 and nothing changes', async () => {
    const t = await seed();
    const res = await service.rest('POST', '/graphql', { headers: { ...t.as.owner, 'content-type': 'application/json' }, raw: '{bad' });
    expect(res.status).toBe(400);
    await expectUntouched(service, t);
  });

  test('an empty id list gets BAD_USER_INPUT and nothing changes', async () => {
    const t = await seed();
    expectError(await gql([], t.as.owner), 'BAD_USER_INPUT');
    await expectUntouched(service, t);
  });

  test('an empty id among others gets BAD_USER_INPUT and nothing changes', async () => {
    const t = await seed();
    expectError(await gql([t.messageIds[0]!, '', t.messageIds[1]!], t.as.apiKey), 'BAD_USER_INPUT');
    await expectUntouched(service, t);
  });

  test('1001 ids get BAD_USER_INPUT and nothing changes', async () => {
    const t = await seed();
    expectError(await gql([...t.messageIds, ...unknownIds(1001 - t.messageIds.length)], t.as.apiKey), 'BAD_USER_INPUT');
    await expectUntouched(service, t);
  });

  test('exactly 1000 ids are accepted', async () => {
    const t = await seed();
    const unknown = unknownIds(1000 - t.messageIds.length);
    expectResult(await gql([...t.messageIds, ...unknown], t.as.owner), t.messageIds, unknown);
    expect(await history(service, t.dialogId, t.owner.id)).toEqual([]);
    expect(await history(service, t.dialogId, t.member.id)).toEqual(sorted(t.messageIds));
  });
});

// The same request through both surfaces, on two identical tenants: the ids
// fall on the same side by position in the request, the histories end up the
// same, and an error is the same error.
describe('REST and GraphQL agree', () => {
  type Outcome =
    | { ok: true; partition: ('deleted' | 'notFound' | 'missing')[]; owner: number[]; member: number[] }
    | { ok: false; status: number; message: string };

  interface Scenario {
    name: string;
    headers(t: Tenant): Record<string, string>;
    force?: true;
    /** The request's ids, from the tenant's three messages. */
    ids(t: Tenant): string[];
    /** Done on both tenants before the request. */
    before?(t: Tenant): Promise<void>;
  }

  const [a, b, c] = [0, 1, 2];
  const pick = (t: Tenant, ...positions: (number | string)[]) =>
    positions.map((p) => (typeof p === 'number' ? t.messageIds[p]! : p));

  const scenarios: Scenario[] = [
    {
      name: 'a member hides messages, one of them already hidden, among unknown, malformed and repeated ids',
      headers: (t) => t.as.member,
      ids: (t) => pick(t, a, b, UNKNOWN, 'xyz', c, a),
      before: async (t) => void (await gql([t.messageIds[b]!], t.as.member)),
    },
    { name: 'an outsider deletes without force', headers: (t) => t.as.outsider, ids: (t) => pick(t, a, b, c) },
    { name: 'an outsider deletes with force', headers: (t) => t.as.outsider, force: true, ids: (t) => pick(t, a, b) },
    { name: 'the owner deletes for everyone', headers: (t) => t.as.owner, force: true, ids: (t) => pick(t, c, UNKNOWN, a) },
    { name: 'a member deletes with force', headers: (t) => t.as.member, force: true, ids: (t) => pick(t, a) },
    { name: 'an API key deletes for everyone', headers: (t) => t.as.apiKey, ids: (t) => pick(t, 'xyz', b, UNKNOWN) },
    {
      name: 'an API key acts on behalf of the member, after the owner deleted one message for everyone',
      headers: (t) => t.as.onBehalfOf(t.member.id),
      ids: (t) => pick(t, a, b, c),
      before: async (t) => void (await gql([t.messageIds[a]!], t.as.owner, true)),
    },
    { name: 'an application session token deletes', headers: (t) => t.as.app, ids: (t) => pick(t, a) },
    { name: 'a user token is sent with On-Behalf-Of', headers: (t) => ({ ...t.as.owner, 'On-Behalf-Of': String(t.member.id) }), ids: (t) => pick(t, a) },
    { name: 'an unknown token is sent', headers: () => ({ 'SVC-Token': 'nope' }), ids: (t) => pick(t, a) },
    { name: 'an empty id is sent', headers: (t) => t.as.owner, ids: (t) => pick(t, a, '') },
  ];

  async function outcome(t: Tenant, ids: string[], res: { ok: boolean; deleted: string[]; notFound: string[]; status: number; message: string }): Promise<Outcome> {
    if (!res.ok) return { ok: false, status: res.status, message: res.message };
    const positions = async (userId: number) => (await historyIds(service.app.services, t.dialogId, userId)).map((id) => t.messageIds.indexOf(id)).sort();
    return {
      ok: true,
      partition: ids.map((id) => (res.deleted.includes(id) ? 'deleted' : res.notFound.includes(id) ? 'notFound' : 'missing')),
      owner: await positions(t.owner.id),
      member: await positions(t.member.id),
    };
  }

  function fromRest(res: HttpResult) {
    return res.status === 200
      ? { ok: true, deleted: res.body.SuccessfullyDeleted.ids, notFound: res.body.NotFound.ids, status: 200, message: '' }
      : { ok: false, deleted: [], notFound: [], status: res.status, message: res.body?.errors?.[0] };
  }

  function fromGraphQL(res: GraphQLResult) {
    const error = res.body.errors?.[0];
    return error === undefined
      ? { ok: true, deleted: res.body.data.deleteMessages.successfullyDeleted, notFound: res.body.data.deleteMessages.notFound, status: 200, message: '' }
      : { ok: false, deleted: [], notFound: [], status: ERROR_STATUS[error.extensions?.code as ErrorCode], message: error.message };
  }

  test.each(scenarios.map((s) => [s.name, s] as const))('when %s, both surfaces give the same outcome', async (_name, scenario) => {
    const [restTenant, gqlTenant] = await Promise.all([seed(), seed()]);
    await scenario.before?.(restTenant);
    await scenario.before?.(gqlTenant);

    const restIds = scenario.ids(restTenant);
    const restRes = await service.call('DELETE', `/chat/Message/${restIds.join(',')}.json`, {
      headers: scenario.headers(restTenant),
      ...(scenario.force ? { body: { force: 1 } } : {}),
    });
    const gqlIds = scenario.ids(gqlTenant);
    const gqlRes = await gql(gqlIds, scenario.headers(gqlTenant), scenario.force);

    const viaRest = await outcome(restTenant, restIds, fromRest(restRes));
    const viaGraphQL = await outcome(gqlTenant, gqlIds, fromGraphQL(gqlRes));
    expect(viaGraphQL).toEqual(viaRest);
    if (viaRest.ok) expect(viaRest.partition).not.toContain('missing');
  });
});
