// Response headers for browsers: security headers on every response
// (@fastify/helmet) and, when origins are configured, CORS (@fastify/cors).
//
// The API answers JSON only, so its policy allows nothing to load or frame it;
// the explorer page sets its own, narrower-than-usual policy (src/http/explorer.ts).
import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

export interface SecurityOptions {
  /** Origins allowed to call the API from a browser; '*' for any; empty or undefined: no CORS. */
  corsOrigins?: readonly string[] | '*' | undefined;
}

/** Request headers a browser client may send cross-origin. */
const CORS_REQUEST_HEADERS = [
  'content-type',
  'svc-token',
  'authorization',
  'on-behalf-of',
  'x-request-id',
  // Apollo's CSRF prevention asks GET and form requests for one of these.
  'apollo-require-preflight',
  'x-apollo-operation-name',
];

export async function registerSecurity(fastify: FastifyInstance, options: SecurityOptions): Promise<void> {
  const origins = options.corsOrigins;
  const corsEnabled = origins === '*' || (origins !== undefined && origins.length > 0);
  await fastify.register(helmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    // As the policy's frame-ancestors 'none' (helmet's default is SAMEORIGIN).
    frameguard: { action: 'deny' },
    // Readable cross-origin only where CORS lets it be.
    crossOriginResourcePolicy: { policy: corsEnabled ? 'cross-origin' : 'same-origin' },
  });
  if (!corsEnabled) return;
  await fastify.register(cors, {
    origin: origins === '*' ? '*' : [...origins],
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: CORS_REQUEST_HEADERS,
    exposedHeaders: ['retry-after', 'x-request-id'],
    // Credentials travel in headers, never cookies.
    credentials: false,
    maxAge: 600,
  });
}
