import type { QueryResolvers } from '../../../__generated__/resolvers-types';
import { requireUser } from '../../../services/auth';

export const node: NonNullable<QueryResolvers['node']> = async (_parent, args, ctx) => {
  const [found] = await ctx.services.dialogs.nodes(requireUser(await ctx.caller()), [args.id]);
  return found ?? null;
};
