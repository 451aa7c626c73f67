// createApp(): the whole HTTP service — GraphQL at /graphql, the legacy REST
// paths, health checks — over an open database. Used by main and by tests.
// It only composes: each concern lives in the module that owns it and takes
// its own part of the options (src/app-options.ts). Fastify runs hooks in the
// order they are added, so the order of the registrations is part of the
// behaviour.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import type { AppOptions } from './app-options';
import { createContext, credentialsFromHeaders, DEFAULT_SESSION_TOKEN_HEADERS, type Context } from './context';
import { toAppError } from './errors';
import { startApollo } from './graphql/apollo';
import type { ExecutionStats } from './graphql/execute';
import { buildSchema } from './graphql/schema';
import { registerSubscriptions } from './graphql/subscriptions';
import { registerCaching } from './http/caching';
import { registerExplorer } from './http/explorer';
import { failureHandling } from './http/failures';
import { type CloseOptions, registerLifecycle } from './http/lifecycle';
import { linkContext, registerObservability } from './http/observability';
import { registerOperatorMetrics, registerServiceCounters } from './http/operator-metrics';
import { registerBodyParsers, registerRequestTargetCheck } from './http/parsing';
import { registerProbes } from './http/probes';
import { registerRateLimits } from './http/rate-limit';
import { registerRequestIds } from './http/request-id';
import { registerSchemaEndpoint } from './http/schema-endpoint';
import { registerSecurity } from './http/security';
import { createFastify } from './http/server';
import { DEFAULT_TIMEOUTS, registerBodyTimeouts } from './http/timeouts';
import { overrideOn } from './overrides';
import { registerApolloRoute } from './overrides/apollo-route';
import { createProvisioning, type Provisioning } from './provisioning';
import { registerSessionExpiry } from './rest/headers';
import { registerOpenApi } from './rest/openapi';
import { registerRestRoutes } from './rest/register';
import { styleOfPath } from './rest/routes';
import { openRevocations } from './scale/revocations';
import { createServices, type Services } from './services';
import { newSecretsKey } from './services/secrets';
import { registerTracing } from './tracing/spans';

export { type AppOptions, appOptionsFromConfig } from './app-options';

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

export async function createApp(options: AppOptions): Promise<App> {
  const { database } = options;
  const secretsKey = options.secretsKey ?? newSecretsKey();
  const services = createServices(database, {
    auth: options.auth,
    secretsKey,
    sessions: { ...options.sessions, redis: options.redis },
    reads: options.reads,
    chat: options.chat,
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
  const fastify = createFastify({ logger: options.logger, https: options.https, trustProxy: options.trustProxy, sessionTokenHeaders, failures, timeouts });
  registerRequestIds(fastify);
  registerRequestTargetCheck(fastify);

  await registerBodyParsers(fastify);

  failures.register(fastify);
  registerBodyTimeouts(fastify, timeouts);
  const lifecycle = registerLifecycle(fastify);
  registerProbes(fastify, { database, lifecycle });

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

  const revocations = await openRevocations({ revocation: options.revocation, redis: options.redis, database }, services.auth);
  services.auth.useRevocations(revocations);
  registerServiceCounters(metrics, { auth: services.auth, sweeper: services.sweeper, reads: options.reads });
  registerOperatorMetrics(fastify, metrics, { database, reads: options.reads, redis: options.redis });
  registerSessionExpiry(fastify);

  const { apollo, execution, trusted, armor } = await startApollo(fastify, schema, {
    introspection: options.introspection,
    trustedDocuments: options.trustedDocuments,
    compiledQueries: options.compiledQueries,
    queryHashOverride: overrideOn(options.overridesOff, 'query-hash'),
    sessionTokenHeaders,
  });
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
