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
  // A list's items share the field's nodes and the request's variables: a page
  // of 50 messages asks 50 times about one selection, so the answer is kept
  // per (nodes, variables, allowed) for as long as the request's objects live.
  let byVariables = answers.get(info.fieldNodes);
  if (!byVariables) answers.set(info.fieldNodes, (byVariables = new WeakMap()));
  const variables = info.variableValues ?? NO_VARIABLES;
  let byAllowed = byVariables.get(variables);
  if (!byAllowed) byVariables.set(variables, (byAllowed = new Map()));
  let answer = byAllowed.get(allowed);
  if (answer === undefined) byAllowed.set(allowed, (answer = collectsOnly(info, allowed)));
  return answer;
}

const NO_VARIABLES = {};
const answers = new WeakMap<readonly object[], WeakMap<object, Map<ReadonlySet<string>, boolean>>>();

function collectsOnly(info: GraphQLResolveInfo, allowed: ReadonlySet<string>): boolean {
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
