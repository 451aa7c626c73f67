// createApp(): the whole HTTP service — GraphQL at /graphql, the legacy REST
// paths, health checks — over an open database. Used by main and by tests.
import { ApolloServer } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions, LogController } from 'fastify';
import { GraphQLError, type GraphQLSchema, type ValidationRule } from 'graphql';
import { Counter, type Registry } from 'prom-client';
import { createContext, credentialsFromHeaders, DEFAULT_SESSION_TOKEN_HEADERS, type Context } from './context';
import type { Database } from './db';
import { toAppError } from './errors';
import { failureHandling, formatGraphQLError } from './http/failures';
import { costLimitPlugin } from './graphql/cost';
import { compiledExecution, type ExecutionStats } from './graphql/execute';
import { graphqlArmor, parseOptions } from './graphql/limits';
import { rememberApolloQueryHashes } from './overrides/query-hash';
import { buildSchema } from './graphql/schema';
import { type LiveOptions, registerSubscriptions } from './graphql/subscriptions';
import { registerTrustedDocuments, type TrustedDocumentsOptions, trustedDocumentsFromConfig } from './graphql/trusted-documents';
import { type CachingOptions, registerCaching } from './http/caching';
import { registerApolloRoute } from './overrides/apollo-route';
import { type OverrideName, overrideOn } from './overrides';
import { type ExplorerOptions, registerExplorer } from './http/explorer';
import { linkContext, logRedact, operationLabelPlugin, registerObservability } from './http/observability';
import { parseQuery, registerBodyParsers, registerRequestTargetCheck } from './http/parsing';
import { registerRequestIds, requestIdOf } from './http/request-id';
import { type CloseOptions, registerLifecycle } from './http/lifecycle';
import { registerOperatorMetrics } from './http/operator-metrics';
import { type RateLimitOptions, registerRateLimits } from './http/rate-limit';
import { registerSchemaEndpoint } from './http/schema-endpoint';
import { clientErrorHandler, DEFAULT_TIMEOUTS, registerBodyTimeouts, serverTimeouts, type TimeoutOptions } from './http/timeouts';
import { csrfPreflightHeaders, registerSecurity, type SecurityOptions } from './http/security';
import { registerOpenApi } from './rest/openapi';
import { qbTime, SESSION_EXPIRY_HEADER } from './rest/headers';
import { registerRestRoutes } from './rest/register';
import { styleOfPath } from './rest/routes';
import { createProvisioning, type Provisioning } from './provisioning';
import { type AddressBookOptions, createServices, type MessagesOptions, type Services, type SessionsOptions, type SweeperOptions } from './services';
import { SWEPT_KINDS } from './services/sweeper';
import { SESSION_TTL_SECONDS, type AuthOptions } from './services/auth';
import { newSecretsKey } from './services/secrets';
import { registerTracing } from './tracing/spans';
import type { Config } from './config';
import type { SharedRedis } from './scale/redis';
import type { ReadReplicas } from './scale/replicas';
import { postgresRevocations, redisRevocations, type RevocationBus } from './scale/revocations';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's context, made on first use (GraphQL, a REST route, or a hook). */
    context?: Context;
  }
}

