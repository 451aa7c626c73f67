// Configuration: read from the environment and validated once, at start.
// A bad value stops the service with a message naming the variable.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from './errors';
import { OVERRIDES } from './overrides';
import { DEFAULT_PUBLIC_MAX_AGE_SECONDS } from './http/caching';
import { DEFAULT_TIMEOUTS } from './http/timeouts';
import { ADDRESS_BOOK_DEFAULTS } from './services/address-book-limits';
import { APPLICATION_SESSION_DEFAULTS, LOGIN_ATTEMPT_DEFAULTS } from './services/login-attempts';
import { newSecretsKey, parseSecretsKey } from './services/secrets';
import { SESSIONS_PER_USER_DEFAULT, TIMESTAMP_WINDOW_DEFAULT_S } from './services/sessions';
import { SWEEP_BATCH_DEFAULT, SWEEP_INTERVAL_DEFAULT_MS, SWEEP_MAX_SHARE_DEFAULT } from './services/sweeper';

const flag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

const schema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    HOST: z.string().min(1).default('127.0.0.1'),
    PORT: z.coerce.number().int().min(0).max(65535).default(4000),
    /** A PostgreSQL server; unset means the embedded PGlite database. */
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    /** Where the embedded database keeps its files. */
    PGLITE_DIR: z.string().min(1).default('.data/pglite'),
    /** Connections to a PostgreSQL server (the embedded database always has one). */
    DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
    /** Apply pending migrations at start. */
    MIGRATE_ON_START: flag.default(true),
    /** Seed the demo data set into a fresh embedded database and print curl commands. */
    DEMO_SEED: flag.default(true),
    // How far V8 lets the old generation grow past what survived the last full
    // GC before the next one (percent; 0: V8's own, dynamic factor of up to 4×).
    // docs/decisions.md: Decisions, Memory.
    HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(1000).default(50),
    /** One memory-reducing collection once listening: start-up's garbage given back (src/startup-gc.ts). */
    GC_AFTER_START: flag.default(true),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** The GraphQL explorer page (default: on, off when NODE_ENV=production). */
    GRAPHQL_EXPLORER: flag.optional(),
    /** GraphQL introspection (default: on, off when NODE_ENV=production). */
    GRAPHQL_INTROSPECTION: flag.optional(),
    /** GET /metrics in Prometheus text format. */
    METRICS_ENABLED: flag.default(true),
    /**
     * Serve /metrics on this port (of METRICS_HOST, default HOST) instead of
     * the service's own. In production /metrics is served only here: unset,
     * nowhere.
     */
    METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
    METRICS_HOST: z.string().min(1).optional(),
    /**
     * Longest a statement may run, and longest a request waits for a pooled
     * connection, before it fails with 503 DATABASE_TIMEOUT (0: no bound).
     */
    DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
    /**
     * named: each statement is parsed once per connection (fastest, direct to
     * PostgreSQL or PgBouncer in session mode). unnamed: parsed on every call,
     * and the statement timeout is set per transaction (SET LOCAL), which is
     * what PgBouncer in transaction mode accepts.
     */
    DB_PREPARED_STATEMENTS: z.enum(['named', 'unnamed']).default('named'),
    /**
     * Read replicas (hot standbys), comma-separated postgres:// URLs: user
     * lookups and registered users read there; writes and credential checks stay
     * on DATABASE_URL.
     */
    DATABASE_READ_URL: z
      .string()
      .transform((value) =>
        value
          .split(',')
          .map((url) => url.trim())
          .filter(Boolean),
      )
      .refine((urls) => urls.length > 0 && urls.every((url) => /^postgres(ql)?:\/\//.test(url)), {
        message: 'must be one or more comma-separated postgres:// or postgresql:// URLs',
      })
      .optional(),
    /** A replica further behind the primary than this (ms of replay) is skipped. */
    READ_REPLICA_MAX_LAG_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
    /** How long a read waits for a replica to replay the caller's last write before reading the primary. */
    READ_YOUR_WRITES_WAIT_MS: z.coerce.number().int().min(0).max(10_000).default(250),
    /**
     * Redis (redis:// or rediss://): shared rate-limit budgets, credential
     * revocation and callers' last write positions across instances.
     */
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
      .optional(),
    /** Prefix of every key and channel this service uses in Redis (several deployments can share one). */
    REDIS_KEY_PREFIX: z.string().min(1).max(100).default('chat-user-service:'),
    /** How long the service waits for Redis at start before it gives up. */
    REDIS_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    /** When the rate-limit store (Redis) fails: serve the request uncounted (open) or refuse it with 503 (closed). */
    RATE_LIMIT_ON_STORE_ERROR: z.enum(['open', 'closed']).default('open'),
    /** Rate limits (per instance, or shared through REDIS_URL; see the README). Off for benchmarks. */
    RATE_LIMIT_ENABLED: flag.default(true),
    RATE_LIMIT_WINDOW_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
    /** Requests per window for one session token or API key. */
    RATE_LIMIT_PER_CREDENTIAL: z.coerce.number().int().min(1).default(1_200),
    /** Requests per window from one client address, whatever its credentials. */
    RATE_LIMIT_PER_ADDRESS: z.coerce.number().int().min(1).default(6_000),
    /** Take the client address from X-Forwarded-For (behind a proxy you run). */
    TRUST_PROXY: flag.default(false),
    /**
     * Origins allowed to call the API from a browser: a comma-separated list,
     * or * for any. Unset: no CORS headers, so browsers on other origins are refused.
     */
    CORS_ORIGINS: z
      .string()
      .transform((value) =>
        value.trim() === '*'
          ? ('*' as const)
          : value
              .split(',')
              .map((o) => o.trim())
              .filter(Boolean),
      )
      .refine((origins) => origins === '*' || origins.every((o) => /^https?:\/\/[^/\s]+$/.test(o)), {
        message: 'must be * or a comma-separated list of origins such as https://app.example.com',
      })
      .optional(),
    /**
     * Headers that carry a session token (QuickBlox SDKs send QB-Token; the
     * spec calls it SVC-Token). Compared case-insensitively.
     */
    SESSION_TOKEN_HEADERS: z
      .string()
      .transform((value) =>
        value
          .split(',')
          .map((name) => name.trim().toLowerCase())
          .filter(Boolean),
      )
      .refine((names) => names.length > 0 && names.every((name) => /^[a-z0-9-]{1,64}$/.test(name)), {
        message: 'must be a comma-separated list of header names such as SVC-Token,QB-Token',
      })
      .refine((names) => !names.some((name) => ['authorization', 'on-behalf-of', 'content-type', 'host'].includes(name)), {
        message: 'must not name Authorization, On-Behalf-Of, Content-Type or Host',
      })
      .default(['svc-token', 'qb-token']),
    /**
     * Bounds on each phase of a connection (src/http/timeouts.ts): the request
     * line and headers, a silence within a body, the whole request (headers and
     * body) from its first byte, and an idle kept-alive connection. Past the
     * first three the request is answered 408 and the connection closed.
     */
    HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(DEFAULT_TIMEOUTS.headersMs),
    BODY_IDLE_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(DEFAULT_TIMEOUTS.bodyIdleMs),
    REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(DEFAULT_TIMEOUTS.requestMs),
    KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(DEFAULT_TIMEOUTS.keepAliveMs),
    /**
     * How long a caller's browser may keep their successful GET answers
     * (`private, max-age=N`); 0: `private, no-store`. No shared cache may keep them either way.
     */
    CACHE_PRIVATE_MAX_AGE_S: z.coerce.number().int().min(0).max(86_400).default(0),
    /** How long any cache may keep the public documents (schema, OpenAPI, explorer) before revalidating them by ETag. */
    CACHE_PUBLIC_MAX_AGE_S: z.coerce.number().int().min(0).max(86_400).default(DEFAULT_PUBLIC_MAX_AGE_SECONDS),
    /** How far (seconds) a session request's signed timestamp may be from the server's clock. */
    SESSION_TIMESTAMP_WINDOW_S: z.coerce.number().int().min(1).max(86_400).default(TIMESTAMP_WINDOW_DEFAULT_S),
    /**
     * Failed password attempts allowed per account (its login and its email
     * together) and per unknown login or email (the same number, so that a
     * budget does not tell which names exist), and per client address, in
     * LOGIN_FAILURE_WINDOW_MS. The name is kept from when the budget was per login.
     */
    LOGIN_FAILURES_PER_LOGIN: z.coerce.number().int().min(1).default(LOGIN_ATTEMPT_DEFAULTS.perLogin),
    LOGIN_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).default(LOGIN_ATTEMPT_DEFAULTS.perAddress),
    /**
     * Password checks, right or wrong, allowed per account (or unknown name)
     * and per client address in LOGIN_FAILURE_WINDOW_MS: each is ~40 ms of
     * scrypt, and a right password spends no failure budget.
     */
    PASSWORD_CHECKS_PER_ACCOUNT: z.coerce.number().int().min(1).default(LOGIN_ATTEMPT_DEFAULTS.checksPerAccount),
    PASSWORD_CHECKS_PER_ADDRESS: z.coerce.number().int().min(1).default(LOGIN_ATTEMPT_DEFAULTS.checksPerAddress),
    LOGIN_FAILURE_WINDOW_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(LOGIN_ATTEMPT_DEFAULTS.windowMs),
    /**
     * Application sessions (no user) opened per application, and per client
     * address, in an hour; past either, 429 with Retry-After. A user's are
     * capped by SESSIONS_PER_USER_MAX.
     */
    APPLICATION_SESSIONS_PER_APPLICATION: z.coerce.number().int().min(1).default(APPLICATION_SESSION_DEFAULTS.perApplication),
    APPLICATION_SESSIONS_PER_ADDRESS: z.coerce.number().int().min(1).default(APPLICATION_SESSION_DEFAULTS.perAddress),
    /** Live sessions one user may hold; opening or logging into one more ends their least recently used. */
    SESSIONS_PER_USER_MAX: z.coerce.number().int().min(1).max(100_000).default(SESSIONS_PER_USER_DEFAULT),
    /** Contacts one address book may hold; an upload that would pass it is refused whole (422). */
    ADDRESS_BOOK_MAX_CONTACTS: z.coerce.number().int().min(1).max(1_000_000).default(ADDRESS_BOOK_DEFAULTS.maxContacts),
    /** Device address books (udids) one user may hold besides the global one. */
    ADDRESS_BOOK_MAX_DEVICE_BOOKS: z.coerce.number().int().min(0).max(1_000).default(ADDRESS_BOOK_DEFAULTS.maxDeviceBooks),
    /** Phone numbers new to all of a user's books that their uploads may add (and so check against the application's users) a day. */
    CONTACT_DISCOVERY_PER_DAY: z.coerce.number().int().min(1).default(ADDRESS_BOOK_DEFAULTS.discoveryPerDay),
    /**
     * How long (seconds) the content of a message deleted for everyone, or
     * hidden by every occupant, is kept aside for audit before the sweeper
     * removes it. 0: gone with the delete, nothing kept. At most ten years.
     */
    DELETED_CONTENT_RETENTION_S: z.coerce.number().int().min(0).max(315_360_000).default(0),
    /**
     * How often the sweeper removes what only grows (expired sessions, used
     * nonces, retained content past its time); one instance at a time. 0: never
     * (run `admin sweep` from a scheduler instead).
     */
    SWEEP_INTERVAL_MS: z.coerce
      .number()
      .int()
      .refine((ms) => ms === 0 || (ms >= 1_000 && ms <= 86_400_000), { message: 'must be 0 (off) or 1000 to 86400000' })
      .default(SWEEP_INTERVAL_DEFAULT_MS),
    /** Rows one sweep statement removes at most (each a short transaction of its own). */
    SWEEP_BATCH_SIZE: z.coerce.number().int().min(1).max(100_000).default(SWEEP_BATCH_DEFAULT),
    /**
     * Percent of the time the sweeper's statements may take while it works
     * through a backlog: it pauses after each batch in proportion to the
     * batch's time, so requests keep the database. 100: batches back to back.
     */
    SWEEP_MAX_SHARE: z.coerce.number().int().min(1).max(100).default(SWEEP_MAX_SHARE_DEFAULT),
    /**
     * The key that seals applications' auth secrets: 32 bytes, as 64 hex digits
     * or base64. Required in production (or SECRETS_KEY_FILE); elsewhere, when
     * unset, a key is generated once into SECRETS_KEY_FILE.
     */
    SECRETS_KEY: z
      .string()
      .refine((value) => parseSecretsKey(value) !== undefined, { message: 'must be 32 bytes as 64 hex digits or base64' })
      .optional(),
    /**
     * Serve HTTPS with this certificate chain and key (PEM files). QuickBlox's
     * SDKs only ever call https:// URLs; behind a TLS-terminating proxy, leave unset.
     */
    TLS_CERT_FILE: z.string().min(1).optional(),
    TLS_KEY_FILE: z.string().min(1).optional(),
    /** A file holding SECRETS_KEY (generated there outside production when missing). */
    SECRETS_KEY_FILE: z.string().min(1).optional(),
    /** GET /schema.graphql: the SDL (on in production too: the schema is not a secret for its clients). */
    GRAPHQL_SCHEMA_ENDPOINT: flag.default(true),
    /** Trusted documents on /graphql: off, allow (hashes accepted, free-form too) or enforce (manifest only). */
    GRAPHQL_TRUSTED_DOCUMENTS: z.enum(['off', 'allow', 'enforce']).default('off'),
    /** The persisted-documents manifest (hash → document) that allow and enforce load. */
    GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST: z.string().min(1).optional(),
    /**
     * A graceful stop (SIGTERM, SIGINT): how long the instance keeps serving
     * after the signal with /readyz failing, so that balancers (Kubernetes'
     * endpoints, HAProxy's checks) stop sending before it stops accepting.
     * Default: 5000 when NODE_ENV=production, else 0.
     */
    SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(600_000).optional(),
    /** After the delay, how long the stop may take (in-flight requests, the database) before the process exits 1 regardless. */
    SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(10_000),
    /**
     * Overrides of dependencies' internals to turn off (src/overrides/README.md),
     * comma-separated: their dependency's own code runs instead.
     */
    DEPENDENCY_OVERRIDES_OFF: z
      .string()
      .transform((value) =>
        value
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.enum(OVERRIDES, { error: `each must be one of ${OVERRIDES.join(', ')}` })))
      .default([]),
    /** OTLP/HTTP collector base URL: tracing is off unless it is set. */
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
    /** service.name of the spans. */
    OTEL_SERVICE_NAME: z.string().min(1).default('chat-user-service'),
  })
  .refine((env) => env.METRICS_PORT === undefined || env.METRICS_PORT !== env.PORT, {
    path: ['METRICS_PORT'],
    message: "must differ from PORT: it keeps /metrics off the service's port",
  })
  .refine((env) => env.HEADERS_TIMEOUT_MS <= env.REQUEST_TIMEOUT_MS, {
    path: ['HEADERS_TIMEOUT_MS'],
    message: 'must not exceed REQUEST_TIMEOUT_MS: the headers are part of the request',
  })
  .refine((env) => env.DATABASE_READ_URL === undefined || env.DATABASE_URL !== undefined, {
    path: ['DATABASE_READ_URL'],
    message: 'needs DATABASE_URL: replicas are of a PostgreSQL server, not of the embedded database',
  })
  .refine((env) => env.GRAPHQL_TRUSTED_DOCUMENTS === 'off' || env.GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST !== undefined, {
    path: ['GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST'],
    message: 'required when GRAPHQL_TRUSTED_DOCUMENTS is allow or enforce: the path of a persisted-documents manifest',
  });

