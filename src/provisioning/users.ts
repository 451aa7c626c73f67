// Users one at a time: what the admin CLI, the demo seed and the tests create
// (bulk imports are one statement of the service's: UsersService.createMany).
import type { User } from '../__generated__/prisma/client';
import { constraintViolation, type Database } from '../db';
import { badInput } from '../errors';
import { phoneKey } from '../services/phones';
import { hashPassword } from '../services/secrets';
import { type NewUser, newUserSchema } from '../services/users';
import { type PrismaClient, prismaOf } from './client';

export class UsersProvisioning {
  /** Prisma's client is made on the first use (client.ts). */
  constructor(private readonly database: Database) {}

  private get prisma(): PrismaClient {
    return prismaOf(this.database);
  }

  async create(input: NewUser): Promise<User> {
    const parsed = newUserSchema.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = String(issue.path[0] ?? 'base');
      throw badInput(field, issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}`);
    }
    const { password, userTags, ...fields } = parsed.data;
    const passwordHash = hashPassword(password);
    try {
      if (fields.phone === undefined) {
        return await this.prisma.user.create({ data: { ...fields, passwordHash, userTags: (userTags ?? []).join(',') } });
      }
      // The phone's key, in the application's region, read under the lock
      // that keeps the region from changing until this commits (db/statements/phones.ts).
      const phone = fields.phone;
      return await this.prisma.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(address_book_matches_lock_key(${fields.applicationId}::int))`;
        const app = await tx.application.findUnique({ where: { id: fields.applicationId }, select: { phoneRegion: true } });
        const phoneKeyValue = phoneKey(phone, app?.phoneRegion ?? null);
        return tx.user.create({ data: { ...fields, phoneKey: phoneKeyValue, passwordHash, userTags: (userTags ?? []).join(',') } });
      });
    } catch (error) {
      const violated = constraintViolation(error);
      if (violated === 'unique') throw badInput('login', 'login, email or external user id is already taken in this application');
      if (violated === 'foreign-key') throw badInput('applicationId', `application ${fields.applicationId} does not exist`);
      throw error;
    }
  }

  /** The user of that login in the application (the demo's), or null. */
  byLogin(applicationId: number, login: string): Promise<User | null> {
    return this.prisma.user.findFirst({ where: { applicationId, login } });
  }

  /** The application of a user (the admin CLI acts as them), or null when there is no such user. */
  async applicationOf(userId: number): Promise<number | null> {
    return (await this.prisma.user.findUnique({ where: { id: userId }, select: { applicationId: true } }))?.applicationId ?? null;
  }
}
