// Response headers for browsers: security headers on every response
// (@fastify/helmet) and, when origins are configured, CORS (@fastify/cors).
//
// The API answers JSON only, so its policy allows nothing to load or frame it;
// the explorer page sets its own, narrower-than-usual policy (src/http/explorer.ts).
import cors from '@fastify/cors';
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';
import type { FastifyInstance } from 'fastify';
import { credentialHeaders } from '../context';
import { RATE_LIMIT_HEADERS } from './rate-limit';

export interface SecurityOptions {
  /** Origins allowed to call the API from a browser; '*' for any; empty or undefined: no CORS. */
  corsOrigins?: readonly string[] | '*' | undefined;
  /** The session-token headers (SVC-Token, QB-Token): allowed cross-origin. */
  sessionTokenHeaders?: readonly string[];
}

/** Request headers a browser client may send cross-origin, besides the credential ones. */
const CORS_REQUEST_HEADERS = [
  'content-type',
  'x-request-id',
  // Apollo's CSRF prevention asks GET and form requests for one of these.
  'apollo-require-preflight',
  'x-apollo-operation-name',
  // QuickBlox's JavaScript SDK sends these with every request.
  'qb-sdk',
  'qb-os',
];

/**
 * Headers that let a /graphql request through Apollo's CSRF prevention. A
 * browser sends none of them cross-site without a CORS preflight, so a request
 * carrying one cannot be a forged simple request: Apollo's own two, and the
 * credential headers every real client sends (urql, for one, sends queries as
 * GET with nothing else that would pass).
 */
export const csrfPreflightHeaders = (sessionTokenHeaders: readonly string[]): string[] => [
  'apollo-require-preflight',
  'x-apollo-operation-name',
  ...credentialHeaders(sessionTokenHeaders),
];

export async function registerSecurity(fastify: FastifyInstance, options: SecurityOptions): Promise<void> {
  const origins = options.corsOrigins;
  const corsEnabled = origins === '*' || (origins !== undefined && origins.length > 0);
  // Helmet decides the headers; they are the same for every request, so they
  // are computed once here rather than by helmet's middleware on each request
  // (@fastify/helmet's two hooks and helmet's header building were 2.5% of
  // the service's CPU under the lookup load: BENCHMARKS.md). Routes that need
  // another policy (the explorer's CSP) set their own header in the handler.
  const headers = helmetHeaders({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    frameguard: { action: 'deny' },
    crossOriginResourcePolicy: { policy: corsEnabled ? 'cross-origin' : 'same-origin' },
  });
  fastify.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
  if (!corsEnabled) return;
  await fastify.register(cors, {
    origin: origins === '*' ? '*' : [...origins],
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: [...new Set([...credentialHeaders(options.sessionTokenHeaders), ...CORS_REQUEST_HEADERS])],
    // QB-Token-ExpirationDate: the SDKs renew sessions by it.
    // RateLimit-*: where the client's budget stands (src/http/rate-limit.ts).
    exposedHeaders: ['retry-after', 'x-request-id', 'qb-token-expirationdate', ...RATE_LIMIT_HEADERS],
    // Credentials travel in headers, never cookies.
    credentials: false,
    maxAge: 600,
  });
}

/** The headers helmet's middleware sets for these options, read off one run of it. */
export function helmetHeaders(options: Readonly<HelmetOptions>): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  let ran = false;
  // helmet reads nothing from the request: an empty object stands for one.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- what helmet passed to next(), as it passed it
    if (error) throw error;
    ran = true;
  });
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by the callback above, which TypeScript does not follow
  if (!ran) throw new Error('helmet did not finish synchronously: its headers cannot be computed once');
  return headers;
}
