import type { MutationResolvers } from '../../../__generated__/resolvers-types';

export const login: NonNullable<MutationResolvers['login']> = async (_parent, args, ctx) => ctx.services.sessions.login(await ctx.caller(), args, ctx.address);
