// mutation deleteMessages(ids, force): what only GraphQL has. The spec's rules
// 1–4, the credentials, the ids and the limits are written once for both
// surfaces in test/behaviour/delete-messages.test.ts; here are the result
// type, the nullability of data on an error, the empty id list, and what
// GraphQL refuses before the resolver runs (force that is not a Boolean,
// malformed requests).
import { MESSAGES } from '../../src/errors';
import { graphqlSurface } from '../behaviour/surfaces';
import { type GraphQLResult, useService } from '../support/service';
import { expectUntouched, UNKNOWN } from '../support/chat';
import { seedTenant } from '../support/seed';

const service = useService();

const DELETE = /* GraphQL */ `
  mutation DeleteMessages($ids: [ID!]!, $force: Boolean) {
    deleteMessages(ids: $ids, force: $force) {
      successfullyDeleted
      notFound
    }
  }
`;

async function gql(ids: readonly string[], headers: Record<string, string>, force?: unknown): Promise<GraphQLResult> {
  const res = await service.graphql(DELETE, force === undefined ? { ids } : { ids, force }, headers);
  // No request a client can make is a server error.
  expect(res.status).toBeLessThan(500);
  return res;
}

const seed = () => seedTenant(service.app.provisioning);

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

  // The result is non-null, so a failing delete nulls the whole data.
  test('a refused delete answers HTTP 200 with data null and the error at deleteMessages', async () => {
    const t = await seed();
    const res = await gql(t.messageIds, t.as.member, true);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: null,
      errors: [expect.objectContaining({ message: MESSAGES.wrongPermissions, path: ['deleteMessages'], extensions: { code: 'WRONG_PERMISSIONS' } })],
    });
    await expectUntouched(service, t);
  });
});

describe('invalid input', () => {
  // REST's force is the spec's integer 0/1 (test/rest/delete-messages.test.ts);
  // here 1 and "1" are refused like any other non-Boolean.
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

  // Only GraphQL can send no id at all (REST's empty path is one empty id).
  test('an empty id list gets BAD_USER_INPUT and nothing changes', async () => {
    const t = await seed();
    const surface = graphqlSurface(service);
    surface.expectFailure(await surface.deleteMessages(t.as.owner, []), 'BAD_USER_INPUT', 'ids must name at least one message', 'ids');
    await expectUntouched(service, t);
  });
});
