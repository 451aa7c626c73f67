// The chat operations' fields: deleteMessages, with literals and with variables.
import fc from 'fast-check';
import { arb } from '../../support/fuzz';
import type { Blocks, Doc } from './documents';

export function chatFields({ argument, idList, boolLiteral, resultFields, realIds, typedOrJunk }: Blocks) {
  const deleteMessages = {
    weight: 3,
    arbitrary: fc
      .tuple(
        argument(idList),
        fc.option(argument(boolLiteral.map((s) => [s])), { nil: undefined }),
        resultFields(['successfullyDeleted', 'notFound', '__typename', 'x']),
      )
      .map(([ids, force, sel]): Doc => ['deleteMessages(ids: ', ...ids, ...(force ? [', force: ', ...force] : []), `) ${sel}`]),
  };
  const deleteMessagesVariables = fc
    .record({ v: typedOrJunk(fc.array(fc.oneof(fc.constantFrom(...realIds), arb.anyString(24)), { maxLength: 4 })), b: typedOrJunk(fc.boolean()) })
    .map((variables) => ({
      doc: ['mutation M($v: [ID!]!, $b: Boolean) { deleteMessages(ids: $v, force: $b) { successfullyDeleted notFound } }'],
      kind: 'mutation' as const,
      variables,
    }));
  return { deleteMessages, deleteMessagesVariables };
}
