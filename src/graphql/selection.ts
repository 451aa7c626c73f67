// What the client selected under a field, for resolvers that read less from
// the database when less is asked for.
import { collectSubFields } from '@graphql-tools/utils';
import { type FieldNode, getArgumentValues, getNamedType, type GraphQLObjectType, type GraphQLResolveInfo, isObjectType } from 'graphql';

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
  let byAllowed = byVariables.get(info.variableValues);
  if (!byAllowed) byVariables.set(info.variableValues, (byAllowed = new Map<ReadonlySet<string>, boolean>()));
  let answer = byAllowed.get(allowed);
  if (answer === undefined) byAllowed.set(allowed, (answer = collectsOnly(info, allowed)));
  return answer;
}

const answers = new WeakMap<readonly object[], WeakMap<object, Map<ReadonlySet<string>, boolean>>>();

/** The fields selected under this field for object type `type`, as graphql-js collects them. */
function subFields(info: GraphQLResolveInfo, type: GraphQLObjectType) {
  // @graphql-tools/utils takes graphql 17's variable shape; on graphql 16 it reads `coerced` alone.
  const variables = { coerced: info.variableValues, sources: {} };
  return collectSubFields(info.schema, info.fragments, variables, type, [...info.fieldNodes]);
}

function collectsOnly(info: GraphQLResolveInfo, allowed: ReadonlySet<string>): boolean {
  const type = getNamedType(info.returnType);
  if (!isObjectType(type)) return false;
  const { fields, patches } = subFields(info, type);
  for (const collected of [fields, ...patches.map((p) => p.fields)]) {
    for (const nodes of collected.values()) {
      for (const node of nodes) if (node.name.value !== '__typename' && !allowed.has(node.name.value)) return false;
    }
  }
  return true;
}

/**
 * The arguments of field `fieldName` of type `typeName` selected under this
 * field (through fragments and aliases, as selectsOnly collects), for a
 * resolver that reads it ahead with its parent: undefined unless the field
 * is selected, every selection of it has the same arguments, and nothing is
 * deferred. The field's own resolver decides whether what was read ahead
 * answers its arguments (a read ahead is never the only way to answer).
 */
export function selectedArguments(info: GraphQLResolveInfo, typeName: string, fieldName: string): Record<string, unknown> | undefined {
  const type = info.schema.getType(typeName);
  if (!isObjectType(type)) return undefined;
  const definition = type.getFields()[fieldName];
  if (!definition) return undefined;
  const { fields, patches } = subFields(info, type);
  if (patches.length > 0) return undefined;
  const nodes: FieldNode[] = [];
  for (const collected of fields.values()) for (const node of collected) if (node.name.value === fieldName) nodes.push(node);
  if (nodes.length === 0) return undefined;
  try {
    const values = nodes.map((node) => getArgumentValues(definition, node, info.variableValues));
    const first = JSON.stringify(values[0]);
    return values.every((v) => JSON.stringify(v) === first) ? values[0] : undefined;
  } catch {
    return undefined; // an argument that does not coerce: the field's resolver reports it
  }
}
