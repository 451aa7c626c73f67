import type { QueryResolvers } from '../../../__generated__/resolvers-types';
import { requireUser } from '../../../services/auth';

export const viewer: NonNullable<QueryResolvers['viewer']> = async (_parent, _args, ctx) => {
  const user = requireUser(await ctx.caller());
  return { applicationId: user.applicationId, userId: user.userId };
};
