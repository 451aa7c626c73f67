// Per-test tenants: every test seeds an application of its own (users,
// sessions, a dialog with messages), so tests never share or depend on data.
import { randomBytes } from 'node:crypto';
import type { User } from '../../src/__generated__/prisma/client';
import type { Database } from '../../src/db';
import { createProvisioning, type Provisioning } from '../../src/provisioning';
import { createServices, type Services, type ServicesOptions } from '../../src/services';
import { newSecretsKey } from '../../src/services/secrets';

let sequence = 0;
const unique = () => `${Date.now().toString(36)}${(sequence++).toString(36)}${randomBytes(3).toString('hex')}`;

export interface Tenant {
  applicationId: number;
  apiKey: string;
  /** What SDK apps sign session requests with. */
  authKey: string;
  authSecret: string;
  /** Owns `dialogId`. */
  owner: User;
  /** An occupant of `dialogId` who does not own it. */
  member: User;
  /** A user of the application outside the dialog. */
  outsider: User;
  ownerToken: string;
  memberToken: string;
  outsiderToken: string;
  /** An application session token (no user). */
  appToken: string;
  dialogId: string;
  /** Three messages in `dialogId`, oldest first. */
  messageIds: string[];
  /** Headers for each kind of credential. */
  as: {
    owner: Record<string, string>;
    member: Record<string, string>;
    outsider: Record<string, string>;
    app: Record<string, string>;
    apiKey: Record<string, string>;
    onBehalfOf(userId: number): Record<string, string>;
  };
}

/**
 * Services over a database without an app, and the provisioning that seeds
 * it: one secrets key for both (the services open what provisioning seals).
 */
export function servicesOver(database: Database, options: ServicesOptions = {}): { services: Services; provisioning: Provisioning } {
  const secretsKey = options.secretsKey ?? newSecretsKey();
  const services = createServices(database, { ...options, secretsKey });
  return { services, provisioning: createProvisioning(database, { secretsKey, services }) };
}

/** Phones are per tenant so that matching tests can reuse the same numbers. */
export async function seedTenant(provisioning: Provisioning): Promise<Tenant> {
  const { application, apiKey, authKey, authSecret } = await provisioning.applications.create(`tenant ${unique()}`);
  const applicationId = application.id;
  const user = (login: string, externalUserId: number, phone: string) =>
    provisioning.users.create({
      applicationId,
      login,
      password: 'password123',
      fullName: `${login} Example`,
      email: `${login}@example.com`,
      phone,
      externalUserId,
    });
  const owner = await user('owner', 101, '+10000000101');
  const member = await user('member', 102, '+10000000102');
  const outsider = await user('outsider', 103, '+10000000103');
  const dialog = await provisioning.chat.createDialog({ applicationId, ownerId: owner.id, occupantIds: [member.id] });
  const messageIds: string[] = [];
  for (const body of ['one', 'two', 'three']) {
    messageIds.push((await provisioning.chat.createMessage({ dialogId: dialog.id, senderId: owner.id, body })).id);
  }
  const session = async (userId?: number) => (await provisioning.applications.createSession(applicationId, userId)).token;
  const ownerToken = await session(owner.id);
  const memberToken = await session(member.id);
  const outsiderToken = await session(outsider.id);
  const appToken = await session();
  return {
    applicationId,
    apiKey,
    authKey,
    authSecret,
    owner,
    member,
    outsider,
    ownerToken,
    memberToken,
    outsiderToken,
    appToken,
    dialogId: dialog.id,
    messageIds,
    as: {
      owner: { 'SVC-Token': ownerToken },
      member: { 'SVC-Token': memberToken },
      outsider: { 'SVC-Token': outsiderToken },
      app: { 'SVC-Token': appToken },
      apiKey: { Authorization: `ApiKey ${apiKey}` },
      onBehalfOf: (userId: number) => ({ Authorization: `ApiKey ${apiKey}`, 'On-Behalf-Of': String(userId) }),
    },
  };
}

/** Ids of the messages `userId` sees in the dialog. */
export async function historyIds(services: Services, dialogId: string, userId: number): Promise<string[]> {
  return (await services.chat.history(dialogId, userId)).map((m) => m.id);
}

/** A user with every optional field set (external id 4242, login "full"). */
export function createFullUser(provisioning: Provisioning, applicationId: number): Promise<User> {
  return provisioning.users.create({
    applicationId,
    login: 'full',
    password: 'password123',
    fullName: 'Full Record',
    email: 'full@example.com',
    phone: '+4915112345678',
    website: 'https://example.com/full',
    externalUserId: 4242,
    facebookId: 'fb-4242',
    twitterId: 'tw-4242',
    userTags: ['alpha', 'beta'],
  });
}
