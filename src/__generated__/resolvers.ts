/* This file was automatically generated. DO NOT UPDATE MANUALLY. */
    import type   { Resolvers } from './resolvers-types';
    import    { addressBook as Query_addressBook } from './../graphql/resolvers/Query/addressBook';
import    { node as Query_node } from './../graphql/resolvers/Query/node';
import    { nodes as Query_nodes } from './../graphql/resolvers/Query/nodes';
import    { registeredUsers as Query_registeredUsers } from './../graphql/resolvers/Query/registeredUsers';
import    { registeredUsersConnection as Query_registeredUsersConnection } from './../graphql/resolvers/Query/registeredUsersConnection';
import    { session as Query_session } from './../graphql/resolvers/Query/session';
import    { userByExternalId as Query_userByExternalId } from './../graphql/resolvers/Query/userByExternalId';
import    { viewer as Query_viewer } from './../graphql/resolvers/Query/viewer';
import    { createSession as Mutation_createSession } from './../graphql/resolvers/Mutation/createSession';
import    { deleteMessages as Mutation_deleteMessages } from './../graphql/resolvers/Mutation/deleteMessages';
import    { endSession as Mutation_endSession } from './../graphql/resolvers/Mutation/endSession';
import    { login as Mutation_login } from './../graphql/resolvers/Mutation/login';
import    { logout as Mutation_logout } from './../graphql/resolvers/Mutation/logout';
import    { messageSend as Mutation_messageSend } from './../graphql/resolvers/Mutation/messageSend';
import    { messagesDelete as Mutation_messagesDelete } from './../graphql/resolvers/Mutation/messagesDelete';
import    { uploadAddressBook as Mutation_uploadAddressBook } from './../graphql/resolvers/Mutation/uploadAddressBook';
import    { messageAdded as Subscription_messageAdded } from './../graphql/resolvers/Subscription/messageAdded';
import    { messagesDeleted as Subscription_messagesDeleted } from './../graphql/resolvers/Subscription/messagesDeleted';
import    { Dialog } from './../graphql/resolvers/Dialog';
import    { DialogConnection } from './../graphql/resolvers/DialogConnection';
import    { Message } from './../graphql/resolvers/Message';
import    { MessageAddedEvent } from './../graphql/resolvers/MessageAddedEvent';
import    { MessagesDeletedEvent } from './../graphql/resolvers/MessagesDeletedEvent';
import    { Session } from './../graphql/resolvers/Session';
import    { User } from './../graphql/resolvers/User';
import    { Viewer } from './../graphql/resolvers/Viewer';
import    { DateTime } from './../graphql/resolvers/DateTime';
import    { SignedText } from './../graphql/resolvers/SignedText';
    export const resolvers: Resolvers = {
      Query: { addressBook: Query_addressBook,node: Query_node,nodes: Query_nodes,registeredUsers: Query_registeredUsers,registeredUsersConnection: Query_registeredUsersConnection,session: Query_session,userByExternalId: Query_userByExternalId,viewer: Query_viewer },
      Mutation: { createSession: Mutation_createSession,deleteMessages: Mutation_deleteMessages,endSession: Mutation_endSession,login: Mutation_login,logout: Mutation_logout,messageSend: Mutation_messageSend,messagesDelete: Mutation_messagesDelete,uploadAddressBook: Mutation_uploadAddressBook },
      Subscription: { messageAdded: Subscription_messageAdded,messagesDeleted: Subscription_messagesDeleted },
      Dialog: Dialog,
DialogConnection: DialogConnection,
Message: Message,
MessageAddedEvent: MessageAddedEvent,
MessagesDeletedEvent: MessagesDeletedEvent,
Session: Session,
User: User,
Viewer: Viewer,
DateTime: DateTime,
SignedText: SignedText
    }