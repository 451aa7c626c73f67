// Secrets: session tokens, API keys and passwords.
//
// Tokens and keys are 256 random bits. Only their SHA-256 is stored, and a
// lookup goes by that hash through a unique index: the database never holds a
// usable secret, and the comparison never runs over the secret itself, so its
// timing tells an attacker nothing about the secret. (A slow hash is for
// low-entropy passwords; these have none to protect.)
import { createHash, randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';

export const newSecret = (): string => randomBytes(32).toString('base64url');

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 32);
  return `scrypt$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export function verifyPassword(password: string, stored: string): boolean {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = scryptSync(password, Buffer.from(salt, 'base64url'), expected.length);
  return timingSafeEqual(actual, expected);
}
