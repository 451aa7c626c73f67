// The Fastify instance the service runs on: its bounds (header and URL sizes,
// the connection timeouts of src/http/timeouts.ts), its logger, request ids,
// router and failure handling. createApp() makes it first and registers
// everything else on it.
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import type { failureHandling } from './failures';
import { logRedact } from './observability';
import { parseQuery } from './parsing';
import { requestIdOf } from './request-id';
import { clientErrorHandler, serverTimeouts, type TimeoutOptions } from './timeouts';

export interface ServerOptions {
  /** Fastify's logger option: false in tests, pino settings in main; the credential headers are redacted unless `redact` is given. */
  logger?: FastifyServerOptions['logger'];
  /** Serve HTTPS with this PEM key and certificate chain (default: plain HTTP). */
  https?: { key: string | Buffer; cert: string | Buffer } | undefined;
  /** Trust X-Forwarded-For for the client address (behind a proxy you run). */
  trustProxy?: boolean | undefined;
  /** Headers that carry a session token, redacted from the log. */
  sessionTokenHeaders: readonly string[];
  /** Bounds on each phase of a connection. */
  timeouts: TimeoutOptions;
  /** What answers requests that never reach a route (src/http/failures.ts). */
  failures: Pick<ReturnType<typeof failureHandling>, 'clientErrorHandler' | 'frameworkErrors'>;
}

/** Ids per delete (25 characters each with the comma) must fit in the request line. */
const MAX_URL_BYTES = 64 * 1024;

/** Fastify with the service's bounds, logger, request ids, router and failure handling. */
export function createFastify(options: ServerOptions): FastifyInstance {
  const { sessionTokenHeaders, failures } = options;
  const { server: serverBounds, ...fastifyBounds } = serverTimeouts(options.timeouts);
  return Fastify({
    // The headers that carry secrets are redacted by every logger the app is
    // given, named from the same list the context reads (SESSION_TOKEN_HEADERS).
    logger: options.logger ? { redact: logRedact(sessionTokenHeaders), ...(options.logger === true ? {} : options.logger) } : false,
    // registerObservability logs one line per request instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: requestIdOf,
    requestIdHeader: false,
    bodyLimit: 2 * 1024 * 1024,
    // ignoreDuplicateSlashes: an SDK whose base URL ends in "/" asks for "//session.json" (Android), which QuickBlox served.
    routerOptions: { maxParamLength: MAX_URL_BYTES, querystringParser: parseQuery, ignoreDuplicateSlashes: true },
    ...(options.https
      ? { https: { ...options.https, maxHeaderSize: MAX_URL_BYTES, ...serverBounds } }
      : { http: { maxHeaderSize: MAX_URL_BYTES, ...serverBounds } }),
    ...fastifyBounds,
    // While closing, requests on kept-alive connections are answered (with
    // Connection: close) or refused in the route's shape by the lifecycle's
    // hooks (src/http/lifecycle.ts), never with Fastify's own body.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    trustProxy: options.trustProxy ?? false,
    // Requests Node's HTTP parser refuses (headers over maxHeaderSize,
    // malformed HTTP) never reach a route; a path that is not valid
    // percent-encoding fails before routing: src/http/failures.ts answers both.
    // A request whose body is still arriving when Node's whole-request bound
    // fires is answered by its route (src/http/timeouts.ts).
    clientErrorHandler: clientErrorHandler(failures.clientErrorHandler),
    // Fastify ignores what this returns: the reply, which is thenable, not a pending promise.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    frameworkErrors: failures.frameworkErrors,
  });
}