export interface AppOptions {
  database: Database;
  /** Fastify's logger option: false in tests, pino settings in main; the credential headers are redacted unless `redact` is given. */
  logger?: FastifyServerOptions['logger'];
  /** Serve GET /metrics (default true). */
  metrics?: boolean;
  /** Serve it on the service's port too (default true); main serves it on METRICS_PORT instead when set (issue 31). */
  metricsPublic?: boolean;
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
  /** Headers that carry a session token, lower case (default: svc-token, qb-token). */
  sessionTokenHeaders?: readonly string[];
  /** Seals applications' auth secrets (see createServices; tests may leave it out: a key of this app alone). */
  secretsKey?: Buffer;
  /** Session requests' timestamp window, failed-login budgets and sessions per user. */
  sessions?: SessionsOptions;
  /** Deleted content's retention. */
  messages?: MessagesOptions;
  /** The sweeper's interval and batch size; it runs only once main calls `services.sweeper.start()`. */
  sweeper?: SweeperOptions;
  /** Address books' bounds: contacts per book, device books per user, new phone numbers a day (issue 31). */
  addressBooks?: Omit<AddressBookOptions, 'redis'>;
  /** Serve HTTPS with this PEM key and certificate chain (default: plain HTTP). */
  https?: { key: string | Buffer; cert: string | Buffer };
  /** Serve GET /schema.graphql (default true). */
  schemaEndpoint?: boolean;
  /** Trusted documents on /graphql (default: off, with automatic persisted queries). */
  trustedDocuments?: TrustedDocumentsOptions;
  /**
   * Redis shared by the instances (REDIS_URL), connected by the caller, who
   * closes it: rate-limit counters and, with `revocation`, its channel.
   */
  redis?: SharedRedis;
  /**
   * Tell other instances at once when a session ends or changes (default
   * false: a single instance needs no one told). Through `redis` when given,
   * else LISTEN/NOTIFY on the database server (not on the embedded database).
   */
  revocation?: boolean;
  /** Read replicas (DATABASE_READ_URL), opened and closed by the caller. */
  reads?: ReadReplicas;
  /** How long caches may keep answers (default: callers' answers never, public documents 300 s). */
  caching?: CachingOptions;
  /** Bounds on each phase of a connection (src/http/timeouts.ts; default DEFAULT_TIMEOUTS). */
  timeouts?: Partial<TimeoutOptions>;
  /**
   * Run queries compiled (graphql-jit) on /graphql and the REST paths
   * (default true; mutations always run on graphql-js). false: everything on
   * graphql-js, the reference test/fuzz/differential.test.ts compares with.
   */
  compiledQueries?: boolean;
  /** Overrides of dependencies' internals turned off (src/overrides/README.md; default none): the dependencies' own code runs instead. */
  overridesOff?: readonly OverrideName[];
  /** Subscriptions over WebSocket on GET /graphql and their bounds (src/graphql/subscriptions.ts; default: on). */
  live?: LiveOptions;
}

