// Rate limits: one budget per credential (session token or API key) and one
// per client address, both counted by @fastify/rate-limit in fixed windows.
// Checked first thing (onRequest), before the body is read or the database
// asked, so a flood costs little. A request over either budget gets 429 with
// Retry-After (seconds) in the error shape of its route.
//
// The counters live in this process: with several instances behind a load
// balancer each one counts on its own, so a client gets up to N times the
// budget (see the README).
import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, MESSAGES } from '../errors';

export interface RateLimitOptions {
  windowMs: number;
  /** Requests per window for one session token or API key. */
  perCredential: number;
  /** Requests per window from one client address. */
  perAddress: number;
}

/** Probes and scrapes are not clients: orchestrators call them on their own schedule. */
const UNLIMITED = new Set(['/healthz', '/readyz', '/metrics']);

/** Distinct clients remembered per budget (least recently seen are forgotten first). */
const TRACKED_CLIENTS = 50_000;

export class RateLimitedError extends AppError {
  constructor(readonly retryAfterSeconds: number) {
    super('TOO_MANY_REQUESTS', `${MESSAGES.rateLimited}: retry in ${retryAfterSeconds} s`);
  }
}

export async function registerRateLimits(fastify: FastifyInstance, options: RateLimitOptions): Promise<void> {
  await fastify.register(rateLimit, { global: false, cache: TRACKED_CLIENTS });
  const byAddress = fastify.createRateLimit({
    max: options.perAddress,
    timeWindow: options.windowMs,
    // The plugin's own key: the address normalised (IPv6 by /64).
  });
  const byCredential = fastify.createRateLimit({
    max: options.perCredential,
    timeWindow: options.windowMs,
    keyGenerator: credentialKey,
  });

  fastify.addHook('onRequest', async (request, reply) => {
    if (UNLIMITED.has(request.url.split('?')[0] ?? '')) return;
    const address = await byAddress(request);
    // The key (a hash) is computed once, by the limiter; here only whether there is one.
    const credential = presentedCredential(request) === undefined ? undefined : await byCredential(request);
    let seconds = 0;
    for (const limit of [address, credential]) {
      if (limit && !limit.isAllowed && limit.isExceeded) seconds = Math.max(seconds, limit.ttlInSeconds, 1);
    }
    if (seconds === 0) return;
    reply.header('retry-after', String(seconds));
    throw new RateLimitedError(seconds);
  });
}

/**
 * The credential a request presents, hashed (the counters never hold a
 * usable secret). Invalid credentials count too: guessing is what the
 * per-credential budget slows down, and the per-address one bounds rotation.
 */
function credentialKey(request: FastifyRequest): string {
  const value = presentedCredential(request);
  if (value === undefined) return '';
  // Prefixed: both budgets share the plugin's store with address keys.
  return `credential:${createHash('sha256').update(value).digest('base64url')}`;
}

/** The session token or API key header's value, if one is sent. */
function presentedCredential(request: FastifyRequest): string | undefined {
  const token = request.headers['svc-token'] ?? request.headers.authorization;
  const value = Array.isArray(token) ? token[0] : token;
  return value ? value : undefined;
}
