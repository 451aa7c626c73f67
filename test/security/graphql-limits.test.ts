// The limits on the GraphQL documents /graphql accepts (src/graphql/limits.ts):
// depth, cost, aliases, directives and tokens, each probed just inside and just
// over its bound; batching off; the 2 MiB body limit on /graphql; and proof
// that nothing a real client sends comes near them (every operation of the
// schema, the REST paths' own documents, the README's and the explorer's
// examples, the standard introspection query).
//
// What Apollo answers for a refused document, as the README documents it:
// depth, cost, aliases and directives fail validation → HTTP 400 with
// errors[].extensions.code GRAPHQL_VALIDATION_FAILED; the token limit stops the
// parser → 400 GRAPHQL_PARSE_FAILED; a batch → 400 BAD_REQUEST; a body over
// 2 MiB → 413 PAYLOAD_TOO_LARGE. None of them returns `data`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type DocumentNode,
  getIntrospectionQuery,
  getNamedType,
  type GraphQLField,
  isInterfaceType,
  isLeafType,
  isObjectType,
  Kind,
  Lexer,
  parse,
  print,
  type SelectionSetNode,
  Source,
  TokenKind,
  visit,
} from 'graphql';
import {
  RestDeleteMessagesDocument,
  RestRegisteredUsersCompactDocument,
  RestRegisteredUsersDocument,
  RestUploadAddressBookDocument,
  RestUserByExternalIdDocument,
} from '../../src/__generated__/graphql';
import { GRAPHQL_LIMITS } from '../../src/graphql/limits';
import { toGlobalId } from '../../src/services/global-id';
import { buildSchema } from '../../src/graphql/schema';
import { EXPLORER_EXAMPLES } from '../../src/http/explorer';
import { recordFigures } from '../support/figures';
import { type GraphQLResult, useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';
import { signedSessionRequest } from '../support/sessions';

let tenant: Tenant;
const service = useService();
beforeAll(async () => {
  tenant = await seedTenant(service.app.provisioning);
  // The README's and the explorer's examples look up external id 1002: give the tenant one.
  await service.app.provisioning.users.create({
    applicationId: tenant.applicationId,
    login: 'bob',
    password: 'password123',
    phone: '+15550000002',
    externalUserId: 1002,
  });
});
afterAll(async () => {
  recordFigures('graphql-limits', figures);
});

const figures: Record<string, unknown> = { limits: GRAPHQL_LIMITS, boundaries: {}, realOperations: [] };
const boundary = (name: string, value: unknown) => ((figures.boundaries as Record<string, unknown>)[name] = value);

const gql = (query: string, variables?: Record<string, unknown>) => service.graphql(query, variables, tenant.as.owner);

/** Lexical tokens of a document, as graphql-js counts them for maxTokens (everything but <SOF> and <EOF>). */
function tokenCount(document: string): number {
  const lexer = new Lexer(new Source(document));
  let count = 0;
  while (lexer.advance().kind !== TokenKind.EOF) count++;
  return count;
}

/**
 * Depth as graphql-armor counts it: fields and inline fragments add one level,
 * a fragment spread two (its rule counts the spread and then its selection).
 */
function depthOf(document: DocumentNode): number {
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])));
  const walk = (set: SelectionSetNode | undefined, depth: number): number => {
    let deepest = depth;
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) deepest = Math.max(deepest, walk(fragments.get(selection.name.value), depth + 2));
      else deepest = Math.max(deepest, walk(selection.selectionSet, depth + 1));
    }
    return deepest;
  };
  return Math.max(0, ...document.definitions.map((d) => (d.kind === Kind.OPERATION_DEFINITION ? walk(d.selectionSet, 0) : 0)));
}

/** Aliases as graphql-armor counts them (an aliased __typename is free), fragments included once. */
function aliasesOf(document: DocumentNode): number {
  let count = 0;
  visit(document, {
    Field(node) {
      if (node.alias && node.name.value !== '__typename') count++;
    },
  });
  return count;
}

/** A document accepted by every limit: 200, data, and no error at all. */
function expectAccepted(res: GraphQLResult, what: string): void {
  expect([what, res.status, res.body.errors]).toEqual([what, 200, undefined]);
  expect(res.body.data).toBeDefined();
}

/** Refused before execution: 400, GraphQL-shaped errors all with the code (one of them from `rule`), no data. */
function expectRefused(res: GraphQLResult, code: string, rule: RegExp): void {
  expect(res.status).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body).toEqual({ errors: expect.any(Array) });
  expect(res.body.errors!.length).toBeGreaterThan(0);
  for (const error of res.body.errors!) {
    expect(error).toEqual(expect.objectContaining({ message: expect.any(String), extensions: expect.objectContaining({ code }) }));
  }
  expect(res.body.errors!.map((e) => e.message)).toContainEqual(expect.stringMatching(rule));
}