/** The options the configuration decides (main adds the logger and the explorer's headers). */
export function appOptionsFromConfig(config: Config): Omit<AppOptions, 'database'> {
  return {
    introspection: config.GRAPHQL_INTROSPECTION,
    metrics: config.METRICS_ENABLED,
    // In production /metrics is where the operator says: METRICS_PORT, else nowhere.
    metricsPublic: config.METRICS_PORT === undefined && config.NODE_ENV !== 'production',
    explorer: { enabled: config.GRAPHQL_EXPLORER },
    rateLimit: config.RATE_LIMIT_ENABLED && {
      windowMs: config.RATE_LIMIT_WINDOW_MS,
      perCredential: config.RATE_LIMIT_PER_CREDENTIAL,
      perAddress: config.RATE_LIMIT_PER_ADDRESS,
      onStoreError: config.RATE_LIMIT_ON_STORE_ERROR,
    },
    // Another instance may share the database only when it is a server.
    revocation: config.DATABASE_URL !== undefined,
    security: { corsOrigins: config.CORS_ORIGINS },
    trustProxy: config.TRUST_PROXY,
    sessionTokenHeaders: config.SESSION_TOKEN_HEADERS,
    sessions: {
      timestampWindowSeconds: config.SESSION_TIMESTAMP_WINDOW_S,
      loginAttempts: {
        windowMs: config.LOGIN_FAILURE_WINDOW_MS,
        perLogin: config.LOGIN_FAILURES_PER_LOGIN,
        perAddress: config.LOGIN_FAILURES_PER_ADDRESS,
        checksPerAccount: config.PASSWORD_CHECKS_PER_ACCOUNT,
        checksPerAddress: config.PASSWORD_CHECKS_PER_ADDRESS,
      },
      sessionsPerUser: config.SESSIONS_PER_USER_MAX,
      applicationSessions: { perApplication: config.APPLICATION_SESSIONS_PER_APPLICATION, perAddress: config.APPLICATION_SESSIONS_PER_ADDRESS },
    },
    messages: { deletedContentRetentionSeconds: config.DELETED_CONTENT_RETENTION_S },
    addressBooks: {
      maxContacts: config.ADDRESS_BOOK_MAX_CONTACTS,
      maxDeviceBooks: config.ADDRESS_BOOK_MAX_DEVICE_BOOKS,
      discoveryPerDay: config.CONTACT_DISCOVERY_PER_DAY,
    },
    sweeper: {
      intervalMs: config.SWEEP_INTERVAL_MS,
      batchSize: config.SWEEP_BATCH_SIZE,
      maxShare: config.SWEEP_MAX_SHARE,
      liveEventRetentionSeconds: config.LIVE_EVENT_RETENTION_S,
    },
    schemaEndpoint: config.GRAPHQL_SCHEMA_ENDPOINT,
    trustedDocuments: trustedDocumentsFromConfig(config),
    overridesOff: config.DEPENDENCY_OVERRIDES_OFF,
    caching: { privateMaxAgeSeconds: config.CACHE_PRIVATE_MAX_AGE_S, publicMaxAgeSeconds: config.CACHE_PUBLIC_MAX_AGE_S },
    timeouts: {
      headersMs: config.HEADERS_TIMEOUT_MS,
      bodyIdleMs: config.BODY_IDLE_TIMEOUT_MS,
      requestMs: config.REQUEST_TIMEOUT_MS,
      keepAliveMs: config.KEEP_ALIVE_TIMEOUT_MS,
    },
    live: {
      enabled: config.LIVE_ENABLED,
      listenUrl: config.LIVE_LISTEN_URL ?? config.DATABASE_URL,
      pollMs: config.LIVE_POLL_MS,
      initTimeoutMs: config.LIVE_INIT_TIMEOUT_MS,
      socketsPerUser: config.LIVE_SOCKETS_PER_USER,
      socketsMax: config.LIVE_SOCKETS_MAX,
      subscriptionsPerSocket: config.LIVE_SUBSCRIPTIONS_PER_SOCKET,
      messageBytesMax: config.LIVE_MESSAGE_BYTES_MAX,
      socketQueueMax: config.LIVE_SOCKET_QUEUE_MAX,
      socketBufferBytes: config.LIVE_SOCKET_BUFFER_BYTES,
      keepAliveMs: config.LIVE_KEEPALIVE_MS,
      recheckMs: config.LIVE_RECHECK_MS,
    },
  };
}

export interface App {
  readonly fastify: FastifyInstance;
  readonly services: Services;
  /** Writes that set tenants up (the demo seed, tests' fixtures); no request reaches them, and Prisma loads on the first. */
  readonly provisioning: Provisioning;
  /** How /graphql documents ran: compiled, or on graphql-js (src/graphql/execute.ts). */
  readonly graphqlExecution: ExecutionStats;
  /** The metrics' registry: served by GET /metrics, or by main on METRICS_PORT (serveMetrics). */
  readonly metrics: Registry;
  /** Readiness fails (/readyz 503) while requests are still served: the first step of a graceful stop (src/http/lifecycle.ts). */
  drain(): void;
  /** Called as close() begins, for live connections of other protocols (WebSockets: close them with 1001). */
  onClosing(listener: () => void | Promise<void>): void;
  /**
   * Stops accepting, ends kept-alive connections after their next answer
   * (`Connection: close`), lets in-flight requests finish, stops Apollo. The
   * database is the caller's.
   */
  close(options?: CloseOptions): Promise<void>;
}

