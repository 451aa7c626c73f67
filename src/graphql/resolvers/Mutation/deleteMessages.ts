import type { MutationResolvers } from '../../../__generated__/resolvers-types';

export const deleteMessages: NonNullable<MutationResolvers['deleteMessages']> = async (_parent, args, ctx) =>
  ctx.services.chat.delete(await ctx.caller(), args.ids, args.force ?? false);
