import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

/**
 * Signed parameters keep the exact text received: an integer literal's digits
 * as written, a string as is. A JSON number in variables has no written form
 * left, so it is taken as its shortest decimal text (what SDKs sign).
 */
export const SignedText = new GraphQLScalarType<string, string>({
  name: 'SignedText',
  serialize(value) {
    if (typeof value === 'string') return value;
    throw new GraphQLError('SignedText cannot represent a non-string value');
  },
  parseValue(value) {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
    throw new GraphQLError('SignedText must be a string or an integer');
  },
  parseLiteral(ast) {
    if (ast.kind === Kind.STRING || ast.kind === Kind.INT) return ast.value;
    throw new GraphQLError('SignedText must be a string or an integer');
  },
});
