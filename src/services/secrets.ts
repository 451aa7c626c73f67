// Secrets: session tokens, API keys, passwords, and applications' auth secrets.
//
// Tokens and keys are 256 random bits. Only their SHA-256 is stored, and a
// lookup goes by that hash through a unique index: the database never holds a
// usable secret, and the comparison never runs over the secret itself, so its
// timing tells an attacker nothing about the secret. (A slow hash is for
// low-entropy passwords; these have none to protect.)
//
// An application's auth secret is different: the service must recompute HMAC
// signatures with it, so it cannot be a one-way hash. It is sealed with
// AES-256-GCM under a key from configuration (SECRETS_KEY), so a copy of the
// database alone does not reveal it.
import { createCipheriv, createDecipheriv, createHmac, hash, randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto';

export const newSecret = (): string => randomBytes(32).toString('base64url');

// One-shot crypto.hash: no Hash object per call (the credential check hashes every request's token).
export const hashSecret = (secret: string): string => hash('sha256', secret, 'hex');

/**
 * Passwords are hashed in Unicode NFC (issue 31): `ä` typed on a keyboard that
 * composes it and on one that decomposes it (NFD: macOS, iOS) is one password.
 */
export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  const hash = scryptSync(password.normalize('NFC'), salt, 32);
  return `scrypt$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/**
 * A well-formed hash that no password has: unknown logins cost the same scrypt
 * as known ones. Random bytes rather than a hash computed at load: the scrypt
 * a check runs depends on the salt and the length alone, and a scryptSync at
 * import cost every process start (the service's, each admin command's)
 * 20–60 ms of CPU here.
 */
const DECOY_HASH = `scrypt$${randomBytes(16).toString('base64url')}$${randomBytes(32).toString('base64url')}`;

/**
 * Whether `password` matches `stored` (a hashPassword result; undefined for a
 * login that does not exist, which is checked against a decoy so that both
 * take the same time). scrypt runs on libuv's thread pool, not the event loop.
 */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const [scheme, salt, hash] = (stored ?? DECOY_HASH).split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64url');
  const matches = async (text: string) => {
    const actual = await new Promise<Buffer>((resolve, reject) =>
      scrypt(text, Buffer.from(salt, 'base64url'), expected.length, (error, key) => (error ? reject(error) : resolve(key))),
    );
    return timingSafeEqual(actual, expected);
  };
  // NFC, as hashPassword hashes. A hash made before it did (issue 31) holds
  // the password as its client sent it, NFD from a decomposing keyboard: a
  // second check, only for a password whose NFD differs (ASCII never does).
  // Which is run depends on the password sent alone, never on the account.
  const nfc = password.normalize('NFC');
  const nfd = password.normalize('NFD');
  const right = (await matches(nfc)) || (nfd !== nfc && (await matches(nfd)));
  return right && stored !== undefined;
}

// ---------------------------------------------------------------------------
// Auth secrets, sealed at rest.

/** A 32-byte key for sealSecret/openSecret, from SECRETS_KEY (base64, base64url or hex). */
export function parseSecretsKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  return key.length === 32 ? key : undefined;
}

export const newSecretsKey = (): Buffer => randomBytes(32);

const SEALED = /^v1\.([\w-]{16})\.([\w-]{22})\.([\w-]+)$/;

/** `v1.<iv>.<tag>.<ciphertext>` (base64url): AES-256-GCM, a fresh 96-bit IV each time. */
export function sealSecret(secret: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `v1.${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${sealed.toString('base64url')}`;
}

export class SecretsKeyMismatch extends Error {
  override name = 'SecretsKeyMismatch';
  constructor() {
    super('an auth secret cannot be opened with this SECRETS_KEY: it was sealed under another key');
  }
}

export function openSecret(sealed: string, key: Buffer): string {
  const parts = SEALED.exec(sealed);
  if (!parts) throw new SecretsKeyMismatch();
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[1]!, 'base64url'));
    decipher.setAuthTag(Buffer.from(parts[2]!, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(parts[3]!, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretsKeyMismatch();
  }
}

// ---------------------------------------------------------------------------
// QuickBlox request signatures.

export type SignatureAlgorithm = 'sha1' | 'sha256';

/**
 * The string QuickBlox SDKs sign: every parameter but the signature as
 * `key=value` (nested ones as `user[login]=…`), values as sent (not
 * URL-encoded), sorted, joined with `&`.
 */
export function signatureBase(parameters: Readonly<Record<string, string>>): string {
  return Object.entries(parameters)
    .map(([key, value]) => `${key}=${value}`)
    .sort()
    .join('&');
}

export const sign = (base: string, secret: string, algorithm: SignatureAlgorithm): string => createHmac(algorithm, secret).update(base).digest('hex');

/** A signature's form: the hex of an HMAC-SHA1 (40 digits) or HMAC-SHA256 (64). */
export const SIGNATURE_PATTERN = /^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/;

/**
 * Whether `signature` (hex) is the HMAC of `base` under `secret`: SHA-1 for 40
 * hex digits, SHA-256 for 64 (the SDK's `hash` setting). Constant time over
 * the digest.
 */
export function verifySignature(base: string, signature: string, secret: string): boolean {
  if (!SIGNATURE_PATTERN.test(signature)) return false;
  const algorithm: SignatureAlgorithm = signature.length === 40 ? 'sha1' : 'sha256';
  return timingSafeEqual(Buffer.from(sign(base, secret, algorithm), 'hex'), Buffer.from(signature, 'hex'));
}
