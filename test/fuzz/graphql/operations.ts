// The GraphQL fuzz test's documents (test/fuzz/graphql.test.ts): operations
// of random fields of each family (users.ts, address-book.ts, chat.ts,
// sessions.ts) with aliases, directives and variable definitions, operations
// whose arguments are all variables, documents around the documented limits,
// and garbage.
import fc from 'fast-check';
import { arb } from '../../support/fuzz';
import type { Tenant } from '../../support/seed';
import { addressBookFields } from './address-book';
import { chatFields } from './chat';
import { blocks, type Doc, KNOWN_BUG_WORDS, type Op } from './documents';
import { sessionsFields } from './sessions';
import { usersFields } from './users';

export function documentArbitraries(ts: [Tenant, Tenant]) {
  const b = blocks(ts);
  const { name } = b;
  const users = usersFields(b);
  const book = addressBookFields(b);
  const chat = chatFields(b);
  const sessions = sessionsFields(b);

  // The families' fields, in the order (and so with the weights) they always had.
  const queryField: fc.Arbitrary<Doc> = fc.oneof(
    users.userByExternalId,
    book.addressBook,
    sessions.session,
    book.registeredUsers,
    {
      weight: 1,
      arbitrary: fc.constantFrom<Doc>(['__typename'], ['__type(name: "User") { name fields { name type { name } } }'], ['__schema { queryType { name } }']),
    },
    { weight: 1, arbitrary: name.map((n): Doc => [n]) },
  );
  const mutationField: fc.Arbitrary<Doc> = fc.oneof(
    chat.deleteMessages,
    book.uploadAddressBook,
    sessions.createSession,
    sessions.endSession,
    sessions.logout,
    sessions.login,
    { weight: 1, arbitrary: fc.constantFrom<Doc>(['__typename'], ['x'], ['endSession { x }'], ['login']) },
  );

  /** Variable definitions: a random type for $v (and $b for directives), used or not. */
  const variableDefinitions = fc.oneof(
    { weight: 10, arbitrary: fc.constant('') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '($v: Int)',
        '($v: Int!)',
        '($v: String)',
        '($v: [ID!]!)',
        '($v: Boolean, $b: Boolean!)',
        '($v: [ContactInput!]!)',
        '($v: ContactInput)',
        '($v: Unknown)',
        '($v: [[Int]])',
        '($v: Int = "x")',
        '($v: Int, $v: Int)',
        '($b: Boolean = true)',
      ),
    },
  );

  const operation = (kind: 'query' | 'mutation') =>
    fc
      .tuple(
        fc.array(
          fc.tuple(
            fc.option(
              name.map((a) => `${a}: `),
              { nil: undefined },
            ),
            kind === 'query' ? queryField : mutationField,
          ),
          { minLength: 1, maxLength: 3 },
        ),
        fc.constantFrom('', '', 'Op', 'Other'),
        variableDefinitions,
        fc.boolean(),
      )
      .map(([fields, opName, vars, shorthand]): { doc: Doc; kind: 'query' | 'mutation' } => {
        const body: Doc = ['{ ', ...fields.flatMap(([alias, field]) => [alias ?? '', ...field, ' ']), '}'];
        const head = kind === 'query' && shorthand && opName === '' && vars === '' ? '' : `${kind} ${opName}${vars} `;
        return { doc: [head, ...body], kind };
      });

  /** Operations whose arguments are all variables, with values of the right type or not. */
  const withVariables: fc.Arbitrary<Op & { variables: Record<string, unknown> }> = fc.oneof(
    users.userByExternalIdVariables,
    book.registeredUsersVariables,
    book.addressBookVariables,
    sessions.createSessionVariables,
    sessions.loginVariables,
    chat.deleteMessagesVariables,
    book.uploadAddressBookVariables,
  );

  /** Around the documented limits: depth 10, 15 aliases, 50 directives, 2000 tokens, introspection depth. */
  const limits: fc.Arbitrary<Op> = fc.oneof<fc.Arbitrary<Op>[]>(
    fc.integer({ min: 1, max: 30 }).map((d) => ({ doc: [`{ registeredUsers { ${'... on User { '.repeat(d)}id${' }'.repeat(d)} } }`], kind: 'query' as const })),
    fc
      .integer({ min: 1, max: 30 })
      .map((n) => ({ doc: [`{ ${Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(' ')} }`], kind: 'query' as const })),
    fc.integer({ min: 1, max: 70 }).map((n) => ({ doc: [`{ __typename ${'@include(if: true) '.repeat(n)}}`], kind: 'query' as const })),
    fc
      .integer({ min: 1, max: 70 })
      .map((n) => ({ doc: [`{ ${Array.from({ length: n }, (_, i) => `__typename @skip(if: ${i % 2 === 0})`).join(' ')} }`], kind: 'query' as const })),
    fc.integer({ min: 100, max: 4_000 }).map((n) => ({ doc: ['{ ', { repeat: '__typename ', times: n }, '}'], kind: 'query' as const })),
    fc
      .integer({ min: 1, max: 8 })
      .map((d) => ({ doc: [`{ __schema { types { ${'fields { type { '.repeat(d)}name${' } }'.repeat(d)} } } }`], kind: 'query' as const })),
    fc.integer({ min: 1, max: 5_000 }).map((n) => ({ doc: ['{ ', { repeat: '{', times: n }, { repeat: '}', times: n }, ' }'], kind: 'query' as const })),
    fc.integer({ min: 1, max: 30 }).map((n) => ({
      doc: [`mutation { ${Array.from({ length: n }, (_, i) => `m${i}: deleteMessages(ids: ["ffffffffffffffffffffffff"]) { notFound }`).join(' ')} }`],
      kind: 'mutation' as const,
    })),
    fc.constant({ doc: ['query A { __typename } query B { __typename }'], kind: 'query' as const }),
    fc.constant({ doc: ['fragment F on User { id } { registeredUsers { ...F ...F } }'], kind: 'query' as const }),
    fc.constant({ doc: ['fragment F on User { ...G } fragment G on User { ...F } { registeredUsers { ...F } }'], kind: 'query' as const }),
  );

  const garbage: fc.Arbitrary<{ doc: Doc; kind: undefined }> = fc
    .oneof(
      arb.anyString(60),
      fc
        .array(
          fc.constantFrom(
            '{',
            '}',
            '(',
            ')',
            '[',
            ']',
            ':',
            '$',
            '@',
            '...',
            'query',
            'mutation',
            'fragment',
            'on',
            '"',
            'x',
            '1',
            '#',
            '\n',
            '!',
            '=',
            '|',
            '&',
            ' ',
            '__typename',
            'userByExternalId',
          ),
          { maxLength: 30 },
        )
        .map((t) => t.join('')),
    )
    .filter((s) => !KNOWN_BUG_WORDS.test(s))
    .map((s) => ({ doc: [s], kind: undefined }));

  return {
    query: operation('query'),
    mutation: operation('mutation'),
    withVariables,
    limits,
    garbage,
  };
}