/** Ids per delete (25 characters each with the comma) must fit in the request line. */
const MAX_URL_BYTES = 64 * 1024;

export async function createApp(options: AppOptions): Promise<App> {
  const { database } = options;
  const secretsKey = options.secretsKey ?? newSecretsKey();
  const services = createServices(database, {
    auth: options.auth,
    secretsKey,
    sessions: { ...options.sessions, redis: options.redis },
    reads: options.reads,
    messages: options.messages,
    sweeper: options.sweeper,
    addressBooks: { ...options.addressBooks, redis: options.redis },
  });
  const provisioning = createProvisioning(database, { secretsKey, services });
  const schema = buildSchema();
  const sessionTokenHeaders = options.sessionTokenHeaders ?? DEFAULT_SESSION_TOKEN_HEADERS;
  const contextOf = (request: FastifyRequest): Context =>
    (request.context ??= createContext(services, credentialsFromHeaders(request.headers, sessionTokenHeaders), request.id, request.ip));

  const failures = failureHandling(styleOfPath);
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const fastify = createFastify(options, sessionTokenHeaders, failures, timeouts);
  registerRequestIds(fastify);
  registerRequestTargetCheck(fastify);

  await registerBodyParsers(fastify);

  failures.register(fastify);
  registerBodyTimeouts(fastify, timeouts);
  const lifecycle = registerLifecycle(fastify, database);

  // No-op unless tracing was started (src/tracing).
  registerTracing(fastify);
  const metrics = registerObservability(fastify, {
    pool: database.pool,
    statementCount: database.statementCount,
    metrics: options.metrics ?? true,
    ownDurations: overrideOn(options.overridesOff, 'durations'),
    metricsPublic: options.metricsPublic ?? true,
  });
  // Security headers and CORS first, so that every answer carries them, a 429
  // included (a browser could not read it otherwise). Then, before the routes,
  // the rate limits: a client over its budget costs one counter lookup.
  await registerSecurity(fastify, { ...options.security, sessionTokenHeaders });
  // Every answer private unless its route says otherwise (src/http/caching.ts).
  registerCaching(fastify, { ...options.caching, sessionTokenHeaders });
  if (options.rateLimit) {
    await registerRateLimits(fastify, { redis: options.redis, metrics, ...options.rateLimit }, sessionTokenHeaders);
  }

  const revocations = await openRevocations(options, services);
  services.auth.useRevocations(revocations);
  registerServiceCounters(metrics, services, options.reads);
  registerOperatorMetrics(fastify, metrics, { database, reads: options.reads, redis: options.redis });
  registerSessionExpiry(fastify);

  const { apollo, execution, trusted, armor } = await startApollo(fastify, schema, options, sessionTokenHeaders);
  const live = await registerSubscriptions(fastify, {
    ...options.live,
    listenUrl: options.live?.listenUrl ?? database.url,
    schema,
    services,
    pool: database.pool,
    sessionTokenHeaders,
    validationRules: armor.validationRules,
    trusted,
    metrics,
    onError: (error) => fastify.log.warn({ err: toAppError(error) }, 'live events listener'),
  });
  const graphqlContext = async (request: FastifyRequest) => linkContext(contextOf(request), request);
  registerApolloRoute(fastify, apollo, '/graphql', graphqlContext, overrideOn(options.overridesOff, 'apollo-route'));

  registerRestRoutes(fastify, schema, contextOf, { compile: options.compiledQueries ?? true });
  registerOpenApi(fastify, sessionTokenHeaders);
  registerExplorer(fastify, { ...(options.explorer ?? { enabled: true }), requestHeaders: trusted.explorerHeaders });
  registerSchemaEndpoint(fastify, options.schemaEndpoint ?? true);

  return {
    fastify,
    services,
    provisioning,
    graphqlExecution: execution.stats,
    metrics,
    drain: () => lifecycle.drain(),
    onClosing: (listener) => lifecycle.onClosing(listener),
    async close(options) {
      // Stopped first, not after the drain: a sweep batch in progress ends
      // (one short statement) while requests finish; no new one starts.
      const sweeperStopped = services.sweeper.stop();
      await lifecycle.stopAccepting(options);
      await fastify.close();
      await live?.close();
      await sweeperStopped;
      // After the last request: write the session touches it left pending.
      // With the database gone they are lost (sliding expiry and
      // last_request_at of the last second): said in the log, not thrown.
      await services.close().catch((error: unknown) => {
        fastify.log.warn({ err: toAppError(error) }, 'pending session touches not written');
      });
      await revocations?.close();
    },
  };
}

