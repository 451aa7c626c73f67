/* This file was automatically generated. DO NOT UPDATE MANUALLY. */
    import type   { Resolvers } from './resolvers-types';
    import    { addressBook as Query_addressBook } from './../graphql/resolvers/Query/addressBook';
import    { registeredUsers as Query_registeredUsers } from './../graphql/resolvers/Query/registeredUsers';
import    { registeredUsersConnection as Query_registeredUsersConnection } from './../graphql/resolvers/Query/registeredUsersConnection';
import    { session as Query_session } from './../graphql/resolvers/Query/session';
import    { userByExternalId as Query_userByExternalId } from './../graphql/resolvers/Query/userByExternalId';
import    { createSession as Mutation_createSession } from './../graphql/resolvers/Mutation/createSession';
import    { deleteMessages as Mutation_deleteMessages } from './../graphql/resolvers/Mutation/deleteMessages';
import    { endSession as Mutation_endSession } from './../graphql/resolvers/Mutation/endSession';
import    { login as Mutation_login } from './../graphql/resolvers/Mutation/login';
import    { logout as Mutation_logout } from './../graphql/resolvers/Mutation/logout';
import    { uploadAddressBook as Mutation_uploadAddressBook } from './../graphql/resolvers/Mutation/uploadAddressBook';
import    { messagesDeleted as Subscription_messagesDeleted } from './../graphql/resolvers/Subscription/messagesDeleted';
import    { Session } from './../graphql/resolvers/Session';
import    { User } from './../graphql/resolvers/User';
import    { DateTime } from './../graphql/resolvers/DateTime';
import    { SignedText } from './../graphql/resolvers/SignedText';
    export const resolvers: Resolvers = {
      Query: { addressBook: Query_addressBook,registeredUsers: Query_registeredUsers,registeredUsersConnection: Query_registeredUsersConnection,session: Query_session,userByExternalId: Query_userByExternalId },
      Mutation: { createSession: Mutation_createSession,deleteMessages: Mutation_deleteMessages,endSession: Mutation_endSession,login: Mutation_login,logout: Mutation_logout,uploadAddressBook: Mutation_uploadAddressBook },
      Subscription: { messagesDeleted: Subscription_messagesDeleted },
      Session: Session,
User: User,
DateTime: DateTime,
SignedText: SignedText
    }