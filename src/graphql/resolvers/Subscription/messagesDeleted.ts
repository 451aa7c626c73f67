import type { SubscriptionResolvers } from './../../../__generated__/resolvers-types';
import { deletionEvent, liveEvents } from '../../subscriptions';

export const messagesDeleted: NonNullable<SubscriptionResolvers['messagesDeleted']> = {
  subscribe: (_parent, args, ctx) => liveEvents(ctx, args, ['deleted', 'hidden'], (event) => ({ messagesDeleted: deletionEvent(event) })),
};
