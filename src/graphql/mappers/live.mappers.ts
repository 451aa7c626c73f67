// What the subscription resolvers of schema/live.graphql yield for a
// MessageAddedEvent: the event as stored (src/services/live.ts), its message
// read for each subscriber when it is delivered (resolvers/MessageAddedEvent.ts).
export interface MessageAddedEventMapper {
  cursor: string;
  /** 24-hex. */
  messageId: string;
  /** 24-hex. */
  dialogId: string;
  /** The sender (the events table's user_id for a new message). */
  senderId: number;
  /** When the event was written: the message's time if its row is gone by delivery. */
  createdAt: Date;
}
