import type { QueryResolvers } from '../../../__generated__/resolvers-types';

export const addressBook: NonNullable<QueryResolvers['addressBook']> = async (_parent, args, ctx) =>
  ctx.services.addressBook.contacts(await ctx.caller(), args.udid);