describe('each document limit: just inside is answered, just over is refused with 400', () => {
  test(`depth ${GRAPHQL_LIMITS.maxDepth}: accepted; ${GRAPHQL_LIMITS.maxDepth + 1}: GRAPHQL_VALIDATION_FAILED`, async () => {
    // Nested inline fragments count one level each (graphql-armor's flattenFragments is off),
    // so a flat schema can still be made deep: k fragments + the field + its scalar = k + 2.
    const nested = (depth: number) => `{ ${'... on Query { '.repeat(depth - 2)}userByExternalId(externalUserId: 101) { id }${' }'.repeat(depth - 2)} }`;
    const inside = nested(GRAPHQL_LIMITS.maxDepth);
    const over = nested(GRAPHQL_LIMITS.maxDepth + 1);
    expect([depthOf(parse(inside)), depthOf(parse(over))]).toEqual([GRAPHQL_LIMITS.maxDepth, GRAPHQL_LIMITS.maxDepth + 1]);

    const ok = await gql(inside);
    expectAccepted(ok, 'depth inside');
    expect(ok.body.data).toEqual({ userByExternalId: { id: tenant.owner.id } });
    expectRefused(
      await gql(over),
      'GRAPHQL_VALIDATION_FAILED',
      new RegExp(`depth limit of ${GRAPHQL_LIMITS.maxDepth} exceeded, found ${GRAPHQL_LIMITS.maxDepth + 1}`),
    );
    boundary('depth', { accepted: GRAPHQL_LIMITS.maxDepth, refused: GRAPHQL_LIMITS.maxDepth + 1, code: 'GRAPHQL_VALIDATION_FAILED' });
  });

  test("no shape-based cost: the document graphql-armor's cost limit refused (5032 > 5000) is answered; rows are the one cost rule (test/security/graphql-cost.test.ts)", async () => {
    // graphql-armor's cost: a scalar 1, a selection 2 plus 1.5 × its children:
    // nine nested fragments around 127 __typename cost 5032.1, and were refused
    // at 5000 although they read nothing. The cost rule that stays counts rows.
    const document = `{ ${'... on Query { '.repeat(9)}${'__typename '.repeat(127)}${'} '.repeat(9)}}`;
    expect(depthOf(parse(document))).toBe(GRAPHQL_LIMITS.maxDepth);
    expectAccepted(await gql(document), 'shape cost');
  });

  test(`aliases ${GRAPHQL_LIMITS.maxAliases}: accepted; ${GRAPHQL_LIMITS.maxAliases + 1}: GRAPHQL_VALIDATION_FAILED`, async () => {
    const aliased = (n: number) => `{ userByExternalId(externalUserId: 101) { ${Array.from({ length: n }, (_, i) => `a${i}: id`).join(' ')} } }`;
    const ok = await gql(aliased(GRAPHQL_LIMITS.maxAliases));
    expectAccepted(ok, 'aliases inside');
    expect(Object.keys(ok.body.data.userByExternalId)).toHaveLength(GRAPHQL_LIMITS.maxAliases);
    expectRefused(
      await gql(aliased(GRAPHQL_LIMITS.maxAliases + 1)),
      'GRAPHQL_VALIDATION_FAILED',
      new RegExp(`Aliases limit of ${GRAPHQL_LIMITS.maxAliases} exceeded, found ${GRAPHQL_LIMITS.maxAliases + 1}`),
    );

    // Aliases on root fields count the same: each one would run the resolver again.
    const roots = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `u${i}: userByExternalId(externalUserId: 101) { id }`).join(' ')} }`;
    expectAccepted(await gql(roots(GRAPHQL_LIMITS.maxAliases)), 'root aliases inside');
    expectRefused(await gql(roots(GRAPHQL_LIMITS.maxAliases + 1)), 'GRAPHQL_VALIDATION_FAILED', /Aliases limit/);
    boundary('aliases', { accepted: GRAPHQL_LIMITS.maxAliases, refused: GRAPHQL_LIMITS.maxAliases + 1, code: 'GRAPHQL_VALIDATION_FAILED' });
  });

  test(`directives ${GRAPHQL_LIMITS.maxDirectives}: accepted; ${GRAPHQL_LIMITS.maxDirectives + 1}: GRAPHQL_VALIDATION_FAILED`, async () => {
    const directed = (n: number) => `{ userByExternalId(externalUserId: 101) { ${Array.from({ length: n }, () => 'id @include(if: true)').join(' ')} } }`;
    expectAccepted(await gql(directed(GRAPHQL_LIMITS.maxDirectives)), 'directives inside');
    expectRefused(
      await gql(directed(GRAPHQL_LIMITS.maxDirectives + 1)),
      'GRAPHQL_VALIDATION_FAILED',
      new RegExp(`Directives limit of ${GRAPHQL_LIMITS.maxDirectives} exceeded, found ${GRAPHQL_LIMITS.maxDirectives + 1}`),
    );
    boundary('directives', { accepted: GRAPHQL_LIMITS.maxDirectives, refused: GRAPHQL_LIMITS.maxDirectives + 1, code: 'GRAPHQL_VALIDATION_FAILED' });
  });

  test(`tokens ${GRAPHQL_LIMITS.maxTokens}: accepted; ${GRAPHQL_LIMITS.maxTokens + 1}: GRAPHQL_PARSE_FAILED`, async () => {
    // Aliased __typename (3 tokens each, free for the alias limit, distinct response
    // names): 2 braces + 666 × 3 = 2000 tokens. 1998 copies of one same-named field
    // would also be 2000 tokens, but graphql-js's field-merging check gives up on
    // them ("Validation aborted.", GRAPHQL_VALIDATION_FAILED) before the limit matters.
    const inside = `{ ${Array.from({ length: 666 }, (_, i) => `t${i}: __typename`).join(' ')} }`;
    const over = inside.replace(/ }$/, ' __typename }');
    expect([tokenCount(inside), tokenCount(over)]).toEqual([GRAPHQL_LIMITS.maxTokens, GRAPHQL_LIMITS.maxTokens + 1]);

    const ok = await gql(inside);
    expectAccepted(ok, 'tokens inside');
    expect(Object.keys(ok.body.data)).toHaveLength(666);
    expectRefused(await gql(over), 'GRAPHQL_PARSE_FAILED', new RegExp(`more th\\w+ ${GRAPHQL_LIMITS.maxTokens} tokens`));
    // Comments and whitespace are not tokens: padding does not count.
    expectAccepted(await gql(`# ${'x'.repeat(100_000)}\n${inside}`), 'tokens inside with a long comment');
    boundary('tokens', { accepted: GRAPHQL_LIMITS.maxTokens, refused: GRAPHQL_LIMITS.maxTokens + 1, code: 'GRAPHQL_PARSE_FAILED' });
  });

  test('spreading the fields over fragments does not escape a limit', async () => {
    // One alias over the limit, split across two fragments.
    const half = Math.ceil((GRAPHQL_LIMITS.maxAliases + 1) / 2);
    const split = `{ userByExternalId(externalUserId: 101) { ...A ...B } }
      fragment A on User { ${Array.from({ length: half }, (_, i) => `a${i}: id`).join(' ')} }
      fragment B on User { ${Array.from({ length: GRAPHQL_LIMITS.maxAliases + 1 - half }, (_, i) => `b${i}: id`).join(' ')} }`;
    expectRefused(await gql(split), 'GRAPHQL_VALIDATION_FAILED', /Aliases limit/);
    // Depth through fragment spreads, the field nine fragments down.
    const chain = Array.from(
      { length: 9 },
      (_, i) => `fragment F${i} on Query { ${i === 8 ? 'userByExternalId(externalUserId: 101) { id }' : `...F${i + 1}`} }`,
    );
    expectRefused(await gql(`{ ...F0 } ${chain.join(' ')}`), 'GRAPHQL_VALIDATION_FAILED', /depth limit/);
  });

  test('nested introspection is refused by graphql-js’s own rule, as the README says', async () => {
    const nested = '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }';
    expectRefused(await gql(nested), 'GRAPHQL_VALIDATION_FAILED', /introspection/i);
  });
});

