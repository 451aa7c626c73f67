import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

/** ISO 8601 in UTC on the way out; ISO 8601 strings accepted on the way in. */
export const DateTime = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  serialize(value) {
    if (value instanceof Date) return value.toISOString();
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
