import type { MutationResolvers } from '../../../__generated__/resolvers-types';
import { toGlobalId } from '../../../services/global-id';

export const messagesDelete: NonNullable<MutationResolvers['messagesDelete']> = async (_parent, { input }, ctx) => {
  const result = await ctx.services.chat.deleteEach(await ctx.caller(), input.messageIds, input.scope ?? 'FOR_ME');
  return {
    outcomes: result.outcomes.map((o) => ({ ...o, messageId: o.messageId === null ? null : toGlobalId('Message', o.messageId) })),
    deletedMessageIds: result.deletedMessageIds.map((id) => toGlobalId('Message', id)),
    userErrors: result.userErrors.map((e) => ({ ...e, field: ['input', e.field] })),
    clientMutationId: input.clientMutationId ?? null,
  };
};
