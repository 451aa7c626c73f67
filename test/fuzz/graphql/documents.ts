// What the GraphQL fuzz test (test/fuzz/graphql.test.ts) generates:
// documents as lists of parts (Repeat parts keep counterexamples short), the
// literals and selections every operation family builds on (blocks()), and the
// schema's field names. The families' fields are in this folder beside it.
import fc from 'fast-check';
import type { GraphQLObjectType } from 'graphql';
import { buildSchema } from '../../../src/graphql/schema';
import { arb, type LoginSpec, loginParts, materialize, type SessionSpec, type Text } from '../../support/fuzz';
import type { Tenant } from '../../support/seed';

export type Doc = Text[];

export const join = (doc: Doc): string => doc.map(materialize).join('');

/** A GraphQL string literal (JSON's escapes are GraphQL's, \u00XX included). */
export const gqlString = (s: string): string => JSON.stringify(s);

/** The fields of a type of the service's schema (schema/*.graphql): the names a client can select. */
export const SCHEMA = buildSchema();
export const fieldsOf = (type: string): string[] => Object.keys((SCHEMA.getType(type) as GraphQLObjectType).getFields());
export const USER_FIELDS = fieldsOf('User');

/**
 * Kept out of the property's inputs, each covered by an explicit test below:
 * subscriptions; a GET running a mutation, HEAD and OPTIONS (405); an Accept
 * header without a JSON type (406); persistedQuery extensions.
 */
export const KNOWN_BUG_WORDS = /subscription/i;

/** A createSession whose input `spec` is signed when sent and passed as variable $i (JSON numbers where `numbers`). */
export interface SessionOp {
  spec?: SessionSpec;
  numbers?: boolean;
}
export type Op = { doc: Doc; kind: 'query' | 'mutation'; variables?: Record<string, unknown> } & SessionOp;

/** An operation, or garbage (no kind). */
export type AnyOp = { doc: Doc; kind: 'query' | 'mutation' | undefined; variables?: Record<string, unknown> } & SessionOp;

