// What the client selected under a field, for resolvers that read less from
// the database when less is asked for.
import { collectSubFields } from '@graphql-tools/utils';
import { getNamedType, isObjectType, type GraphQLResolveInfo } from 'graphql';

/**
 * Whether the selection under this field names no field outside `allowed`
 * (`__typename` aside), as graphql-js would collect it: through fragments,
 * inline fragments and aliases, with @include/@skip evaluated against this
 * request's variables. A field whose type is not an object type: false.
 */
export function selectsOnly(info: GraphQLResolveInfo, allowed: ReadonlySet<string>): boolean {
  const type = getNamedType(info.returnType);
  if (!isObjectType(type)) return false;
  // @graphql-tools/utils takes graphql 17's variable shape; on graphql 16 it reads `coerced` alone.
  const variables = { coerced: info.variableValues, sources: {} };
  const { fields, patches } = collectSubFields(info.schema, info.fragments, variables, type, [...info.fieldNodes]);
  for (const collected of [fields, ...patches.map((p) => p.fields)]) {
    for (const nodes of collected.values()) {
      for (const node of nodes) if (node.name.value !== '__typename' && !allowed.has(node.name.value)) return false;
    }
  }
  return true;
}
