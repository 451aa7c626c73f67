// Users: lookups scoped to the caller's application, the rules of a new
// user's fields, and bulk imports (one statement; a single user is created by
// src/provisioning/users.ts).
import { z } from 'zod';
import type { Pool } from 'pg';
import { readQuery, type ReadReplicas } from '../scale/replicas';
import { constraintViolation } from '../db';
import { run, transaction } from '../db/sql';
import { LOCK_APPLICATION_PHONES, REGION } from '../db/statements/phones';
import { BY_EXTERNAL_ID, CREATE_MANY } from '../db/statements/users';
import { AppError, MESSAGES, badInput } from '../errors';
import { refuseApplicationSession } from './auth';
import type { Caller } from './caller';
import { phoneKey } from './phones';
import * as validate from './validate';
import type { UserRecord } from '../db/statements/users';

const { LIMITS } = validate;

/** A string of `min` to `max` characters (code points: validate.characters), with the service's message. */
const characters = (field: string, max: number, min = 0) =>
  z
    .string()
    .refine(
      (value) => value.length >= min && validate.atMostCharacters(value, max) && (min === 0 || validate.characters(value) >= min),
      min === 0 ? `${field} must be at most ${max} characters` : `${field} must be ${min} to ${max} characters`,
    );

export const newUserSchema = z.object({
  applicationId: z.number().int().positive(),
  // Stored in NFC (issue 31): the same login typed on keyboards that compose (NFC) or decompose (NFD, macOS and iOS) names one user.
  login: characters('login', LIMITS.loginLength, 1).transform((login) => login.normalize('NFC')),
  password: characters('password', LIMITS.passwordLength, LIMITS.passwordMinLength),
  fullName: characters('fullName', LIMITS.fullNameLength).optional(),
  email: z.email().pipe(characters('email', LIMITS.emailLength)).optional(),
  phone: z.string().regex(validate.PHONE_PATTERN, validate.PHONE_RULE).optional(),
  website: z.url().pipe(characters('website', LIMITS.websiteLength)).optional(),
  externalUserId: z.number().int().min(1).max(LIMITS.externalUserIdMax).optional(),
  facebookId: characters('facebookId', LIMITS.socialIdLength).optional(),
  twitterId: characters('twitterId', LIMITS.socialIdLength).optional(),
  userTags: z
    .array(characters('userTags', LIMITS.userTagLength, 1).pipe(z.string().regex(/^[^,]+$/)))
    .max(LIMITS.userTags)
    .optional(),
});

export type NewUser = z.input<typeof newUserSchema>;

const importedUserSchema = newUserSchema
  .pick({ login: true, fullName: true, email: true, phone: true, externalUserId: true })
  .extend({ passwordHash: z.string().regex(/^scrypt\$[\w-]+\$[\w-]+$/, 'passwordHash must come from hashPassword') });

export type ImportedUser = z.input<typeof importedUserSchema>;

export class UsersService {
  constructor(
    private readonly pool: Pool,
    /** Read replicas (DATABASE_READ_URL) for lookups; undefined: the primary. */
    private readonly reads?: ReadReplicas,
  ) {}

  /** Needs a user session or an API key: application sessions cannot read users. */
  async findByExternalId(caller: Caller, externalUserId: number): Promise<UserRecord> {
    refuseApplicationSession(caller);
    const id = validate.externalUserId(externalUserId);
    const [user] = await readQuery(this.reads, this.pool, caller, BY_EXTERNAL_ID, [caller.applicationId, id]);
    // The same answer whether the id is unknown or used in another application.
    if (!user) throw new AppError('NOT_FOUND', MESSAGES.userNotFound);
    return user;
  }

  /**
   * Imports many users of one application in one statement (the benchmark's
   * seed, bulk imports). Rows are validated as a single user's creation
   * validates them (newUserSchema); the password comes already hashed
   * (`hashPassword`), as it does from a system the users are imported from,
   * because hashing is deliberately slow.
   * Returns the number of users created.
   */
  async createMany(applicationId: number, users: readonly ImportedUser[]): Promise<number> {
    const columns = {
      login: [] as string[],
      passwordHash: [] as string[],
      fullName: [] as (string | null)[],
      email: [] as (string | null)[],
      phone: [] as (string | null)[],
      externalUserId: [] as (number | null)[],
    };
    users.forEach((user, index) => {
      const parsed = importedUserSchema.safeParse(user);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw badInput(`users[${index}].${String(issue.path[0] ?? 'base')}`, issue.message);
      }
      columns.login.push(parsed.data.login);
      columns.passwordHash.push(parsed.data.passwordHash);
      columns.fullName.push(parsed.data.fullName ?? null);
      columns.email.push(parsed.data.email ?? null);
      columns.phone.push(parsed.data.phone ?? null);
      columns.externalUserId.push(parsed.data.externalUserId ?? null);
    });
    try {
      // As create(): the phones' keys in the region read under the application's lock.
      const [row] = await transaction(this.pool, CREATE_MANY.name, async (client) => {
        await run(client, LOCK_APPLICATION_PHONES, [applicationId]);
        const region = (await run(client, REGION, [applicationId]))[0]?.phoneRegion ?? null;
        const keys = columns.phone.map((phone) => (phone === null ? null : phoneKey(phone, region)));
        return run(client, CREATE_MANY, [
          applicationId,
          columns.login,
          columns.passwordHash,
          columns.fullName as string[],
          columns.email as string[],
          columns.phone as string[],
          columns.externalUserId as number[],
          keys as string[],
        ]);
      });
      return row!.created;
    } catch (error) {
      const violated = constraintViolation(error);
      if (violated === 'unique') throw badInput('users', 'a login, email or external user id is already taken in this application');
      if (violated === 'foreign-key') throw badInput('applicationId', `application ${applicationId} does not exist`);
      throw error;
    }
  }
}
