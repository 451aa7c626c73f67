// createApp(): the whole HTTP service — GraphQL at /graphql, the legacy REST
// paths, health checks — over an open database. Used by main and by tests.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import fastifyApollo, { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions, LogController } from 'fastify';
import { GraphQLError, type ValidationRule } from 'graphql';
import { createContext, credentialsFromHeaders, type Context } from './context';
import type { Database } from './db';
import { AppError, MESSAGES, toAppError } from './errors';
import { graphqlArmor, parseOptions } from './graphql/limits';
import { buildSchema } from './graphql/schema';
import { type ExplorerOptions, registerExplorer } from './http/explorer';
import { linkContext, operationLabelPlugin, registerObservability } from './http/observability';
import { type RateLimitOptions, registerRateLimits } from './http/rate-limit';
import { registerSecurity, type SecurityOptions } from './http/security';
import { registerOpenApi } from './rest/openapi';
import { type ErrorStyle, sendError } from './rest/respond';
import { isRouteNotFound, registerRestRoutes } from './rest/routes';
import { createServices, type Services } from './services';
import type { AuthOptions } from './services/auth';
import type { Config } from './config';

export interface AppOptions {
  database: Database;
  /** Fastify's logger option: false in tests, pino settings in main. */
  logger?: FastifyServerOptions['logger'];
  /** Serve GET /metrics (default true). */
  metrics?: boolean;
  /** Answer introspection queries (default true; off in production). */
  introspection?: boolean;
  /** The GraphQL explorer page (default: enabled). */
  explorer?: ExplorerOptions;
  /** Credential caching (see AuthService). */
  auth?: AuthOptions;
  /** Rate limits per credential and per address; false or undefined: none (tests, benchmarks). */
  rateLimit?: RateLimitOptions | false;
  /** CORS origins (security headers are always set). */
  security?: SecurityOptions;
  /** Trust X-Forwarded-For for the client address (behind a proxy you run). */
  trustProxy?: boolean;
}

/** The options the configuration decides (main adds the logger and the explorer's headers). */
export function appOptionsFromConfig(config: Config): Omit<AppOptions, 'database'> {
  return {
    introspection: config.GRAPHQL_INTROSPECTION,
    metrics: config.METRICS_ENABLED,
    explorer: { enabled: config.GRAPHQL_EXPLORER },
    rateLimit: config.RATE_LIMIT_ENABLED && {
      windowMs: config.RATE_LIMIT_WINDOW_MS,
      perCredential: config.RATE_LIMIT_PER_CREDENTIAL,
      perAddress: config.RATE_LIMIT_PER_ADDRESS,
    },
    security: { corsOrigins: config.CORS_ORIGINS },
    trustProxy: config.TRUST_PROXY,
  };
}

export interface App {
  readonly fastify: FastifyInstance;
  readonly services: Services;
  /** Stops accepting, drains in-flight requests, stops Apollo. The database is the caller's. */
  close(): Promise<void>;
}

/** Ids per delete (25 characters each with the comma) must fit in the request line. */
const MAX_URL_BYTES = 64 * 1024;

