import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const three = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * Date.prototype.toISOString's text, built from the UTC fields: V8's own is a
 * C++ builtin that costs about 2.5× this (every user record has three dates:
 * ~1% of a lookup's instructions, BENCHMARKS.md, "Lookups and the GraphQL
 * pipeline"). Years outside 1000–9999 (toISOString's ±YYYYYY form) and invalid
 * dates (its RangeError) are left to toISOString;
 * test/graphql/datetime.test.ts compares the two.
 */
export function isoString(date: Date): string {
  const year = date.getUTCFullYear();
  if (!(year >= 1000 && year <= 9999)) return date.toISOString();
  return `${year}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}T${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}.${three(date.getUTCMilliseconds())}Z`;
}

/** ISO 8601 in UTC on the way out; ISO 8601 strings accepted on the way in. */
export const DateTime = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  serialize(value) {
    if (value instanceof Date) return isoString(value);
    throw new GraphQLError('DateTime cannot represent a non-Date value');
  },
  parseValue(value) {
    const date = typeof value === 'string' ? new Date(value) : new Date(NaN);
    if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return date;
  },
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('DateTime must be an ISO 8601 string');
    return this.parseValue!(ast.value);
  },
});
