// What an HTTP cache may do with each answer, decided in one place.
//
// Credentials travel in custom headers (SVC-Token, QB-Token) that shared caches
// do not treat as Authorization, and a cache that stores a 200 without explicit
// headers (Varnish's default, nginx's proxy_cache_valid, many CDNs) would hand
// one caller's answer to the next. So every answer is private by default —
// `Cache-Control: private, no-store` and `Vary` naming the credential headers —
// whatever produced it (a route, Apollo, an error, a 404, a 429), and only the
// answers that cannot depend on a caller opt out, through this module:
// documents that change only with a deploy (`sendDocument`: public, with an
// ETag and 304 on If-None-Match), and live state or a page holding a
// credential (`sendUnstored`: no-store).
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { credentialHeaders } from '../context';

export interface CachingOptions {
  /** Browsers may keep a caller's successful GET answers this long (0: no-store). */
  privateMaxAgeSeconds?: number;
  /** How long any cache may keep the public documents before asking again (with their ETag). */
  publicMaxAgeSeconds?: number;
}

export const DEFAULT_PUBLIC_MAX_AGE_SECONDS = 300;

/** Errors and writes are never worth keeping, even in the caller's own browser. */
export const PRIVATE_NO_STORE = 'private, no-store';

/** A body that is the same for every caller until the next deploy, with its entity tag. */
export interface PublicDocument {
  readonly body: string;
  readonly type: string;
  readonly etag: string;
  /** Request headers other than credentials that chose this body (the explorer page at /graphql: Accept). */
  readonly vary?: readonly string[];
}

export function publicDocument(body: string, type: string, vary?: readonly string[]): PublicDocument {
  const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
  return vary === undefined ? { body, type, etag } : { body, type, etag, vary };
}

type Decision = 'public' | 'no-store';

/** Answers a handler declared public or live; every other answer is private. */
const decisions = new WeakMap<FastifyReply, Decision>();

/** A public document: cacheable by anyone for the configured time, then revalidated by its ETag (304). */
export function sendDocument(request: FastifyRequest, reply: FastifyReply, document: PublicDocument): FastifyReply {
  decisions.set(reply, 'public');
  reply.header('etag', document.etag);
  if (document.vary) reply.header('vary', document.vary.join(', '));
  if (matchesEtag(request.headers['if-none-match'], document.etag)) return reply.code(304).send();
  return reply.code(200).type(document.type).send(document.body);
}

/**
 * An answer no cache may keep, though it does not depend on the caller: the
 * state of this instance now (probes, metrics), or a page holding a credential.
 */
export function sendUnstored(reply: FastifyReply, body?: unknown): FastifyReply {
  decisions.set(reply, 'no-store');
  return reply.send(body);
}

/** If-None-Match's weak comparison (RFC 9110 13.1.2): any listed tag, W/ or not, or `*`. */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => {
    const candidate = tag.trim();
    return candidate === '*' || candidate.replace(/^W\//, '') === bare;
  });
}

/** `existing` with `names` added where missing (case-insensitive); `*` stays `*`. */
export function withVary(existing: string | string[] | number | undefined, names: readonly string[]): string {
  const current = (Array.isArray(existing) ? existing.join(',') : existing === undefined ? '' : String(existing))
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (current.includes('*')) return '*';
  const seen = new Set(current.map((name) => name.toLowerCase()));
  return [...current, ...names.filter((name) => !seen.has(name.toLowerCase()))].join(', ');
}

/**
 * Writes each answer's Cache-Control (and, for private ones, Vary) last
 * (onSend), so that what a plugin, Apollo or an error handler set cannot make
 * a caller's answer shareable: a public or live route that failed answers
 * privately too.
 */
export function registerCaching(fastify: FastifyInstance, options: CachingOptions & { sessionTokenHeaders: readonly string[] }): void {
  const vary = credentialHeaders(options.sessionTokenHeaders);
  // Most answers have no Vary of their own: the header is then always this.
  const varyAlone = vary.join(', ');
  const privateMaxAge = options.privateMaxAgeSeconds ?? 0;
  const privateRead = privateMaxAge > 0 ? `private, max-age=${privateMaxAge}` : PRIVATE_NO_STORE;
  const publicMaxAge = options.publicMaxAgeSeconds ?? DEFAULT_PUBLIC_MAX_AGE_SECONDS;
  const publicControl = publicMaxAge > 0 ? `public, max-age=${publicMaxAge}` : 'public, no-cache';
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const decision = decisions.get(reply);
    const status = reply.statusCode;
    if (decision === 'no-store') {
      reply.header('cache-control', 'no-store');
    } else if (decision === 'public' && (status === 200 || status === 304)) {
      reply.header('cache-control', publicControl);
    } else {
      // Only a successful read may sit in the caller's browser: an error kept
      // there would outlive its cause (a 401 after the caller logged in).
      const read = request.method === 'GET' || request.method === 'HEAD';
      reply.header('cache-control', read && status >= 200 && status < 300 ? privateRead : PRIVATE_NO_STORE);
      const existing = reply.getHeader('vary');
      reply.header('vary', existing === undefined ? varyAlone : withVary(existing, vary));
    }
    done(null, payload);
  });
}
