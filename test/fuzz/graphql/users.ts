// The users operations' fields: userByExternalId, with literals and with a variable.
import fc from 'fast-check';
import type { Blocks, Doc } from './documents';

export function usersFields({ argument, intLiteral, userSelection, typedOrJunk }: Blocks) {
  const userByExternalId = {
    weight: 4,
    arbitrary: fc.tuple(argument(intLiteral.map((s) => [s])), userSelection).map(([v, sel]): Doc => ['userByExternalId(externalUserId: ', ...v, `) ${sel}`]),
  };
  const userByExternalIdVariables = fc
    .record({ v: typedOrJunk(fc.oneof(fc.constantFrom(101, 102, 103, 104, 0, 2147483647), fc.integer())) })
    .map((variables) => ({
      doc: ['query Q($v: Int!) { userByExternalId(externalUserId: $v) { id login phone externalUserId } }'],
      kind: 'query' as const,
      variables,
    }));
  return { userByExternalId, userByExternalIdVariables };
}
