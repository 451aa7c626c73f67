import type { QueryResolvers } from '../../../__generated__/resolvers-types';

export const registeredUsersConnection: NonNullable<QueryResolvers['registeredUsersConnection']> = async (_parent, args, ctx) => {
  const page = await ctx.services.addressBook.registeredUsersPage(await ctx.caller(), args.udid, args.first, args.after);
  return {
    edges: page.users.map((node, i) => ({ cursor: page.cursors[i]!, node })),
    pageInfo: { hasNextPage: page.hasNextPage, endCursor: page.cursors.at(-1) ?? null },
  };
};