describe('batching and the body limit', () => {
  test.each([
    ['two operations', [{ query: '{ __typename }' }, { query: '{ __typename }' }]],
    ['one operation in an array', [{ query: '{ __typename }' }]],
    ['an empty array', []],
  ])('a batch (%s) is refused with 400 BAD_REQUEST in GraphQL shape', async (_name, batch) => {
    const res = await service.rest('POST', '/graphql', { headers: tenant.as.owner, body: batch });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'BAD_REQUEST' } }] });
  });

  test('a body of exactly 2 MiB is answered; one byte more is 413 PAYLOAD_TOO_LARGE in GraphQL shape', async () => {
    const json = JSON.stringify({ query: '{ __typename }' });
    const exact = json + ' '.repeat(2 * 1024 * 1024 - json.length);
    const post = (raw: string) =>
      service.rest('POST', '/graphql', { headers: { ...tenant.as.owner, 'content-type': 'application/json' }, raw }) as Promise<GraphQLResult>;
    expectAccepted(await post(exact), '2 MiB body');
    const over = await post(`${exact} `);
    expect(over.status).toBe(413);
    expect(over.body).toEqual({ errors: [{ message: 'Request body too large', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
    boundary('bodyBytes', { accepted: 2 * 1024 * 1024, refused: 2 * 1024 * 1024 + 1, status: 413, code: 'PAYLOAD_TOO_LARGE' });
  });
});

describe('nothing a real client sends comes near the limits', () => {
  /** Sample arguments for each root field: a new field without one fails here, on purpose. */
  /** A session of its own, for the operations that end or change the session they run in. */
  const ownSession = async () => ({ 'SVC-Token': (await service.app.provisioning.applications.createSession(tenant.applicationId, tenant.owner.id)).token });

  const SAMPLES: Record<string, () => Promise<{ variables: Record<string, unknown>; headers?: Record<string, string> }>> = {
    userByExternalId: async () => ({ variables: { externalUserId: 101 } }),
    registeredUsers: async () => ({ variables: { udid: 'phone-1' } }),
    registeredUsersConnection: async () => ({ variables: { udid: 'phone-1', first: 1000, after: null } }),
    addressBook: async () => ({ variables: { udid: 'phone-1' } }),
    session: async () => ({ variables: {} }),
    deleteMessages: async () => ({ variables: { ids: ['ffffffffffffffffffffffff'], force: false } }),
    uploadAddressBook: async () => ({ variables: { contacts: [{ name: 'Member', phone: '+10000000102' }], udid: 'phone-1', force: false } }),
    createSession: async () => ({ variables: { input: signedSessionRequest(tenant, { login: 'owner', password: 'password123' }) } }),
    endSession: async () => ({ variables: {}, headers: await ownSession() }),
    login: async () => ({ variables: { login: 'member', password: 'password123' }, headers: await ownSession() }),
    logout: async () => ({ variables: {}, headers: await ownSession() }),
    node: async () => ({ variables: { id: toGlobalId('Dialog', tenant.dialogId) } }),
    nodes: async () => ({ variables: { ids: [toGlobalId('Dialog', tenant.dialogId), toGlobalId('Message', tenant.messageIds[2]!)] } }),
    viewer: async () => ({ variables: {} }),
    messagesDelete: async () => ({ variables: { input: { messageIds: ['ffffffffffffffffffffffff'], scope: 'FOR_ME' } } }),
    messageSend: async () => ({ variables: { input: { dialogId: tenant.dialogId, body: 'hello' } } }),
  };

  /**
   * Every field of a result type, into nested objects (a page's edges and
   * their nodes), but not back into a type already on the path (a message's
   * dialog); an interface: its id and type name.
   */
  function selectionOf(named: ReturnType<typeof getNamedType>, path: readonly string[] = []): string {
    if (isInterfaceType(named)) return '{ __typename id }';
    if (isLeafType(named) || !isObjectType(named)) return '';
    const fields = Object.values(named.getFields()).flatMap((f) => {
      const inner = getNamedType(f.type);
      if (isLeafType(inner)) return [f.name];
      return path.includes(inner.name) ? [] : [`${f.name} ${selectionOf(inner, [...path, named.name])}`];
    });
    return `{ ${fields.join(' ')} }`;
  }

  /** One operation per root field, selecting every field of its result. */
  function everyOperation(): {
    name: string;
    query: string;
    sample: () => Promise<{ variables: Record<string, unknown>; headers?: Record<string, string> }>;
  }[] {
    const schema = buildSchema();
    const operations = [];
    for (const [kind, type] of [
      ['query', schema.getQueryType()],
      ['mutation', schema.getMutationType()],
    ] as const) {
      for (const field of Object.values(type?.getFields() ?? {}) as GraphQLField<unknown, unknown>[]) {
        const sample = SAMPLES[field.name];
        if (!sample) throw new Error(`no sample arguments for ${kind} ${field.name}: add them to SAMPLES`);
        const selection = selectionOf(getNamedType(field.type));
        const definitions = field.args.map((a) => `$${a.name}: ${String(a.type)}`).join(', ');
        const args = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
        operations.push({
          name: `${kind} ${field.name}`,
          query: `${kind} All${field.name}${definitions ? `(${definitions})` : ''} { ${field.name}${args ? `(${args})` : ''} ${selection} }`,
          sample,
        });
      }
    }
    return operations;
  }

  /** The operations listed in the GraphQL reference (docs/graphql.md, its first graphql block). */
  function readmeOperations(): string[] {
    const readme = readFileSync(path.join(__dirname, '..', '..', 'docs', 'graphql.md'), 'utf8');
    const block = /^# GraphQL reference[\s\S]*?```graphql\n([\s\S]*?)```/m.exec(readme)?.[1] ?? '';
    return block.split('\n').filter((line) => /^(query|mutation)\b/.test(line.trim()));
  }

  const REST_DOCUMENTS: [string, DocumentNode, Record<string, unknown>][] = [
    ['REST delete', RestDeleteMessagesDocument, { ids: ['ffffffffffffffffffffffff'], force: false }],
    ['REST registered users', RestRegisteredUsersDocument, { udid: null }],
    ['REST registered users, compact', RestRegisteredUsersCompactDocument, { udid: null }],
    ['REST upload', RestUploadAddressBookDocument, { contacts: [{ name: 'Member', phone: '+10000000102' }], udid: null, force: null }],
    ['REST lookup', RestUserByExternalIdDocument, { externalUserId: 102 }],
  ];

  test('every operation of the schema, with every field of its result, is answered', async () => {
    const operations = everyOperation();
    expect(operations.map((o) => o.name).sort()).toEqual([
      'mutation createSession',
      'mutation deleteMessages',
      'mutation endSession',
      'mutation login',
      'mutation logout',
      'mutation messageSend',
      'mutation messagesDelete',
      'mutation uploadAddressBook',
      'query addressBook',
      'query node',
      'query nodes',
      'query registeredUsers',
      'query registeredUsersConnection',
      'query session',
      'query userByExternalId',
      'query viewer',
    ]);
    for (const { name, query, sample } of operations) {
      const { variables, headers } = await sample();
      expectAccepted(await service.graphql(query, variables, headers ?? tenant.as.owner), name);
      record(name, query);
    }
  });

  test('the REST paths’ own documents, sent to /graphql, are answered, with room under the alias limit', async () => {
    for (const [name, document, variables] of REST_DOCUMENTS) {
      expectAccepted(await gql(print(document), variables), name);
      record(name, print(document));
    }
    // The spec's snake_case names are aliases: 14 in the UserRecord fragment plus "user" / "users".
    // A client aliasing the same way on /graphql must keep room for more fields
    // (REST itself runs these through graphql-jit, outside the limits).
    expect(aliasesOf(RestUserByExternalIdDocument)).toBe(15);
    expect(aliasesOf(RestRegisteredUsersDocument)).toBe(15);
    expect(GRAPHQL_LIMITS.maxAliases).toBeGreaterThanOrEqual(2 * 15);
  });

  test('the README’s operations and the explorer’s examples are answered', async () => {
    const readme = readmeOperations();
    expect(readme.length).toBeGreaterThanOrEqual(4);
    // The README's login example names the demo user: this application gets one too.
    await service.app.provisioning.users.create({ applicationId: tenant.applicationId, login: 'alice', password: 'demo-password' });
    for (const query of readme) {
      // A session of its own each: the examples log in, log out and end their session.
      expectAccepted(await service.graphql(query, {}, await ownSession()), `README: ${query}`);
      record(`README: ${query.slice(0, 40)}`, query);
    }
    expect(EXPLORER_EXAMPLES.length).toBeGreaterThanOrEqual(4);
    for (const example of EXPLORER_EXAMPLES) {
      expectAccepted(await gql(example.query, example.variables), `explorer: ${example.query.slice(0, 80)}`);
      record(`explorer: ${/(query|mutation) (\w+)/.exec(example.query)?.[2]}`, example.query);
    }
  });

  test.each([
    ['graphql-js defaults', {}],
    [
      'every option (as GraphiQL may ask)',
      { descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true },
    ],
  ])('the standard introspection query (%s) is answered', async (name, options) => {
    const query = getIntrospectionQuery(options);
    const res = await gql(query);
    expectAccepted(res, `introspection, ${name}`);
    expect(res.body.data.__schema.queryType).toEqual(expect.objectContaining({ name: 'Query' }));
    // Exempt from depth and cost (graphql-armor's ignoreIntrospection), not from tokens.
    expect(tokenCount(query)).toBeLessThan(GRAPHQL_LIMITS.maxTokens);
    record(`introspection, ${name}`, query);
  });

  function record(name: string, query: string): void {
    const document = parse(query);
    (figures.realOperations as unknown[]).push({ name, tokens: tokenCount(query), depth: depthOf(document), aliases: aliasesOf(document) });
  }
});