/** A GraphQL literal of a JSON value (object keys as written: a name GraphQL cannot parse is a syntax error, as sent). */
export const gqlLiteral = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(gqlLiteral).join(', ')}]`
    : value !== null && typeof value === 'object'
      ? `{${Object.entries(value)
          .map(([k, v]) => `${k}: ${gqlLiteral(v)}`)
          .join(', ')}}`
      : typeof value === 'string'
        ? JSON.stringify(value)
        : String(value);

/** login's arguments as literals (those left out are not written). */
export const loginArguments = (spec: LoginSpec): string =>
  Object.entries(loginParts(spec).args)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join(', ');

/** Literals and selections every family's fields are made of. */
export function blocks(ts: [Tenant, Tenant]) {
  const realIds = ts.flatMap((t) => t.messageIds);
  const name = fc.stringMatching(/^[_A-Za-z][_0-9A-Za-z]{0,10}$/);

  // -- literals -------------------------------------------------------------
  const stringLiteral: fc.Arbitrary<Doc> = fc.oneof(
    { weight: 4, arbitrary: arb.anyString(30).map((s) => [gqlString(s)]) },
    { weight: 1, arbitrary: fc.constantFrom('phone-1', '', 'u'.repeat(64), 'u'.repeat(65), "' OR 1=1 --").map((s) => [gqlString(s)]) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 1_000_000 }).map((n): Doc => ['"', { repeat: 'x', times: n }, '"']) },
    {
      weight: 1,
      arbitrary: fc
        .string({ maxLength: 20 })
        .filter((s) => !s.includes('"""') && !s.endsWith('"') && !s.endsWith('\\'))
        .map((s) => [`"""${s}"""`]),
    },
  );
  const intLiteral = fc.oneof(
    fc.constantFrom('101', '102', '103', '0', '-1', '2147483647', '2147483648', '-2147483649', '99999999999999999999'),
    fc.integer({ min: -3_000_000_000, max: 3_000_000_000 }).map(String),
  );
  const leafLiteral: fc.Arbitrary<Doc> = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('true', 'false', 'null', '1.5', '1e3', '-0', 'FOO', '$v', '$w').map((s) => [s]) },
    { weight: 2, arbitrary: intLiteral.map((s) => [s]) },
    { weight: 2, arbitrary: stringLiteral },
  );
  const junkLiteral = (depth: number): fc.Arbitrary<Doc> =>
    depth <= 1
      ? leafLiteral
      : fc.oneof(
          { weight: 4, arbitrary: leafLiteral },
          { weight: 1, arbitrary: fc.array(junkLiteral(depth - 1), { maxLength: 3 }).map((items): Doc => ['[', ...items.flatMap((i) => [...i, ' ']), ']']) },
          {
            weight: 1,
            arbitrary: fc
              .array(fc.tuple(fc.constantFrom('name', 'phone', 'x'), junkLiteral(depth - 1)), { maxLength: 3 })
              .map((fields): Doc => ['{', ...fields.flatMap(([k, v]) => [`${k}: `, ...v, ' ']), '}']),
          },
        );
  const junk = junkLiteral(3);
  const idList: fc.Arbitrary<Doc> = fc
    .array(
      fc.oneof(fc.constantFrom(...realIds, 'ffffffffffffffffffffffff', ''), arb.anyString(24)).map((id) => gqlString(id)),
      { maxLength: 5 },
    )
    .map((ids) => [`[${ids.join(', ')}]`]);
  const contactList: fc.Arbitrary<Doc> = fc
    .array(
      fc
        .tuple(fc.oneof(fc.constantFrom('Bob', ''), arb.anyString(20)), fc.constantFrom('+10000000101', '+10000000102', '+19999999999', '123', ''))
        .map(([n, p]) => `{name: ${gqlString(n)}, phone: ${gqlString(p)}}`),
      { maxLength: 4 },
    )
    .map((cs) => [`[${cs.join(', ')}]`]);
  const boolLiteral = fc.constantFrom('true', 'false', 'null');
  /** A well-typed value most of the time, anything some of the time. */
  const argument = (typed: fc.Arbitrary<Doc>) => fc.oneof({ weight: 8, arbitrary: typed }, { weight: 1, arbitrary: junk });

  // -- selections -----------------------------------------------------------
  const directive = fc.oneof(
    { weight: 12, arbitrary: fc.constant('') },
    { weight: 2, arbitrary: fc.constantFrom(' @skip(if: false)', ' @include(if: true)', ' @skip(if: true)') },
    { weight: 1, arbitrary: fc.constantFrom(' @deprecated', ' @skip(if: $b)', ' @skip', ' @unknown') },
  );
  const userSelection: fc.Arbitrary<string> = fc
    .array(
      fc.tuple(
        fc.oneof({ weight: 30, arbitrary: fc.constantFrom(...USER_FIELDS, '__typename') }, { weight: 1, arbitrary: name }),
        fc.oneof({ weight: 6, arbitrary: fc.constant('') }, { weight: 1, arbitrary: name.map((a) => `${a}: `) }),
        directive,
      ),
      { minLength: 1, maxLength: 6 },
    )
    .chain((fields) =>
      fc
        .oneof(
          { weight: 12, arbitrary: fc.constant('plain') },
          { weight: 2, arbitrary: fc.constant('inline') },
          { weight: 1, arbitrary: fc.constantFrom('nested', 'none') },
        )
        .map((how) => {
          if (how === 'none') return '';
          const inner = fields.map(([f, alias, dir]) => `${alias}${f}${dir}`).join(' ');
          if (how === 'inline') return `{ ... on User { ${inner} } }`;
          if (how === 'nested') return `{ ${inner} id { x } }`;
          return `{ ${inner} }`;
        }),
    );

  const resultFields = (names: string[]) => fc.subarray(names).map((fs) => (fs.length === 0 ? '' : `{ ${fs.join(' ')} }`));
  const sessionSelection = resultFields([...fieldsOf('Session'), '__typename', 'x']);

  /** Operations whose arguments are all variables, with values of the right type or not. */
  const typedOrJunk = <T>(typed: fc.Arbitrary<T>) =>
    fc.oneof({ weight: 3, arbitrary: typed }, { weight: 1, arbitrary: arb.jsonJunk() }, { weight: 1, arbitrary: fc.constant(undefined) });

  return {
    ts,
    realIds,
    name,
    stringLiteral,
    intLiteral,
    junk,
    idList,
    contactList,
    boolLiteral,
    argument,
    userSelection,
    resultFields,
    sessionSelection,
    typedOrJunk,
  };
}

export type Blocks = ReturnType<typeof blocks>;
