// The services own storage: resolvers, the REST shim (through the resolvers),
// the admin CLI and the demo seed reach the database through these, by the
// typed SQL statements of src/db/statements alone. The writes that set
// tenants up one at a time (applications, users, dialogs, messages) are
// src/provisioning's, the one module on Prisma's client.
import type { Database } from '../db';
import { AddressBookService, type AddressBookOptions } from './address-book';
import { type AuthOptions, AuthService } from './auth';
import { DialogsService } from './dialogs';
import type { LoginAttemptsOptions } from './login-attempts';
import { ChatService, type ChatOptions } from './chat';
import type { ReadReplicas } from '../scale/replicas';
import { PhoneKeysService } from './phone-keys';
import { newSecretsKey } from './secrets';
import { SessionsService, type SessionsOptions } from './sessions';
import { Sweeper, type SweeperOptions } from './sweeper';
import { UsersService } from './users';

export interface Services {
  auth: AuthService;
  users: UsersService;
  chat: ChatService;
  /** Dialogs as their occupants see them, and the users they name. */
  dialogs: DialogsService;
  addressBook: AddressBookService;
  /** Applications' phone regions and the keys of stored phones (admin CLI). */
  phoneKeys: PhoneKeysService;
  sessions: SessionsService;
  /** Removes expired sessions, old nonces and retained content; started by main, run once by `admin sweep`. */
  sweeper: Sweeper;
  /** Stops the sweeper, writes what is pending (session touches) and stops the services' timers. */
  close(): Promise<void>;
}

export interface ServicesOptions {
  auth?: AuthOptions;
  /**
   * Opens applications' auth secrets (SECRETS_KEY), which provisioning seals
   * with the same key. main and the admin CLI always pass the configured key;
   * absent (tests), a key of this instance alone, so its secrets cannot be
   * opened by another process.
   */
  secretsKey?: Buffer;
  sessions?: SessionsOptions;
  /** Read replicas for user lookups and registered users (DATABASE_READ_URL). */
  reads?: ReadReplicas;
  /** Deleted content's retention (DELETED_CONTENT_RETENTION_S). */
  chat?: ChatOptions;
  /** The sweeper's interval and batch size (its nonce cut-off follows `sessions`' timestamp window). */
  sweeper?: SweeperOptions;
  /** Address books' bounds (issue 31) and where the discovery budget is counted. */
  addressBooks?: AddressBookOptions;
}

export type { AddressBookOptions, LoginAttemptsOptions, ChatOptions, SessionsOptions, SweeperOptions };

export function createServices(database: Pick<Database, 'pool'>, options: ServicesOptions = {}): Services {
  const { pool } = database;
  const auth = new AuthService(pool, options.auth);
  const secretsKey = options.secretsKey ?? newSecretsKey();
  const sessions = new SessionsService(pool, auth, secretsKey, options.sessions);
  const chat = new ChatService(pool, options.chat);
  const sweeper = new Sweeper(pool, { timestampWindowSeconds: options.sessions?.timestampWindowSeconds, ...options.sweeper });
  return {
    auth,
    users: new UsersService(pool, options.reads),
    chat,
    dialogs: new DialogsService(pool, chat),
    addressBook: new AddressBookService(pool, options.reads, options.addressBooks),
    phoneKeys: new PhoneKeysService(pool),
    sessions,
    sweeper,
    async close() {
      await sweeper.stop();
      await auth.close();
    },
  };
}

export type { Caller } from './caller';
export type { Credentials } from './auth';
