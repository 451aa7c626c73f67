// The services own storage: resolvers, the REST shim (through the resolvers),
// the admin CLI and the demo seed all reach the database only through these.
import type { Database } from '../db';
import { AddressBookService } from './address-book';
import { ApplicationsService } from './applications';
import { type AuthOptions, AuthService } from './auth';
import { MessagesService } from './messages';
import { UsersService } from './users';

export interface Services {
  auth: AuthService;
  users: UsersService;
  messages: MessagesService;
  addressBook: AddressBookService;
  applications: ApplicationsService;
  /** Writes what is pending (session touches) and stops the services' timers. */
  close(): Promise<void>;
}

export interface ServicesOptions {
  auth?: AuthOptions;
}

export function createServices(database: Pick<Database, 'prisma' | 'pool'>, options: ServicesOptions = {}): Services {
  const { prisma, pool } = database;
  const auth = new AuthService(pool, options.auth);
  return {
    auth,
    users: new UsersService(prisma, pool),
    messages: new MessagesService(prisma, pool),
    addressBook: new AddressBookService(pool),
    applications: new ApplicationsService(prisma),
    close: () => auth.close(),
  };
}

export type { Caller } from './caller';
export type { Credentials } from './auth';