/** Fastify with the service's bounds, logger, request ids, router and failure handling. */
function createFastify(
  options: AppOptions,
  sessionTokenHeaders: readonly string[],
  failures: ReturnType<typeof failureHandling>,
  timeouts: TimeoutOptions,
): FastifyInstance {
  const { server: serverBounds, ...fastifyBounds } = serverTimeouts(timeouts);
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

/** The bus that tells other instances of a revoked session: Redis when shared, else PostgreSQL's NOTIFY on a server database. */
async function openRevocations(options: AppOptions, services: Services): Promise<RevocationBus | undefined> {
  const { database } = options;
  if (options.revocation && options.redis) {
    return redisRevocations(options.redis, services.auth);
  } else if (options.revocation && database.url !== undefined) {
    return postgresRevocations(
      database.url,
      async (channel, payload) => {
        await database.pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
      },
      services.auth,
    );
  }
  return undefined;
}

/** The services' own counters, read at each scrape of /metrics. */
function registerServiceCounters(metrics: Registry, services: Services, reads: ReadReplicas | undefined): void {
  new Counter({
    name: 'credential_revocations_failed_total',
    help: 'Session revocations the bus (Redis, NOTIFY) failed to send: other instances honour the session until their cache entry expires',
    registers: [metrics],
    collect() {
      this.reset();
      this.inc(services.auth.revocationFailures);
    },
  });
  if (reads) {
    new Counter({
      name: 'db_reads_routed_total',
      help: 'Reads that may use a replica (lookups, registered users), by where they went and why',
      labelNames: ['route'] as const,
      registers: [metrics],
      collect() {
        this.reset();
        for (const [route, count] of Object.entries(reads.routes)) this.inc({ route }, count);
      },
    });
  }
  const { sweeper } = services;
  new Counter({
    name: 'sweeper_removed_total',
    help: 'Rows the sweeper of this instance removed: expired sessions, used nonces past the window, retained content past its retention',
    labelNames: ['kind'] as const,
    registers: [metrics],
    collect() {
      this.reset();
      for (const kind of SWEPT_KINDS) this.inc({ kind }, sweeper.removed[kind]);
    },
  });
  new Counter({
    name: 'sweeper_runs_total',
    help: 'Sweeper runs of this instance: swept (it held the lock), skipped (another instance was sweeping), failed',
    labelNames: ['outcome'] as const,
    registers: [metrics],
    collect() {
      this.reset();
      for (const [outcome, count] of Object.entries(sweeper.runs)) this.inc({ outcome }, count);
    },
  });
  new Counter({
    name: 'sweeper_busy_seconds_total',
    help: "Time this instance's sweep statements took: its rate is the share of the time the sweeper used (at most SWEEP_MAX_SHARE percent while it works through a backlog)",
    registers: [metrics],
    collect() {
      this.reset();
      this.inc(sweeper.busyMs / 1000);
    },
  });
  new Counter({
    name: 'session_touch_deadlock_retries_total',
    help: 'Session-touch flushes run again after losing a deadlock',
    registers: [metrics],
    collect() {
      this.reset();
      this.inc(services.auth.deadlockRetries);
    },
  });
}

/**
 * Every answer to a request made with a live session token says when that
 * session now expires (each request moves it), as QuickBlox's API does: its
 * SDKs renew the session by it. A callback hook (no promise per request); the
 * header has whole seconds, so its text is made once a second.
 */
function registerSessionExpiry(fastify: FastifyInstance): void {
  let expirySecond = -1;
  let expiryText = '';
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const caller = request.context?.authenticated;
    if (caller?.via === 'session' && !reply.hasHeader(SESSION_EXPIRY_HEADER)) {
      const second = Math.floor(Date.now() / 1000);
      if (second !== expirySecond) {
        expirySecond = second;
        expiryText = qbTime(new Date((second + SESSION_TTL_SECONDS) * 1000));
      }
      reply.header(SESSION_EXPIRY_HEADER, expiryText);
    }
    done(null, payload);
  });
}

