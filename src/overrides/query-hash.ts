// The SHA-256 of GraphQL query texts, remembered by text.
//
// Apollo Server hashes every request's query text (its document cache's key,
// `requestContext.queryHash`, which the compiled executor keys by too), with
// a Hash object made through @apollo/utils.createhash for each request, and it
// has no option to be given the key. Clients send the same few texts over and
// over, so the hashes of recent texts are kept here by the text itself: a Map
// lookup hashes the string with V8's own (non-cryptographic) hash and compares
// it on a hit, where a Hash object costs a binding call to make, to feed and
// to digest, and SHA-256 over the text (BENCHMARKS.md, "Lookups and the
// GraphQL pipeline"). The value
// is the same hex SHA-256 either way: Apollo's document cache, its APQ check,
// the trusted-documents check and the executor's keys see what they saw.
//
// Apollo is given it by replacing `createHash` on @apollo/utils.createhash's
// exports, which Apollo's CommonJS build reads at each call. Only SHA-256 of
// one string digested as hex goes through the memo; anything else is the
// original's. Should a later Apollo read it otherwise, nothing breaks: it
// hashes as before (test/graphql/query-hash.test.ts then fails).
import { createHash as nodeCreateHash, hash, type BinaryToTextEncoding, type Hash } from 'node:crypto';

/** Texts longer than this are hashed every time (the lookup's document is ~300 characters). */
const MAX_TEXT_CHARACTERS = 16 * 1024;
/** At most this many texts, and this many characters in all, are kept (oldest first out). */
const MAX_TEXTS = 1000;
const MAX_CHARACTERS = 1024 * 1024;

const known = new Map<string, string>();
let characters = 0;

/** How often a hash was answered from memory (for the tests). */
export const queryHashStats = { hits: 0, misses: 0 };

/** The hex SHA-256 of `text` (UTF-8), remembered for the texts most recently seen. */
export function sha256Hex(text: string): string {
  const remembered = known.get(text);
  if (remembered !== undefined) {
    queryHashStats.hits++;
    return remembered;
  }
  queryHashStats.misses++;
  const digest = hash('sha256', text, 'hex');
  if (text.length <= MAX_TEXT_CHARACTERS) {
    known.set(text, digest);
    characters += text.length;
    while (known.size > MAX_TEXTS || characters > MAX_CHARACTERS) {
      const oldest = known.keys().next().value as string;
      known.delete(oldest);
      characters -= oldest.length;
    }
  }
  return digest;
}

type CreateHash = (kind: string) => unknown;

/**
 * What `createHash('sha256')` returns through the memo: the one string fed to
 * it, digested as hex, is answered by sha256Hex; anything else (a Buffer, an
 * encoding, several updates, another digest encoding) falls back to a real
 * Hash object fed the same data.
 */
class RememberedSha256 {
  private text: string | undefined;
  private real: Hash | undefined;

  update(data: string | NodeJS.ArrayBufferView, encoding?: BufferEncoding): this {
    if (this.real === undefined && this.text === undefined && typeof data === 'string' && encoding === undefined) {
      this.text = data;
      return this;
    }
    const real = this.toReal();
    if (typeof data === 'string' && encoding !== undefined) real.update(data, encoding);
    else real.update(data);
    return this;
  }

  digest(): Buffer;
  digest(encoding: BinaryToTextEncoding): string;
  digest(encoding?: BinaryToTextEncoding): string | Buffer {
    if (this.real === undefined && encoding === 'hex') return sha256Hex(this.text ?? '');
    const real = this.toReal();
    return encoding === undefined ? real.digest() : real.digest(encoding);
  }

  private toReal(): Hash {
    if (this.real === undefined) {
      this.real = nodeCreateHash('sha256');
      if (this.text !== undefined) this.real.update(this.text);
      this.text = undefined;
    }
    return this.real;
  }
}

let installed: boolean | undefined;

/** Whether this process's Apollo Server hashes through the memo (DEPENDENCY_OVERRIDES_OFF=query-hash: never installed). */
export const apolloQueryHashesRemembered = (): boolean => installed === true;

/**
 * Lets Apollo Server's query hashing go through the memo (once per process).
 * Returns whether it could: false when @apollo/utils.createhash cannot be
 * found beside @apollo/server or its export cannot be replaced.
 */
export function rememberApolloQueryHashes(): boolean {
  if (installed !== undefined) return installed;
  installed = false;
  try {
    // The copy Apollo Server itself requires (package-lock.json holds one), by
    // a literal require: in dist/main.js that is the copy bundled beside
    // Apollo's (scripts/build.mjs), and under jest the one in the test's
    // module registry, as Apollo's is.
    const utils = require('@apollo/utils.createhash') as { createHash: CreateHash };
    const original = utils.createHash;
    if (typeof original !== 'function') return false;
    utils.createHash = (kind: string) => (kind === 'sha256' ? new RememberedSha256() : original(kind));
    installed = utils.createHash !== original;
  } catch {
    installed = false;
  }
  return installed;
}
