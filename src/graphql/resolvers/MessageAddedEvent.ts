import type { MessageAddedEventResolvers } from '../../__generated__/resolvers-types';
import { requireUser } from '../../services/auth';

export const MessageAddedEvent: MessageAddedEventResolvers = {
  // Read when the event is delivered, as its subscriber sees the message then:
  // deleted for everyone or hidden by them meanwhile, its body is null (the
  // deletion's event follows), rather than the event skipped, so that every
  // subscriber owed the event gets it once and a replay gives the same events.
  // A row gone altogether (its dialog or sender deleted) is shown from the
  // event, without a body.
  message: async (event, _args, ctx) => {
    const caller = requireUser(await ctx.caller());
    return (
      (await ctx.services.chat.asDelivered(caller.applicationId, caller.userId, event.messageId)) ?? {
        id: event.messageId,
        dialogId: event.dialogId,
        senderId: event.senderId,
        body: null,
        createdAt: event.createdAt,
      }
    );
  },
};