export async function createApp(options: AppOptions): Promise<App> {
  const { database } = options;
  const services = createServices(database, { auth: options.auth });
  const schema = buildSchema();

  const fastify = Fastify({
    logger: options.logger ?? false,
    // registerObservability logs one line per request instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    },
    requestIdHeader: false,
    bodyLimit: 2 * 1024 * 1024,
    routerOptions: { maxParamLength: MAX_URL_BYTES },
    http: { maxHeaderSize: MAX_URL_BYTES },
    // While closing, requests on kept-alive connections get the 503 of the
    // onRequest hook below, in the route's shape, not Fastify's own body.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    trustProxy: options.trustProxy ?? false,
    // Requests Node's HTTP parser refuses (headers over maxHeaderSize,
    // malformed HTTP) never reach a route: answered in the list shape.
    clientErrorHandler: answerClientError,
    // A path that is not valid percent-encoding (`/users/external/%zz.json`)
    // fails before routing: answered in the route family's shape like any 400.
    frameworkErrors(error, request, reply) {
      const appError = error.code === 'FST_ERR_BAD_URL' ? new AppError('BAD_REQUEST', 'Malformed request path') : error;
      return sendError(reply, fromFastifyError(appError), styleOfUrl(request.url));
    },
  });

  // An empty JSON body is no body: legacy clients send Content-Type:
  // application/json on DELETE and GET without one.
  // Bodies are JSON or form-encoded: anything else is 415, not a string body.
  fastify.removeContentTypeParser('text/plain');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
    const source = String(text);
    if (source.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(source));
    } catch {
      done(new AppError('BAD_REQUEST', `${MESSAGES.malformedBody}: invalid JSON`), undefined);
    }
  });
  await fastify.register(formbody);

  // Before any plugin registers: child contexts inherit the handlers set by then.
  fastify.setNotFoundHandler((request, reply) => sendError(reply, noRoute(request), styleOfUrl(request.url)));

  fastify.setErrorHandler((error, request, reply) => {
    // A route's own style; else /graphql's, or the style of the path (a path
    // with no route for its method can still fail here, on its body).
    const style: ErrorStyle =
      request.routeOptions.config?.errorStyle ?? (request.routeOptions.url === '/graphql' ? 'graphql' : styleOfUrl(request.url));
    if (isRouteNotFound(error)) return sendError(reply, noRoute(request), style);
    return sendError(reply, fromFastifyError(error), style);
  });

  let closing = false;
  fastify.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    throw new AppError('SERVICE_UNAVAILABLE', MESSAGES.shuttingDown);
  });

  registerObservability(fastify, {
    pool: database.pool,
    statementCount: database.statementCount,
    metrics: options.metrics ?? true,
  });
  // Security headers and CORS first, so that every answer carries them, a 429
  // included (a browser could not read it otherwise). Then, before the routes,
  // the rate limits: a client over its budget costs one counter lookup.
  await registerSecurity(fastify, options.security ?? {});
  if (options.rateLimit) await registerRateLimits(fastify, options.rateLimit);

  const introspection = options.introspection ?? true;
  // Depth, cost, aliases, directives and tokens; batching off.
  const armor = graphqlArmor(introspection);
  const apollo = new ApolloServer<Context>({
    schema,
    introspection,
    validationRules: [...armor.validationRules, noSubscriptions],
    // Not used by the service's clients; with a wrong hash Apollo would
    // answer INTERNAL_SERVER_ERROR, the code kept for bugs.
    persistedQueries: false,
    parseOptions,
    allowBatchedHttpRequests: false,
    // The explorer page is served by the service itself (Apollo's own landing
    // pages load from a CDN and show nothing offline).
    plugins: [fastifyApolloDrainPlugin(fastify), ApolloServerPluginLandingPageDisabled(), operationLabelPlugin, ...armor.plugins],
    includeStacktraceInErrorResponses: false,
    formatError(formatted, error) {
      const original = error instanceof GraphQLError ? error.originalError : error;
      // graphql-js's own errors (syntax, validation, variables) keep Apollo's codes.
      if (!original || original instanceof GraphQLError) return formatted;
      const appError = toAppError(original);
      if (appError.status >= 500) fastify.log.error({ err: appError.cause ?? appError }, appError.message);
      return {
        message: appError.message,
        locations: formatted.locations,
        path: formatted.path,
        extensions: { code: appError.code, ...(appError.field === undefined ? {} : { field: appError.field }) },
      };
    },
  });
  await apollo.start();
  await fastify.register(fastifyApollo(apollo), {
    path: '/graphql',
    context: async (request) =>
      linkContext(createContext(services, credentialsFromHeaders(request.headers), request.id), request),
  });

  registerRestRoutes(fastify, schema, services);
  registerOpenApi(fastify);
  registerExplorer(fastify, options.explorer ?? { enabled: true });

  fastify.get('/healthz', async () => ({ status: 'ok' }));
  fastify.get('/readyz', async (request, reply) => {
    const readiness = await database.readiness();
    if (readiness.ready) return reply.send({ status: 'ready' });
    if (readiness.cause !== undefined) request.log.warn({ err: readiness.cause }, 'not ready');
    return reply.code(503).send({ status: 'unavailable', reason: readiness.reason });
  });

  return {
    fastify,
    services,
    async close() {
      closing = true;
      await fastify.close();
      // After the last request: write the session touches it left pending.
      // With the database gone they are lost (sliding expiry and
      // last_request_at of the last second): said in the log, not thrown.
      await services.close().catch((error: unknown) => {
        fastify.log.warn({ err: toAppError(error) }, 'pending session touches not written');
      });
    },
  };
}

/** The schema has no subscriptions: refused in validation (400), not at execution as a server error. */
const noSubscriptions: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (node.operation === 'subscription') {
      context.reportError(new GraphQLError('Subscriptions are not supported', { nodes: node }));
    }
  },
});

/** Node's 'clientError': the connection is answered and closed (as Node and Fastify do). */
function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A HEAD answer has no body: a client would choke on one.
  const head = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
  if (socket.writable) {
    const [status, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request line and headers too large']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request timeout']
          : [400, 'Malformed HTTP request'];
    const body = JSON.stringify({ errors: [message] });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
    );
  }
  socket.destroy(error);
}

/** The error shape for a request no route took: the lookup's, or the list one. */
const styleOfUrl = (url: string): ErrorStyle => (url.startsWith('/users/external/') ? 'object' : 'list');

const noRoute = (request: FastifyRequest): AppError =>
  new AppError('NOT_FOUND', `No route for ${request.method} ${request.url.split('?')[0]}`);

/** Fastify's own request errors (body parsing, limits) in the service's terms. */
function fromFastifyError(error: unknown): unknown {
  if (error instanceof AppError) return error;
  const { code, statusCode } = error as { code?: string; statusCode?: number };
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new AppError('PAYLOAD_TOO_LARGE', 'Request body too large');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Content-Type: send application/json or application/x-www-form-urlencoded');
  }
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return new AppError('BAD_REQUEST', `${MESSAGES.malformedBody}`);
  }
  return error;
}
