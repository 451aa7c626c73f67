// Configuration: read from the environment and validated once, at start.
// A bad value stops the service with a message naming the variable.
import { z } from 'zod';

const flag = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');

const schema = z.object({
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
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** The GraphQL explorer page (default: on, off when NODE_ENV=production). */
  GRAPHQL_EXPLORER: flag.optional(),
  /** GraphQL introspection (default: on, off when NODE_ENV=production). */
  GRAPHQL_INTROSPECTION: flag.optional(),
  /** GET /metrics in Prometheus text format. */
  METRICS_ENABLED: flag.default(true),
  /**
   * Longest a statement may run, and longest a request waits for a pooled
   * connection, before it fails with 503 DATABASE_TIMEOUT (0: no bound).
   */
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(5_000),
  /** Rate limits (per instance; see the README). Off for benchmarks. */
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
    .transform((value) => (value.trim() === '*' ? ('*' as const) : value.split(',').map((o) => o.trim()).filter(Boolean)))
    .refine((origins) => origins === '*' || origins.every((o) => /^https?:\/\/[^/\s]+$/.test(o)), {
      message: 'must be * or a comma-separated list of origins such as https://app.example.com',
    })
    .optional(),
});

type Parsed = z.infer<typeof schema>;

/** The configuration, with defaults that depend on NODE_ENV resolved. */
export type Config = Parsed & { GRAPHQL_EXPLORER: boolean; GRAPHQL_INTROSPECTION: boolean };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty variables count as unset, as in most shells' `VAR= cmd` usage.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const production = parsed.data.NODE_ENV === 'production';
  return {
    ...parsed.data,
    GRAPHQL_EXPLORER: parsed.data.GRAPHQL_EXPLORER ?? !production,
    GRAPHQL_INTROSPECTION: parsed.data.GRAPHQL_INTROSPECTION ?? !production,
  };
}
