// Input checks shared by the services. Each failure is a BAD_USER_INPUT
// AppError naming the input (in GraphQL terms), never a thrown ZodError.
import { badInput } from '../errors';

/** PostgreSQL integer and GraphQL Int: the bound of every integer id. */
export const INT32_MAX = 2_147_483_647;

export const LIMITS = {
  /** Spec: udid is at most 64 characters. */
  udidLength: 64,
  /** Not in the spec: ids per delete call. */
  idsPerDelete: 1000,
  /** Not in the spec: contacts per address-book upload. */
  contactsPerUpload: 10_000,
  contactNameLength: 255,
  /** Not in the spec: registered users per page (registeredUsersConnection's `first`). */
  registeredUsersPerPage: 1000,
  externalUserIdMax: INT32_MAX,
} as const;

/** Phones: 10 to 15 digits, an optional leading "+"; compared as exact strings. */
export const PHONE_PATTERN = /^\+?[0-9]{10,15}$/;
export const PHONE_RULE = 'phone must be 10 to 15 digits with an optional leading "+"';

/** PostgreSQL text cannot hold NUL: refuse it up front instead of failing in the database. */
export function text(value: string, field: string): string {
  if (value.includes('\u0000')) throw badInput(field, `${field} must not contain NUL characters`);
  return value;
}

export function udidContext(udid: string | null | undefined): string {
  if (udid === null || udid === undefined || udid === '') return '';
  // Characters as PostgreSQL counts them (varchar(64)): code points, not
  // UTF-16 units. A string over 4 units per allowed character is too long anyway.
  if (udid.length > LIMITS.udidLength && (udid.length > 4 * LIMITS.udidLength || [...udid].length > LIMITS.udidLength)) {
    throw badInput('udid', `udid must be at most ${LIMITS.udidLength} characters`);
  }
  return text(udid, 'udid');
}

export const EXTERNAL_USER_ID_RULE = `must be an integer between 1 and ${LIMITS.externalUserIdMax}`;

export function externalUserId(value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > LIMITS.externalUserIdMax) {
    throw badInput('externalUserId', EXTERNAL_USER_ID_RULE);
  }
  return value;
}
