import type { ViewerResolvers } from '../../__generated__/resolvers-types';
import { loadUsers } from '../loaders';

export const Viewer: ViewerResolvers = {
  user: async (viewer, _args, ctx) => (await loadUsers(ctx, viewer.applicationId, [viewer.userId]))[0] ?? null,
  dialogs: (viewer, args, ctx) => ctx.services.dialogs.connection(viewer, args),
  registeredUsers: async (_viewer, args, ctx) => {
    const page = await ctx.services.addressBook.registeredUsersPage(await ctx.caller(), args.udid, args);
    return { edges: page.users.map((node, i) => ({ cursor: page.cursors[i]!, node })), pageInfo: page.pageInfo };
  },
};
