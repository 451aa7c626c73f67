import type { MutationResolvers } from '../../../__generated__/resolvers-types';

export const logout: NonNullable<MutationResolvers['logout']> = async (_parent, _args, ctx) => {
  const caller = await ctx.caller();
  await ctx.services.sessions.logout(caller);
  return ctx.services.sessions.current(caller);
};
