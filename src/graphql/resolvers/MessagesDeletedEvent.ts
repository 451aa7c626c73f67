import type { MessagesDeletedEventResolvers } from '../../__generated__/resolvers-types';
import { requireUser } from '../../services/auth';
import { databaseIdOf } from '../../services/global-id';

export const MessagesDeletedEvent: MessagesDeletedEventResolvers = {
  // Read when the event is delivered, as its subscriber sees the dialog then: null once they left it.
  dialog: async (event, _args, ctx) => {
    const dialogId = databaseIdOf(String(event.dialogId), 'Dialog');
    return dialogId === undefined ? null : ((await ctx.services.dialogs.get(requireUser(await ctx.caller()), dialogId)) ?? null);
  },
};