/** Apollo Server over the schema, with the service's limits, trusted documents and executor, started. */
async function startApollo(fastify: FastifyInstance, schema: GraphQLSchema, options: AppOptions, sessionTokenHeaders: readonly string[]) {
  const introspection = options.introspection ?? true;
  // Depth, cost, aliases, directives and tokens; batching off.
  const armor = graphqlArmor(introspection);
  const trusted = registerTrustedDocuments(fastify, options.trustedDocuments ?? { mode: 'off' });
  const execution = compiledExecution(schema, { compile: options.compiledQueries ?? true });
  // Apollo's SHA-256 of each request's query text, remembered by text.
  if (overrideOn(options.overridesOff, 'query-hash')) rememberApolloQueryHashes();
  const apollo = new ApolloServer<Context>({
    // The schema comes through the gateway interface with the compiled
    // executor (src/graphql/execute.ts): Apollo parses, validates and formats;
    // execution runs compiled documents.
    gateway: execution.gateway,
    introspection,
    validationRules: [...armor.validationRules, noSubscriptions],
    persistedQueries: trusted.persistedQueries,
    csrfPrevention: { requestHeaders: csrfPreflightHeaders(sessionTokenHeaders) },
    parseOptions,
    allowBatchedHttpRequests: false,
    // The explorer page is served by the service itself (Apollo's own landing
    // pages load from a CDN and show nothing offline).
    plugins: [
      fastifyApolloDrainPlugin(fastify),
      ApolloServerPluginLandingPageDisabled(),
      // The schema sets no cache hints, and the cache-control plugin, on by
      // default, wraps every field's resolver to collect them: the compiled
      // documents would then call a resolver for each scalar field of each
      // result instead of reading the property (BENCHMARKS.md).
      ApolloServerPluginCacheControlDisabled(),
      // Apollo adds its inline-trace plugin unless told not to; it traces
      // only a federation subgraph's requests, which this schema is not, but
      // its hook still ran (and made a promise) for every request.
      ApolloServerPluginInlineTraceDisabled(),
      operationLabelPlugin((hash) => trusted.isTrusted(hash)),
      ...armor.plugins,
      trusted.plugin,
      // What the root fields would read or write together, before any resolver runs.
      costLimitPlugin,
    ],
    includeStacktraceInErrorResponses: false,
    formatError: formatGraphQLError(fastify.log),
    // main owns the signals (src/http/lifecycle.ts): Apollo's own handler
    // would stop /graphql at the first SIGTERM, before the drain's delay, and
    // raise the signal again.
    stopOnTerminationSignals: false,
  });
  await apollo.start();
  return { apollo, execution, trusted, armor };
}

/** Subscriptions are served over WebSocket (src/graphql/subscriptions.ts): over HTTP refused in validation (400), not at execution as a server error. */
const noSubscriptions: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (node.operation === 'subscription') {
      context.reportError(new GraphQLError('Subscriptions are served over WebSocket (graphql-transport-ws) on GET /graphql, not over HTTP', { nodes: node }));
    }
  },
});
