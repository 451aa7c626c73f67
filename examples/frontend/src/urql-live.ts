// urql's subscriptions (the client made with a socket: urql.ts,
// createUrqlClient's `live`): each result of the source is one event.
import type { Client } from '@urql/core';
import { MessageAdded } from './live';
import type { MessageAddedSubscription } from './__generated__/graphql';

/** Calls `onAdded` with each new message of the dialog (every dialog of the user without `dialogId`); returns the function that stops. */
export function onMessageAdded(
  client: Client,
  dialogId: string | undefined,
  onAdded: (event: MessageAddedSubscription['messageAdded']) => void,
  onError: (error: Error) => void = () => {},
): () => void {
  const subscription = client.subscription(MessageAdded, { dialogId }).subscribe((result) => {
    if (result.error) onError(result.error);
    else if (result.data) onAdded(result.data.messageAdded);
  });
  return () => subscription.unsubscribe();
}
