// createApp()'s options (AppOptions) and how the configuration decides them
// (appOptionsFromConfig): the composition's input, beside app.ts so that
// app.ts holds the wiring alone. Each option is handed on to the module that
// owns it, which takes only its part (a narrow options type of its own).
import type { Config } from './config';
import type { Database } from './db';
import type { LiveOptions } from './graphql/subscriptions';
import { type TrustedDocumentsOptions, trustedDocumentsFromConfig } from './graphql/trusted-documents';
import type { CachingOptions } from './http/caching';
import type { ExplorerOptions } from './http/explorer';
import type { RateLimitOptions } from './http/rate-limit';
import type { SecurityOptions } from './http/security';
import type { ServerOptions } from './http/server';
import type { TimeoutOptions } from './http/timeouts';
import type { OverrideName } from './overrides';
import type { SharedRedis } from './scale/redis';
import type { ReadReplicas } from './scale/replicas';
import type { AddressBookOptions, ChatOptions, SessionsOptions, SweeperOptions } from './services';
import type { AuthOptions } from './services/auth';

export interface AppOptions {
  database: Database;
  /** Fastify's logger option: false in tests, pino settings in main; the credential headers are redacted unless `redact` is given. */
  logger?: ServerOptions['logger'];
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
  chat?: ChatOptions;
  /** The sweeper's interval and batch size; it runs only once main calls `services.sweeper.start()`. */
  sweeper?: SweeperOptions;
  /** Address books' bounds: contacts per book, device books per user, new phone numbers a day (issue 31). */
  addressBooks?: Omit<AddressBookOptions, 'redis'>;
  /** Serve HTTPS with this PEM key and certificate chain (default: plain HTTP). */
  https?: ServerOptions['https'];
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
    chat: { deletedContentRetentionSeconds: config.DELETED_CONTENT_RETENTION_S },
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
