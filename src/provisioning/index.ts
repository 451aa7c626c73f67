// Provisioning: the writes that set a tenant up, one at a time — applications
// and their keys, users, dialogs and messages, sessions handed out by an
// operator — for the admin CLI, the demo seed and the tests' fixtures. This
// folder alone uses Prisma's client (client.ts, loaded on the first write):
// the request path's services use only the typed SQL statements
// (src/db/statements), so a service that answers requests never loads it.
// Database errors are translated by the one constraintViolation() (src/db).
import type { Database } from '../db';
import type { Services } from '../services';
import { ApplicationsProvisioning } from './applications';
import { assertPrismaInstalled } from './client';
import { ChatProvisioning } from './chat';
import { UsersProvisioning } from './users';

export interface Provisioning {
  applications: ApplicationsProvisioning;
  users: UsersProvisioning;
  /** Dialogs and single messages. */
  chat: ChatProvisioning;
}

export interface ProvisioningOptions {
  /** Seals applications' auth secrets: the key the services open them with. */
  secretsKey: Buffer;
  /** Sessions are opened, and senders checked, by the services' own rules. */
  services: Pick<Services, 'sessions' | 'chat'>;
}

export function createProvisioning(database: Database, options: ProvisioningOptions): Provisioning {
  assertPrismaInstalled();
  return {
    applications: new ApplicationsProvisioning(database, options.secretsKey, options.services.sessions),
    users: new UsersProvisioning(database),
    chat: new ChatProvisioning(database, options.services.chat),
  };
}

export type { AuthCredentials, CreatedApplication } from './applications';
