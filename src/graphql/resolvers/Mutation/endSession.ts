import type { MutationResolvers } from '../../../__generated__/resolvers-types';

export const endSession: NonNullable<MutationResolvers['endSession']> = async (_parent, _args, ctx) => {
  await ctx.services.sessions.end(await ctx.caller());
  ctx.sessionEnded();
  return true;
};
