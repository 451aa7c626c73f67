import type { MutationResolvers } from '../../../__generated__/resolvers-types';
import { databaseIdOf } from '../../../services/global-id';

export const messageSend: NonNullable<MutationResolvers['messageSend']> = async (_parent, { input }, ctx) => {
  const clientMutationId = input.clientMutationId ?? null;
  // A global id of another type, or no id at all, names no dialog: the service answers DIALOG_NOT_FOUND.
  const sent = await ctx.services.chat.send(await ctx.caller(), databaseIdOf(input.dialogId, 'Dialog') ?? '', input.body);
  if ('refused' in sent) {
    const { code, field, message } = sent.refused;
    return { message: null, userErrors: [{ code, field: ['input', field], message }], clientMutationId };
  }
  return { message: sent.message, userErrors: [], clientMutationId };
};
