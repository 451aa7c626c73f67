import type { QueryResolvers } from '../../../__generated__/resolvers-types';

export const session: NonNullable<QueryResolvers['session']> = async (_parent, _args, ctx) => ctx.services.sessions.current(await ctx.caller());
