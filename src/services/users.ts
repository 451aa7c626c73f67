// Users: lookups scoped to the caller's application, and creation (admin CLI, demo).
import { z } from 'zod';
import { Prisma, type User } from '../__generated__/prisma/client';
import type { PrismaClient } from '../db';
import { AppError, MESSAGES, badInput } from '../errors';
import type { Caller } from './caller';
import { hashPassword } from './secrets';
import * as validate from './validate';

/**
 * The columns of `users` under the Prisma model's field names, for raw
 * queries whose rows must be User models (resolvers and REST read those).
 */
export const USER_COLUMNS = Prisma.sql`
  u.id, u.application_id AS "applicationId", u.login, u.password_hash AS "passwordHash",
  u.full_name AS "fullName", u.email, u.phone, u.website,
  u.created_at AS "createdAt", u.updated_at AS "updatedAt", u.last_request_at AS "lastRequestAt",
  u.external_user_id AS "externalUserId", u.facebook_id AS "facebookId", u.twitter_id AS "twitterId",
  u.blob_id AS "blobId", u.custom_data AS "customData", u.age_over16 AS "ageOver16",
  u.allow_statistics_analysis AS "allowStatisticsAnalysis", u.allow_sales_activities AS "allowSalesActivities",
  u.parents_contacts AS "parentsContacts", u.user_tags AS "userTags"`;

const optionalText = (max: number) => z.string().max(max).optional();

export const newUserSchema = z.object({
  applicationId: z.number().int().positive(),
  login: z.string().min(1).max(255),
  password: z.string().min(8, 'password must be at least 8 characters').max(255),
  fullName: optionalText(255),
  email: z.email().max(255).optional(),
  phone: z.string().regex(validate.PHONE_PATTERN, 'phone must be 10 to 15 digits with an optional leading "+"').optional(),
  website: z.url().max(1024).optional(),
  externalUserId: z.number().int().min(1).max(validate.LIMITS.externalUserIdMax).optional(),
  facebookId: optionalText(255),
  twitterId: optionalText(255),
  userTags: z.array(z.string().min(1).max(64).regex(/^[^,]+$/)).max(50).optional(),
});

export type NewUser = z.input<typeof newUserSchema>;

export class UsersService {
  constructor(private readonly prisma: PrismaClient) {}

  /** Needs a user session or an API key: application sessions cannot read users. */
  async findByExternalId(caller: Caller, externalUserId: number): Promise<User> {
    if (caller.kind === 'application' && caller.via === 'session') throw new AppError('FORBIDDEN', MESSAGES.needUser);
    const id = validate.externalUserId(externalUserId);
    const user = await this.prisma.user.findUnique({
      where: { applicationId_externalUserId: { applicationId: caller.applicationId, externalUserId: id } },
    });
    // The same answer whether the id is unknown or used in another application.
    if (!user) throw new AppError('NOT_FOUND', MESSAGES.userNotFound);
    return user;
  }

  async create(input: NewUser): Promise<User> {
    const parsed = newUserSchema.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = String(issue.path[0] ?? 'base');
      throw badInput(field, issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}`);
    }
    const { password, userTags, ...fields } = parsed.data;
    try {
      return await this.prisma.user.create({
        data: { ...fields, passwordHash: hashPassword(password), userTags: (userTags ?? []).join(',') },
      });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
        throw badInput('login', 'login or external user id is already taken in this application');
      }
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2003') {
        throw badInput('applicationId', `application ${fields.applicationId} does not exist`);
      }
      throw error;
    }
  }
}
