// The services own storage: resolvers, the REST shim (through the resolvers),
// the admin CLI and the demo seed all reach the database only through these.
import type { Database } from '../db';
import { AddressBookService } from './address-book';
import { ApplicationsService } from './applications';
import { type AuthOptions, AuthService } from './auth';
import type { LoginAttemptsOptions } from './login-attempts';
import { MessagesService } from './messages';
import type { ReadReplicas } from '../scale/replicas';
import { newSecretsKey } from './secrets';
import { SessionsService, type SessionsOptions } from './sessions';
import { UsersService } from './users';

export interface Services {
  auth: AuthService;
  users: UsersService;
  messages: MessagesService;
  addressBook: AddressBookService;
  applications: ApplicationsService;
  sessions: SessionsService;
  /** Writes what is pending (session touches) and stops the services' timers. */
  close(): Promise<void>;
}

export interface ServicesOptions {
  auth?: AuthOptions;
  /**
   * Seals applications' auth secrets (SECRETS_KEY). main and the admin CLI
   * always pass the configured key; absent (tests), a key of this instance
   * alone, so its secrets cannot be opened by another process.
   */
  secretsKey?: Buffer;
  sessions?: SessionsOptions;
  /** Read replicas for user lookups and registered users (DATABASE_READ_URL). */
  reads?: ReadReplicas;
}

export type { LoginAttemptsOptions, SessionsOptions };

export function createServices(database: Pick<Database, 'prisma' | 'pool'>, options: ServicesOptions = {}): Services {
  const { prisma, pool } = database;
  const auth = new AuthService(pool, options.auth);
  const secretsKey = options.secretsKey ?? newSecretsKey();
  return {
    auth,
    users: new UsersService(prisma, pool, options.reads),
    messages: new MessagesService(prisma, pool),
    addressBook: new AddressBookService(pool, options.reads),
    applications: new ApplicationsService(prisma, secretsKey),
    sessions: new SessionsService(pool, auth, secretsKey, options.sessions),
    close: () => auth.close(),
  };
}

export type { Caller } from './caller';
export type { Credentials } from './auth';
