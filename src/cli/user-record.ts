import type { FieldNode, FragmentDefinitionNode } from 'graphql';
import type { User } from '../__generated__/prisma/client';
import { UserRecordFragmentDoc } from '../__generated__/graphql';

/**
 * The spec's user record, for the admin CLI: the fields and names of the
 * UserRecord fragment the REST paths select (src/rest/operations/user.graphql),
 * read from the model as the User type's resolvers do (field for field; test/cli
 * checks the CLI's record equals the REST path's).
 */
const FIELDS = ((UserRecordFragmentDoc.definitions[0] as FragmentDefinitionNode).selectionSet.selections as FieldNode[]).map((field) => ({
  name: field.alias?.value ?? field.name.value,
  from: field.name.value as keyof User,
}));

export function userRecord(user: User): Record<string, unknown> {
  return Object.fromEntries(
    FIELDS.map(({ name, from }) => {
      const value = user[from];
      return [name, value instanceof Date ? value.toISOString() : value];
    }),
  );
}
