// Input checks shared by the services. Each failure is a BAD_USER_INPUT
// AppError naming the input (in GraphQL terms), never a thrown ZodError.
import { badInput } from '../errors';

/** PostgreSQL integer and GraphQL Int: the bound of every integer id. */
export const INT32_MAX = 2_147_483_647;

const DECIMAL_ID = /^[1-9][0-9]{0,9}$/;

/**
 * An id written as decimal text (a form field, a header, a CLI argument):
 * 1 to INT32_MAX, digits only, no sign, no leading zero, no spaces; anything
 * else is undefined, for the caller to refuse in its own words.
 */
export function positiveInt32(text: string): number | undefined {
  if (!DECIMAL_ID.test(text)) return undefined;
  const n = Number(text);
  return n <= INT32_MAX ? n : undefined;
}

/**
 * The longest (or largest) value each input can validly have, in one place:
 * every input is measured against its maximum before any work or storage,
 * and refused past it (BAD_USER_INPUT, REST 422), so that what a client sends
 * costs the service no more than a valid value would. Lengths are characters
 * (Unicode code points, see `characters`). The users table's text columns have
 * no bound of their own, and QuickBlox's public reference states none for
 * these fields: logins, emails and passwords are bounded by what user
 * creation takes (so every stored user can sign in), the rest by what the
 * service issues or the spec says.
 */
export const LIMITS = {
  /** Spec: udid is at most 64 characters (contacts.udid is varchar(64)). */
  udidLength: 64,
  /** Not in the spec: ids per delete call. */
  idsPerDelete: 1000,
  /** Not in the spec: contacts per address-book upload. */
  contactsPerUpload: 10_000,
  contactNameLength: 255,
  /** Not in the spec: registered users per page (registeredUsersConnection's `first`). */
  registeredUsersPerPage: 1000,
  externalUserIdMax: INT32_MAX,
  /** Users: what user creation takes, and so what a login or session request may name. */
  loginLength: 255,
  emailLength: 255,
  passwordLength: 255,
  passwordMinLength: 8,
  fullNameLength: 255,
  websiteLength: 1024,
  /** facebookId, twitterId. */
  socialIdLength: 255,
  userTagLength: 64,
  userTags: 50,
  applicationNameLength: 255,
  /** Session requests: auth keys this service issues have 43 characters, QuickBlox's fewer. */
  authKeyLength: 64,
  /** Printable ASCII (the signed text is compared byte for byte). */
  nonceLength: 64,
  /** Hex of an HMAC-SHA256 (HMAC-SHA1: 40). */
  signatureLength: 64,
  /** Credentials: tokens and keys this service issues have 43 characters. */
  sessionTokenLength: 512,
  apiKeyLength: 512,
  /** registeredUsersConnection's `after`: the cursors it returns have at most 16. */
  cursorLength: 64,
  /** Not in the spec (QuickBlox states none): a message's body, in characters. */
  messageBodyLength: 10_000,
  /** Not in the spec: dialogs per page (Viewer.dialogs' first/last; QuickBlox's list answers at most 100). */
  dialogsPerPage: 100,
  /** Not in the spec: messages per page (Dialog.messages' first/last). */
  messagesPerPage: 1000,
  /** Not in the spec: ids per nodes() call. */
  nodesPerCall: 100,
} as const;

/** Phones: the rule is phones.ts's (formatted numbers, matched by the number they denote). */
export { PHONE_PATTERN, PHONE_RULE } from './phones';

/**
 * Characters as people and PostgreSQL (varchar(n), length()) count them:
 * Unicode code points, so an emoji is one character, not two UTF-16 units.
 * The one rule wherever a length is stated.
 */
export function characters(value: string): number {
  let count = value.length;
  for (let i = 0; i < value.length - 1; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

/** Whether `value` has at most `max` characters; a string plainly too long is not counted (a character is 1 or 2 UTF-16 units). */
export function atMostCharacters(value: string, max: number): boolean {
  if (value.length <= max) return true;
  if (value.length > 2 * max) return false;
  return characters(value) <= max;
}

/** `value` (input `field`, named `name` in the message) if it has at most `max` characters and no NUL; else BAD_USER_INPUT. */
export function boundedText(value: string, field: string, max: number, name = field): string {
  if (!atMostCharacters(value, max)) throw badInput(field, `${name} must be at most ${max} characters`);
  return text(value, field);
}

/** PostgreSQL text cannot hold NUL: refuse it up front instead of failing in the database. */
export function text(value: string, field: string): string {
  if (value.includes('\u0000')) throw badInput(field, `${field} must not contain NUL characters`);
  return value;
}

export function udidContext(udid: string | null | undefined): string {
  if (udid === null || udid === undefined || udid === '') return '';
  return boundedText(udid, 'udid', LIMITS.udidLength);
}

export const EXTERNAL_USER_ID_RULE = `must be an integer between 1 and ${LIMITS.externalUserIdMax}`;

export function externalUserId(value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > LIMITS.externalUserIdMax) {
    throw badInput('externalUserId', EXTERNAL_USER_ID_RULE);
  }
  return value;
}