type Parsed = z.infer<typeof schema>;

/** Every variable the service reads (docs/configuration.md's table lists the same: test/docs/reference.test.ts). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(schema.shape);

/** The configuration, with defaults that depend on NODE_ENV resolved. */
export type Config = Parsed & { GRAPHQL_EXPLORER: boolean; GRAPHQL_INTROSPECTION: boolean; SHUTDOWN_DELAY_MS: number };

/** SHUTDOWN_DELAY_MS in production: Kubernetes' endpoint removal and a balancer's health checks (2 × 500 ms in deploy/haproxy) take a few seconds. */
export const SHUTDOWN_DELAY_PRODUCTION_MS = 5_000;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty variables count as unset, as in most shells' `VAR= cmd` usage.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const production = parsed.data.NODE_ENV === 'production';
  if ((parsed.data.TLS_CERT_FILE === undefined) !== (parsed.data.TLS_KEY_FILE === undefined)) {
    throw new ConfigError('Invalid configuration:\n  TLS_CERT_FILE, TLS_KEY_FILE: set both (HTTPS) or neither (HTTP)');
  }
  for (const name of ['TLS_CERT_FILE', 'TLS_KEY_FILE'] as const) {
    const file = parsed.data[name];
    if (file !== undefined && !existsSync(file)) throw new ConfigError(`Invalid configuration:\n  ${name}: ${file} does not exist`);
  }
  return {
    ...parsed.data,
    GRAPHQL_EXPLORER: parsed.data.GRAPHQL_EXPLORER ?? !production,
    GRAPHQL_INTROSPECTION: parsed.data.GRAPHQL_INTROSPECTION ?? !production,
    SHUTDOWN_DELAY_MS: parsed.data.SHUTDOWN_DELAY_MS ?? (production ? SHUTDOWN_DELAY_PRODUCTION_MS : 0),
  };
}

