import type { SubscriptionResolvers } from './../../../__generated__/resolvers-types';
import { deletionEvent, dialogIdArgument, liveSocketOf } from '../../subscriptions';
import { decodeCursor } from '../../../services/live';

export const messagesDeleted: NonNullable<SubscriptionResolvers['messagesDeleted']> = {
  subscribe: (_parent, args, ctx) =>
    liveSocketOf(ctx).subscribe({
      kinds: ['deleted', 'hidden'],
      dialogId: dialogIdArgument(args.dialogId),
      after: args.after == null ? undefined : decodeCursor(args.after),
      map: (event) => ({ messagesDeleted: deletionEvent(event) }),
    }),
};
