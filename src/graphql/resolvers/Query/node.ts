import type { QueryResolvers } from '../../../__generated__/resolvers-types';
import { requireUser } from '../../../services/auth';
import { selectedArguments } from '../../selection';

// A dialog's history page is read with the dialog, in one statement, when the
// request selects one Dialog.messages under it (a screen's history query):
// the page's occupancy check is the dialog's own.
export const node: NonNullable<QueryResolvers['node']> = async (_parent, args, ctx, info) => {
  const [found] = await ctx.services.dialogs.nodes(requireUser(await ctx.caller()), [args.id], selectedArguments(info, 'Dialog', 'messages'));
  return found ?? null;
};
