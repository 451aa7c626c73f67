import type { MessageResolvers } from '../../__generated__/resolvers-types';
import { requireUser } from '../../services/auth';
import { toGlobalId } from '../../services/global-id';
import { usersAsSelected } from '../loaders';

export const Message: MessageResolvers = {
  // The row's id is the 24-hex one: the GraphQL id is the global one.
  id: (message) => toGlobalId('Message', message.id),
  databaseId: (message) => message.id,
  dialog: async (message, _args, ctx) => {
    const caller = requireUser(await ctx.caller());
    return (await ctx.services.dialogs.get(caller, message.dialogId)) ?? null;
  },
  sender: async (message, _args, ctx, info) => {
    const caller = requireUser(await ctx.caller());
    return (await usersAsSelected(ctx, info, caller.applicationId, [message.senderId]))[0] ?? null;
  },
};
