import type { QueryResolvers } from '../../../__generated__/resolvers-types';
import { requireUser } from '../../../services/auth';

export const nodes: NonNullable<QueryResolvers['nodes']> = async (_parent, args, ctx) => ctx.services.dialogs.nodes(requireUser(await ctx.caller()), args.ids);
