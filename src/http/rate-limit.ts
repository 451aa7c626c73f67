// Rate limits: one budget per credential (session token or API key) and one
// per client address, both counted by @fastify/rate-limit in fixed windows.
// Checked first thing (onRequest), before the body is read or the database
// asked, so a flood costs little. A request over either budget gets 429 with
// Retry-After (seconds) in the error shape of its route.
//
// Without Redis the counters live in this process: with several instances
// behind a load balancer each one counts on its own, so a client gets up to N
// times the budget. With REDIS_URL they live in Redis (one atomic script per
// check), and the budget is the same whichever instance a request reaches.
//
// Every counted response says where its budget stands (RateLimit-Limit,
// -Remaining, -Reset: the budget nearest to exhaustion), so clients can pace
// themselves instead of finding the limit by a 429.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import { AppError, MESSAGES, RateLimitedError } from '../errors';
import type { SharedRedis } from '../scale/redis';
import { addressKey, digestKey } from '../services/keys';

export interface RateLimitOptions {
  windowMs: number;
  /** Requests per window for one session token or API key. */
  perCredential: number;
  /** Requests per window from one client address. */
  perAddress: number;
  /** Counters in Redis, shared by every instance (default: in this process). */
  redis?: SharedRedis | undefined;
  /** When the store fails: serve the request uncounted (open, default) or refuse it with 503 (closed). */
  onStoreError?: 'open' | 'closed';
  /** Where rate_limit_store_errors_total is registered. */
  metrics?: Registry;
}

/** Headers of the budget (IETF draft "RateLimit header fields for HTTP"), exposed by CORS. */
export const RATE_LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'] as const;

/** At most one log line per this interval about a failing store (every request would say the same). */
const STORE_ERROR_LOG_INTERVAL_MS = 10_000;

/** Probes are not clients: orchestrators call them on their own schedule. */
const UNLIMITED = new Set(['/healthz', '/readyz']);

/**
 * Scrapes of /metrics on the service's port, per address in a window, on top
 * of the address's request budget: a scraper every 15 s takes 4 a minute,
 * and a flood of scrapes (each renders the whole page) moved a lookup's
 * median from 3 to 612 ms (issue 31).
 */
export const METRICS_SCRAPES_PER_WINDOW = 60;

/** Distinct clients remembered per budget (least recently seen are forgotten first). */
const TRACKED_CLIENTS = 50_000;

export async function registerRateLimits(fastify: FastifyInstance, options: RateLimitOptions, sessionTokenHeaders: readonly string[]): Promise<void> {
  /** The session token or API key header's value, if one is sent. */
  const presentedCredential = (request: FastifyRequest): string | undefined => {
    for (const name of [...sessionTokenHeaders, 'authorization']) {
      const header = request.headers[name];
      const value = Array.isArray(header) ? header[0] : header;
      if (value) return value;
    }
    return undefined;
  };
  /**
   * The credential a request presents, hashed (the counters never hold a
   * usable secret). Invalid credentials count too: guessing is what the
   * per-credential budget slows down, and the per-address one bounds rotation.
   */
  const credentialKey = (request: FastifyRequest): string => {
    const value = presentedCredential(request);
    if (value === undefined) return '';
    // Prefixed: both budgets share the plugin's store with address keys.
    return `credential:${digestKey(value)}`;
  };

  await fastify.register(rateLimit, {
    global: false,
    cache: TRACKED_CLIENTS,
    ...(options.redis ? { redis: options.redis.client, nameSpace: `${options.redis.prefix}rate-limit:` } : {}),
  });
  const storeFailed = storeFailureHandler(options);
  const byAddress = fastify.createRateLimit({
    max: options.perAddress,
    timeWindow: options.windowMs,
    // IPv6 by /64, as the plugin's own key, but of a fixed size: behind
    // TRUST_PROXY the address is whatever the client forwarded.
    keyGenerator: (request) => addressKey(request.ip),
  });
  const byCredential = fastify.createRateLimit({
    max: options.perCredential,
    timeWindow: options.windowMs,
    keyGenerator: credentialKey,
  });

  const scrapesByAddress = fastify.createRateLimit({
    max: METRICS_SCRAPES_PER_WINDOW,
    timeWindow: options.windowMs,
    keyGenerator: (request) => `metrics:${addressKey(request.ip)}`,
  });

  fastify.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (UNLIMITED.has(path)) return;
    let limits;
    try {
      const address = await byAddress(request);
      // The key (a hash) is computed once, by the limiter; here only whether there is one.
      const credential = presentedCredential(request) === undefined ? undefined : await byCredential(request);
      limits = credential ? [address, credential] : [address];
      if (path === '/metrics') limits.push(await scrapesByAddress(request));
    } catch (error) {
      storeFailed(request, error);
      return;
    }
    enforce(reply, limits);
  });
}

/** What a limiter answers of one budget for one request. */
type Limit = Awaited<ReturnType<ReturnType<FastifyInstance['createRateLimit']>>>;
/** A budget the request was counted against (not on an allow list). */
type Counted = Extract<Limit, { isAllowed: false }>;

/**
 * The budgets' headers (of the one nearest to exhaustion: the one the client
 * must pace by), and a 429 when any is exhausted.
 */
function enforce(reply: FastifyReply, limits: Limit[]): void {
  // Counted checks (isAllowed is true only for an allow list, which is not used).
  const counted = limits.filter((limit): limit is Counted => !limit.isAllowed);
  const nearest = counted.reduce<Counted | undefined>((a, b) => (a === undefined || b.remaining < a.remaining ? b : a), undefined);
  if (nearest) {
    reply.header('ratelimit-limit', nearest.max);
    reply.header('ratelimit-remaining', nearest.remaining);
    reply.header('ratelimit-reset', Math.max(nearest.ttlInSeconds, 0));
  }
  let seconds = 0;
  for (const limit of counted) {
    if (limit.isExceeded) seconds = Math.max(seconds, limit.ttlInSeconds, 1);
  }
  if (seconds > 0) throw new RateLimitedError(seconds);
}

/**
 * What a request gets when the store (Redis) fails its check: served
 * uncounted (onStoreError 'open') or refused with a 503; counted by outcome
 * and logged at most once per STORE_ERROR_LOG_INTERVAL_MS with the number of
 * failures since.
 */
function storeFailureHandler(options: RateLimitOptions): (request: FastifyRequest, error: unknown) => void {
  const onStoreError = options.onStoreError ?? 'open';
  const storeErrors = new Counter({
    name: 'rate_limit_store_errors_total',
    help: 'Rate-limit checks the store (Redis) failed, by what was done with the request (served uncounted, or refused)',
    labelNames: ['outcome'] as const,
    registers: options.metrics ? [options.metrics] : [],
  });
  let lastLogged = 0;
  let unlogged = 0;
  return (request, error) => {
    const outcome = onStoreError === 'open' ? 'served' : 'refused';
    storeErrors.inc({ outcome });
    unlogged++;
    if (Date.now() - lastLogged >= STORE_ERROR_LOG_INTERVAL_MS) {
      request.log.warn(
        { err: { message: (error as Error).message }, failures: unlogged, onStoreError },
        `rate-limit store unavailable: requests ${outcome === 'served' ? 'served uncounted' : 'refused'}`,
      );
      lastLogged = Date.now();
      unlogged = 0;
    }
    if (onStoreError === 'open') return;
    throw new AppError('SERVICE_UNAVAILABLE', MESSAGES.rateLimitStoreUnavailable, { cause: error });
  };
}
