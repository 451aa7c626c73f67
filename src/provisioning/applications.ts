// Applications and sessions: what the admin CLI, the demo seed and the tests create.
import { randomBytes } from 'node:crypto';
import type { Database } from '../db';
import { badInput } from '../errors';
import { isRegion, REGION_RULE } from '../services/phones';
import { hashSecret, newSecret, openSecret, sealSecret } from '../services/secrets';
import type { SessionsService } from '../services/sessions';
import * as validate from '../services/validate';
import { type PrismaClient, prismaOf } from './client';

/** What an SDK app is configured with: `QB.init(applicationId, authKey, authSecret)`. */
export interface AuthCredentials {
  authKey: string;
  authSecret: string;
}

export interface CreatedApplication extends AuthCredentials {
  application: { id: number; name: string; phoneRegion: string | null };
  /** Shown here and never again: only its hash is stored. */
  apiKey: string;
}

export class ApplicationsProvisioning {
  constructor(
    /** Prisma's client is made on the first use (client.ts). */
    private readonly database: Database,
    /** Seals auth secrets at rest (SECRETS_KEY). */
    private readonly secretsKey: Buffer,
    private readonly sessions: SessionsService,
  ) {}

  private get prisma(): PrismaClient {
    return prismaOf(this.database);
  }

  /** Every application's id, in order (the admin CLI's `phones:normalise` of all). */
  async ids(): Promise<number[]> {
    return (await this.prisma.application.findMany({ select: { id: true }, orderBy: { id: 'asc' } })).map((a) => a.id);
  }

  /** Every application, for `apps:list`: no secret, not even a hash. */
  async list(): Promise<
    { id: number; name: string; phoneRegion: string | null; createdAt: Date; disabledAt: Date | null; users: number; liveSessions: number }[]
  > {
    const now = new Date();
    const rows = await this.prisma.application.findMany({
      orderBy: { id: 'asc' },
      select: {
        id: true,
        name: true,
        phoneRegion: true,
        createdAt: true,
        disabledAt: true,
        _count: { select: { users: true, sessions: { where: { expiresAt: { gt: now } } } } },
      },
    });
    return rows.map(({ _count, ...application }) => ({ ...application, users: _count.users, liveSessions: _count.sessions }));
  }

  /**
   * Live sessions of an application (or of one user), most recently used
   * first, at most `limit`: their ids, never their tokens (only hashes are stored).
   */
  async liveSessions(
    filter: { applicationId?: number; userId?: number },
    limit: number,
  ): Promise<{ id: number; applicationId: number; userId: number | null; createdAt: Date; expiresAt: Date }[]> {
    return this.prisma.session.findMany({
      where: { ...filter, expiresAt: { gt: new Date() } },
      orderBy: { expiresAt: 'desc' },
      take: limit,
      select: { id: true, applicationId: true, userId: true, createdAt: true, expiresAt: true },
    });
  }

  /**
   * Ends sessions: one by id, a user's, or an application's. Answers the
   * token hashes of those ended, for the running instances' caches to forget.
   */
  async revokeSessions(filter: { id?: number; userId?: number; applicationId?: number }): Promise<string[]> {
    if (filter.id === undefined && filter.userId === undefined && filter.applicationId === undefined) throw badInput('base', 'name the sessions to end');
    return this.prisma.$transaction(async (tx) => {
      const ended = await tx.session.findMany({ where: filter, select: { tokenHash: true } });
      await tx.session.deleteMany({ where: filter });
      return ended.map((session) => session.tokenHash);
    });
  }

  /**
   * Disables an application (its API key, sessions and session requests are
   * refused from now on) or enables it again. Nothing else changes: its users,
   * sessions, keys and data stay, and enabling gives every credential back
   * (sessions keep expiring on their own clock meanwhile). Disabling one
   * already disabled keeps the time it was disabled. Running instances'
   * caches are told by the caller (the revocation bus).
   */
  async setDisabled(applicationId: number, disabled: boolean): Promise<{ id: number; disabledAt: Date | null }> {
    return this.prisma.$transaction(async (tx) => {
      await tx.application.updateMany({
        where: { id: applicationId, disabledAt: disabled ? null : { not: null } },
        data: { disabledAt: disabled ? new Date() : null },
      });
      const app = await tx.application.findUnique({ where: { id: applicationId }, select: { id: true, disabledAt: true } });
      if (!app) throw badInput('applicationId', `application ${applicationId} does not exist`);
      return app;
    });
  }

