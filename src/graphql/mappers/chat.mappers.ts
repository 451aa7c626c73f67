// What the resolvers of schema/chat.graphql return for a Dialog and a
// Message: the rows of the statements that read them (for the caller: a
// dialog's last message is the newest of the caller's history).
export type { DialogRow as DialogMapper } from '../../services/dialogs';
export type { MessageRow as MessageMapper } from '../../services/chat';
export type { DialogPage as DialogConnectionMapper } from '../../services/dialogs';
