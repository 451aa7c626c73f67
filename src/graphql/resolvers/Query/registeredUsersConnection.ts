import type { QueryResolvers } from '../../../__generated__/resolvers-types';

export const registeredUsersConnection: NonNullable<QueryResolvers['registeredUsersConnection']> = async (_parent, args, ctx) => {
  // `first` has a default (100): paging backward, it is not applied.
  const backward = (args.last ?? args.before ?? null) !== null;
  const page = await ctx.services.addressBook.registeredUsersPage(await ctx.caller(), args.udid, { ...args, first: backward ? null : args.first });
  return { edges: page.users.map((node, i) => ({ cursor: page.cursors[i]!, node })), pageInfo: page.pageInfo };
};
