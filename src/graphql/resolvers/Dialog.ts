import type { DialogResolvers } from '../../__generated__/resolvers-types';
import { requireUser } from '../../services/auth';
import { toGlobalId } from '../../services/global-id';
import { usersAsSelected } from '../loaders';

export const Dialog: DialogResolvers = {
  // The row's id is the 24-hex one: the GraphQL id is the global one.
  id: (dialog) => toGlobalId('Dialog', dialog.id),
  databaseId: (dialog) => dialog.id,
  owner: async (dialog, _args, ctx, info) => {
    const caller = requireUser(await ctx.caller());
    return (await usersAsSelected(ctx, info, caller.applicationId, [dialog.ownerId]))[0] ?? null;
  },
  occupants: async (dialog, _args, ctx, info) => {
    const caller = requireUser(await ctx.caller());
    return (await usersAsSelected(ctx, info, caller.applicationId, dialog.occupantIds)).filter((u) => u !== undefined);
  },
  lastMessage: (dialog) =>
    dialog.lastMessageId === null
      ? null
      : {
          id: dialog.lastMessageId,
          dialogId: dialog.id,
          senderId: dialog.lastMessageSenderId!,
          body: dialog.lastMessageBody,
          createdAt: dialog.lastMessageAt!,
        },
  messages: async (dialog, args, ctx) => {
    const caller = requireUser(await ctx.caller());
    return ctx.services.chat.connection({ applicationId: caller.applicationId, userId: caller.userId }, dialog.id, args, dialog.history);
  },
};