  /** The first application of that name (the demo's), or null. */
  async idByName(name: string): Promise<number | null> {
    return (await this.prisma.application.findFirst({ where: { name }, select: { id: true }, orderBy: { id: 'asc' } }))?.id ?? null;
  }

  /** Creates an application with its API key and its auth key and secret. */
  /** `region`: where phones without a country code are read (phones.ts); none: they match by their digits only. */
  async create(name: string, region: string | null = null): Promise<CreatedApplication> {
    const max = validate.LIMITS.applicationNameLength;
    if (name.trim() === '' || !validate.atMostCharacters(name, max)) throw badInput('name', `name must be 1 to ${max} characters`);
    if (region !== null && !isRegion(region)) throw badInput('region', REGION_RULE);
    const apiKey = newSecret();
    const auth = newAuthCredentials();
    const application = await this.prisma.application.create({
      data: {
        name,
        phoneRegion: region,
        apiKeyHash: hashSecret(apiKey),
        authKey: auth.authKey,
        authSecretSealed: sealSecret(auth.authSecret, this.secretsKey),
      },
      select: { id: true, name: true, phoneRegion: true },
    });
    return { application, apiKey, ...auth };
  }

  /** New auth key and secret for an application (a leaked secret, or an application made before they existed). */
  async rotateAuth(applicationId: number): Promise<AuthCredentials> {
    const auth = newAuthCredentials();
    const { count } = await this.prisma.application.updateMany({
      where: { id: applicationId },
      data: { authKey: auth.authKey, authSecretSealed: sealSecret(auth.authSecret, this.secretsKey) },
    });
    if (count === 0) throw badInput('applicationId', `application ${applicationId} does not exist`);
    return auth;
  }

  /**
   * A new API key for an application: the old one stops working (at once on
   * this database; other instances' caches are told by the caller through the
   * revocation bus, with `previousKeyHash`).
   */
  async rotateApiKey(applicationId: number): Promise<{ apiKey: string; previousKeyHash: string }> {
    const app = await this.prisma.application.findUnique({ where: { id: applicationId }, select: { apiKeyHash: true } });
    if (!app) throw badInput('applicationId', `application ${applicationId} does not exist`);
    const apiKey = newSecret();
    // Only if no one rotated it meanwhile: the hash returned is the one replaced.
    const { count } = await this.prisma.application.updateMany({
      where: { id: applicationId, apiKeyHash: app.apiKeyHash },
      data: { apiKeyHash: hashSecret(apiKey) },
    });
    if (count === 0) throw badInput('applicationId', `application ${applicationId} changed meanwhile: try again`);
    return { apiKey, previousKeyHash: app.apiKeyHash };
  }

  /** The application's auth key and secret (the demo prints them), or null when it has none. */
  async authCredentials(applicationId: number): Promise<AuthCredentials | null> {
    const app = await this.prisma.application.findUnique({
      where: { id: applicationId },
      select: { authKey: true, authSecretSealed: true },
    });
    if (!app?.authKey || !app.authSecretSealed) return null;
    return { authKey: app.authKey, authSecret: openSecret(app.authSecretSealed, this.secretsKey) };
  }

  /**
   * A user session when userId is given, else an application session.
   * `ended`: token hashes of the user's sessions the cap ended to make room.
   */
  async createSession(applicationId: number, userId?: number): Promise<{ token: string; expiresAt: Date; ended: string[] }> {
    if (userId !== undefined) {
      const user = await this.prisma.user.findFirst({ where: { id: userId, applicationId }, select: { id: true } });
      if (!user) throw badInput('userId', `user ${userId} is not a user of application ${applicationId}`);
    }
    const app = await this.prisma.application.findUnique({ where: { id: applicationId }, select: { disabledAt: true } });
    if (!app) throw badInput('applicationId', `application ${applicationId} does not exist`);
    // Its token would be refused at once: say so now.
    if (app.disabledAt) throw badInput('applicationId', `application ${applicationId} is disabled (admin app:enable --app ${applicationId})`);
    // Through the sessions' statement: the cap on a user's sessions holds for these too.
    const { token, expiresAt, ended } = await this.sessions.openUnsigned(applicationId, userId ?? null);
    return { token, expiresAt, ended };
  }
}

/** Auth keys name an application in session requests (apps ship them); secrets are HMAC keys. */
const newAuthCredentials = (): AuthCredentials => ({
  authKey: randomBytes(12).toString('base64url'),
  authSecret: newSecret(),
});
