// The services own storage: resolvers, the REST shim (through the resolvers),
// the admin CLI and the demo seed all reach the database only through these.
import type { PrismaClient } from '../db';
import { AddressBookService } from './address-book';
import { ApplicationsService } from './applications';
import { AuthService } from './auth';
import { MessagesService } from './messages';
import { UsersService } from './users';

export interface Services {
  auth: AuthService;
  users: UsersService;
  messages: MessagesService;
  addressBook: AddressBookService;
  applications: ApplicationsService;
}

export function createServices(prisma: PrismaClient): Services {
  return {
    auth: new AuthService(prisma),
    users: new UsersService(prisma),
    messages: new MessagesService(prisma),
    addressBook: new AddressBookService(prisma),
    applications: new ApplicationsService(prisma),
  };
}

export type { Caller } from './caller';
export type { Credentials } from './auth';
