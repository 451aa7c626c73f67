import type { QueryResolvers } from '../../../__generated__/resolvers-types';

export const registeredUsers: NonNullable<QueryResolvers['registeredUsers']> = async (_parent, args, ctx) =>
  ctx.services.addressBook.registeredUsers(await ctx.caller(), args.udid);
