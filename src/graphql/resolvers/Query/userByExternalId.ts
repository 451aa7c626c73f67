import type { QueryResolvers } from '../../../__generated__/resolvers-types';

export const userByExternalId: NonNullable<QueryResolvers['userByExternalId']> = async (_parent, args, ctx) =>
  ctx.services.users.findByExternalId(await ctx.caller(), args.externalUserId);
