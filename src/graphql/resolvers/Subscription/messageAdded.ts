import type { SubscriptionResolvers } from './../../../__generated__/resolvers-types';
import { addedEvent, liveEvents } from '../../subscriptions';

export const messageAdded: NonNullable<SubscriptionResolvers['messageAdded']> = {
  subscribe: (_parent, args, ctx) => liveEvents(ctx, args, ['added'], (event) => ({ messageAdded: addedEvent(event) })),
};
