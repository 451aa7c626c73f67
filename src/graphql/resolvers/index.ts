// Every resolver, one file per root field. Types come from codegen; the User
// type's mapper is the Prisma User model, whose fields match it one to one.
import type { Resolvers } from '../../__generated__/graphql';
import { DateTime } from './DateTime';
import { deleteMessages } from './Mutation/deleteMessages';
import { uploadAddressBook } from './Mutation/uploadAddressBook';
import { registeredUsers } from './Query/registeredUsers';
import { userByExternalId } from './Query/userByExternalId';

export const resolvers: Resolvers = {
  DateTime,
  Query: { userByExternalId, registeredUsers },
  Mutation: { deleteMessages, uploadAddressBook },
};
