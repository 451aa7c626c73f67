// What the chat reads cost in statements (issues 32 and 33): a history page
// answers its senders' ids from the messages it read, and a live event's
// message is read once for all the subscribers it reaches at once. The
// answers themselves are tested in test/graphql/chat.test.ts and
// test/live/added.test.ts; here, that they are also right when shared.
import { toGlobalId } from '../../src/services/global-id';
import { useService } from '../support/service';
import { seedTenant } from '../support/seed';

// Credentials cached and session writes held for longer than any test here:
// what is counted is the request's own statements.
const service = useService({ auth: { cacheMs: 600_000, flushMs: 60_000 } });

async function statementsOf(run: () => Promise<unknown>): Promise<number> {
  const before = service.db.statementCount();
  await run();
  return service.db.statementCount() - before;
}

const page = (sender: string) => /* GraphQL */ `
  query ($id: ID!) { node(id: $id) { ... on Dialog { messages(last: 3) { edges { node { body sender { ${sender} } } } } } } }
`;

test("a history page is one statement, the dialog and its page together; its senders' ids need no other, their other fields one", async () => {
  const t = await seedTenant(service.app.provisioning);
  const id = toGlobalId('Dialog', t.dialogId);
  const read = async (sender: string) => {
    const res = await service.graphql(page(sender), { id }, t.as.member);
    expect(res.body.errors).toBeUndefined();
    return res.body.data.node.messages.edges as { node: { body: string; sender: Record<string, unknown> } }[];
  };
  await read('databaseId'); // credentials now cached
  expect(await statementsOf(() => read('id databaseId'))).toBe(1);
  expect(await statementsOf(() => read('databaseId login'))).toBe(2);
  expect((await read('databaseId login')).map((e) => e.node.sender)).toEqual(Array(3).fill({ databaseId: t.owner.id, login: 'owner' }));
  expect((await read('databaseId')).map((e) => e.node.body)).toEqual(['one', 'two', 'three']);
});

test('a page read with its dialog answers only the arguments it was read for: two pages of one dialog, each right', async () => {
  const t = await seedTenant(service.app.provisioning);
  const TWO = /* GraphQL */ `
    query ($id: ID!, $n: Int!) {
      node(id: $id) {
        ... on Dialog {
          newest: messages(last: $n) {
            edges {
              node {
                body
              }
            }
            pageInfo {
              hasPreviousPage
              hasNextPage
            }
          }
        }
        ... on Node {
          ... on Dialog {
            oldest: messages(first: 1) {
              edges {
                node {
                  body
                }
              }
              pageInfo {
                hasPreviousPage
                hasNextPage
              }
            }
          }
        }
      }
    }
  `;
  const res = await service.graphql(TWO, { id: toGlobalId('Dialog', t.dialogId), n: 2 }, t.as.member);
  expect(res.body).toEqual({
    data: {
      node: {
        newest: { edges: [{ node: { body: 'two' } }, { node: { body: 'three' } }], pageInfo: { hasPreviousPage: true, hasNextPage: false } },
        oldest: { edges: [{ node: { body: 'one' } }], pageInfo: { hasPreviousPage: false, hasNextPage: true } },
      },
    },
  });
  // Another application's dialog is null, its page unread; a bad argument is the page's own error.
  const other = await seedTenant(service.app.provisioning);
  const outsider = await service.graphql(TWO, { id: toGlobalId('Dialog', t.dialogId), n: 2 }, other.as.member);
  expect(outsider.body).toEqual({ data: { node: null } });
  const bad = await service.graphql(TWO, { id: toGlobalId('Dialog', t.dialogId), n: 0 }, t.as.member);
  expect(bad.body.errors).toEqual([
    expect.objectContaining({ path: ['node', 'newest'], extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'last' }) }),
  ]);
});

test("a live event's message is read once for the deliveries asking together, each seeing its own body", async () => {
  const t = await seedTenant(service.app.provisioning);
  const [, hidden] = t.messageIds;
  // Hidden by the member alone: the owner still sees its text.
  expect((await service.call('DELETE', `/chat/Message/${hidden}.json`, { headers: t.as.member })).status).toBe(200);
  const chat = service.app.services.chat;
  let answers: Awaited<ReturnType<typeof chat.asDelivered>>[] = [];
  const statements = await statementsOf(async () => {
    answers = await Promise.all([t.owner.id, t.member.id, t.owner.id, t.member.id, t.owner.id].map((user) => chat.asDelivered(t.applicationId, user, hidden!)));
  });
  expect(statements).toBe(1);
  expect(answers.map((m) => m?.body)).toEqual(['two', null, 'two', null, 'two']);
  // Asked again later, it is read again: a delivery never sees an answer older than its own request.
  expect(await statementsOf(() => chat.asDelivered(t.applicationId, t.owner.id, hidden!))).toBe(1);
  // Another application's message is no message.
  expect(await chat.asDelivered(t.applicationId + 1_000_000, t.owner.id, hidden!)).toBeUndefined();
});