/**
 * The key that seals applications' auth secrets: SECRETS_KEY, else the one in
 * SECRETS_KEY_FILE (default: `secrets.key` next to the embedded database's
 * folder), which outside production is generated there on first use.
 * `generated` tells main to say so: the key must be kept with the database.
 */
export function resolveSecretsKey(config: Config): { key: Buffer; file?: string; generated: boolean } {
  if (config.SECRETS_KEY !== undefined) return { key: parseSecretsKey(config.SECRETS_KEY)!, generated: false };
  if (config.NODE_ENV === 'production' && config.SECRETS_KEY_FILE === undefined) {
    throw new ConfigError(
      'Invalid configuration:\n  SECRETS_KEY: required in production (or SECRETS_KEY_FILE): 32 bytes as 64 hex digits or base64, e.g. `openssl rand -hex 32`',
    );
  }
  const file = config.SECRETS_KEY_FILE ?? path.join(path.dirname(path.resolve(config.PGLITE_DIR)), 'secrets.key');
  if (existsSync(file)) {
    const key = parseSecretsKey(readFileSync(file, 'utf8'));
    if (!key) throw new ConfigError(`Invalid configuration:\n  SECRETS_KEY_FILE: ${file} must hold 32 bytes as 64 hex digits or base64`);
    return { key, file, generated: false };
  }
  if (config.NODE_ENV === 'production') {
    throw new ConfigError(`Invalid configuration:\n  SECRETS_KEY_FILE: ${file} does not exist`);
  }
  const key = newSecretsKey();
  mkdirSync(path.dirname(file), { recursive: true });
  // wx: two processes starting at once must not each write a key of their own.
  try {
    writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch {
    return resolveSecretsKey(config);
  }
  return { key, file, generated: true };
}
