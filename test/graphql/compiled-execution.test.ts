// /graphql runs a query on graphql-js the first time it is seen and compiled
// (graphql-jit) from then on; mutations always on graphql-js
// (src/graphql/execute.ts). Whichever ran
// it, the answer must be the same to the byte: each document below is sent
// three times and every answer compared with the first, while the execution
// counters say which executor answered.
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';

let t: Tenant;
const service = useService();
beforeAll(async () => {
  t = await seedTenant(service.app.provisioning);
});

const LOOKUP = `query Lookup($id: Int!) {
  userByExternalId(externalUserId: $id) { id login fullName email phone externalUserId createdAt customData userTags }
}`;

/** Sends the same request three times; returns the answers (status and exact body). */
async function thrice(query: string, variables: Record<string, unknown> | undefined, headers: Record<string, string>) {
  const answers: { status: number; text: string }[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await service.graphql(query, variables, headers);
    answers.push({ status: res.status, text: res.text });
  }
  return answers;
}

const cases: [string, () => [string, Record<string, unknown> | undefined, Record<string, string>], 'compiled' | 'graphql-js'][] = [
  ['a user found', () => [LOOKUP, { id: 102 }, t.as.owner], 'compiled'],
  ['a user not found (a resolver error: NOT_FOUND with its path)', () => [LOOKUP, { id: 999_999 }, t.as.owner], 'compiled'],
  ['a credential refused (UNAUTHENTICATED)', () => [LOOKUP, { id: 102 }, {}], 'compiled'],
  ['an invalid argument (BAD_USER_INPUT naming the field)', () => [LOOKUP, { id: 0 }, t.as.owner], 'compiled'],
  ["a variable of the wrong type (400 BAD_USER_INPUT, graphql-js's message)", () => [LOOKUP, { id: 'x' }, t.as.owner], 'graphql-js'],
  ['a missing required variable', () => [LOOKUP, {}, t.as.owner], 'graphql-js'],
  ['an int beyond 32 bits', () => [LOOKUP, { id: 2 ** 31 }, t.as.owner], 'graphql-js'],
  [
    'a mutation with a rule error (FORBIDDEN on an application session; mutations never compile)',
    () => ['mutation ($ids: [ID!]!) { deleteMessages(ids: $ids) { successfullyDeleted notFound } }', { ids: [t.messageIds[0]] }, t.as.app],
    'graphql-js',
  ],
  ['introspection (left to graphql-js)', () => ['{ __schema { queryType { name } } __typename }', undefined, {}], 'graphql-js'],
  [
    // The same document with no operation name compiles; an empty name must
    // still get graphql-js's answer (it names no operation), not the compiled one.
    'an empty operation name after the same document ran compiled',
    () => ['query E($id: Int!) { userByExternalId(externalUserId: $id) { login } }', { id: 101 }, t.as.owner],
    'graphql-js',
  ],
  [
    'two operations, one chosen by name',
    () => [`query A { __typename } query B($id: Int!) { userByExternalId(externalUserId: $id) { login } }`, { id: 101 }, t.as.owner],
    'compiled',
  ],
];

test.each(cases.map(([name, request, executor]) => [name, executor, request] as const))(
  '%s: three answers alike, the later ones by the %s executor',
  async (name, executor, request) => {
    const [document, variables, headers] = request();
    // A document of its own per case (its hash is the cache's key): the first sight is this case's.
    const query = `# ${name}\n${document}`;
    // Operation name for the two-operation document (POST body field).
    const body = document.startsWith('query A')
      ? { query, variables, operationName: 'B' }
      : document.startsWith('query E')
        ? { query, variables, operationName: '' }
        : { query, variables };
    if (document.startsWith('query E')) {
      // Compiled first, under no operation name.
      for (let i = 0; i < 2; i++) expect((await service.rest('POST', '/graphql', { headers, body: { query, variables } })).status).toBe(200);
    }
    const stats = service.app.graphqlExecution;
    const before = { ...stats };
    const answers: { status: number; text: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await service.rest('POST', '/graphql', { headers, body });
      answers.push({ status: res.status, text: res.text });
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    // The first sight runs on graphql-js; the second compiles, when it can.
    const compiled = stats.compiled - before.compiled;
    expect(compiled).toBe(executor === 'compiled' ? 2 : 0);
    expect(stats.interpreted - before.interpreted).toBe(3 - compiled);
  },
);

test('the compiled answers are the lookups graphql-js gives: a found user and a not-found error in full', async () => {
  const answers = await thrice(LOOKUP, { id: 102 }, t.as.owner);
  expect(JSON.parse(answers[2]!.text)).toEqual({
    data: {
      userByExternalId: expect.objectContaining({ id: t.member.id, login: 'member', externalUserId: 102, phone: '+10000000102' }),
    },
  });
  const missing = await thrice(LOOKUP, { id: 424_242 }, t.as.owner);
  expect(JSON.parse(missing[2]!.text)).toEqual({
    data: { userByExternalId: null },
    errors: [{ message: 'User not found', locations: [{ line: 2, column: 3 }], path: ['userByExternalId'], extensions: { code: 'NOT_FOUND' } }],
  });
});

// The benchmark's GraphQL lookup (BENCHMARKS.md) must keep running compiled:
// mutations moving to graphql-js, and the cost limit, must not reach it.
test("the benchmark's lookup runs compiled from its second send, and the cost limit asks the database nothing for it", async () => {
  const { GRAPHQL_LOOKUP } = await import('../../bench/queries');
  const query = `# benchmark\n${GRAPHQL_LOOKUP}`;
  const stats = service.app.graphqlExecution;
  const before = { ...stats };
  const statements: number[] = [];
  for (let i = 0; i < 4; i++) {
    const started = service.db.statementCount();
    const res = await service.rest('POST', '/graphql', { headers: t.as.owner, body: { query, variables: { id: 102 } } });
    expect(res.body.data.userByExternalId.login).toBe('member');
    statements.push(service.db.statementCount() - started);
  }
  expect({ compiled: stats.compiled - before.compiled, interpreted: stats.interpreted - before.interpreted, rerun: stats.rerun - before.rerun }).toEqual({
    compiled: 3,
    interpreted: 1,
    rerun: 0,
  });
  // The lookup itself, and the credential check when the credential cache's
  // entry has lapsed between sends (a slow machine): never a count of the cost limit.
  for (const count of statements.slice(1)) expect(count).toBeLessThanOrEqual(2);
});
