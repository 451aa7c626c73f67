// One database handle per process: a pg pool and, when no DATABASE_URL is
// given, the embedded PGlite behind it. Prisma's client, for provisioning
// alone, is built on the same pool by src/provisioning/client.ts.
import { Pool, type QueryConfig, type QueryResult } from 'pg';
import { DescribedOnceQuery } from '../overrides/described-query';
import { openEmbeddedDatabase, type EmbeddedDatabase } from './embedded';
import { migrate, pendingMigrations } from './migrate';
import { connectionSurvives, setPoolBounds } from './sql';
import { PG_TYPES } from './types';

/** A constraint a write broke: a unique key, or a reference to a row that is not there. */
export type ConstraintViolation = 'unique' | 'foreign-key';

/**
 * Which constraint a failed write broke, whichever client ran it: the
 * services' statements fail with PostgreSQL's own SQLSTATE through pg (23505,
 * 23503), provisioning's Prisma client with its known-request codes (P2002,
 * P2003); undefined for anything else. Both carry `code`, so this needs
 * neither client loaded.
 */
export function constraintViolation(error: unknown): ConstraintViolation | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'P2002' || code === '23505') return 'unique';
  if (code === 'P2003' || code === '23503') return 'foreign-key';
  return undefined;
}

export interface DatabaseOptions {
  /** A PostgreSQL server; undefined opens the embedded database at `dataDir`. */
  url?: string | undefined;
  /** The embedded database's folder; null keeps it in memory. */
  dataDir?: string | null;
  poolMax?: number;
  /** Apply pending migrations now. */
  migrate?: boolean;
  /**
   * Bound on each statement (a server setting: PostgreSQL cancels it) and on
   * the wait for a pooled connection, in ms; 0 for none. Default 5000.
   */
  statementTimeoutMs?: number;
  /**
   * named (default): statements are prepared once per connection. unnamed:
   * prepared on each call, and the statement timeout is set inside each
   * transaction (SET LOCAL) instead of at connection start: both are what
   * PgBouncer in transaction mode requires (a server connection serves many
   * clients, so neither a prepared statement nor a session setting survives).
   */
  preparedStatements?: 'named' | 'unnamed';
  /**
   * Ask for each statement's row description once per connection (default
   * true: src/overrides/described-query.ts); false runs statements as pg does.
   */
  describeOnce?: boolean;
}

export interface Database {
  readonly pool: Pool;
  readonly embedded: boolean;
  /** The server's URL (undefined for the embedded database): for connections of their own, such as LISTEN. */
  readonly url: string | undefined;
  /** Names of the migrations applied by this open. */
  readonly applied: string[];
  /** SQL statements sent so far, whichever client sent them (Prisma, raw pg). */
  readonly statementCount: () => number;
  /** Requests for a connection that found the pool full and waited: how many, and the seconds they waited in all. */
  readonly poolWaits: () => { count: number; seconds: number };
  /** Whether the database answers and has every migration applied. */
  readiness(): Promise<{ ready: true } | { ready: false; reason: string; cause?: unknown }>;
  /** `release` runs when close() starts, before the pool ends: a client built on the pool (Prisma's) lets go of it. */
  onClose(release: () => Promise<void>): void;
  close(): Promise<void>;
}

/** TCP keepalive on the pools' sockets, first probe after 5 s idle (later probes: the OS's interval). */
export const KEEPALIVE = { keepAlive: true, keepAliveInitialDelayMillis: 5_000 } as const;

/**
 * The client's own bound on an answer, well past the server's
 * statement_timeout: a live server cancels first (57014, nothing written),
 * even when busy (a cancellation answered a second late, under load, must not
 * cost the connection); only a server that answers nothing at all (frozen, or
 * cut off), or a commit waiting for a synchronous standby, meets this one.
 */
export const clientBoundMs = (statementTimeoutMs: number): number => statementTimeoutMs + 5_000;

/**
 * pg's Pool, except that query() keeps a connection that answered with an
 * error, as withClient (src/db/sql.ts) does; pg-pool's own query() ends the
 * connection on any error. Prisma's adapter sends each statement outside a
 * transaction through query(), so every constraint error it met cost a new
 * connection, and on the embedded database, whose socket frees its one slot
 * a moment after a client leaves, the next statement raced that and failed
 * ("Connection terminated unexpectedly"; test/db/constraint-violations).
 * A callback-style call, or a Submittable's, is pg-pool's own.
 */
class ServicePool extends Pool {
  /** Connections asked for while none was idle and the pool was full (they waited in pg-pool's queue), and the seconds they waited in all. */
  readonly waits = { count: 0, seconds: 0 };
}
Object.defineProperty(ServicePool.prototype, 'connect', {
  configurable: true,
  writable: true,
  value: function connect(this: ServicePool, callback?: unknown): unknown {
    // A full pool with nothing idle: this request queues (saturation, for /metrics).
    if (callback !== undefined || this.idleCount > 0 || this.totalCount < this.options.max) {
      return (Pool.prototype.connect as (...args: unknown[]) => unknown).call(this, callback);
    }
    const started = performance.now();
    this.waits.count++;
    return ((Pool.prototype.connect as (...args: unknown[]) => unknown).call(this) as Promise<unknown>).finally(() => {
      this.waits.seconds += (performance.now() - started) / 1000;
    });
  },
});
Object.defineProperty(ServicePool.prototype, 'query', {
  configurable: true,
  writable: true,
  value: function query(this: Pool, config: string | QueryConfig, values?: unknown, callback?: unknown): unknown {
    const submittable = typeof config === 'object' && ('submit' in config || 'callback' in config);
    if (submittable || typeof values === 'function' || callback !== undefined)
      return (Pool.prototype.query as (...args: unknown[]) => unknown).call(this, config, values, callback);
    return keepingQuery(this, config, values as unknown[] | undefined);
  },
});

async function keepingQuery(pool: Pool, config: string | QueryConfig, values: unknown[] | undefined): Promise<QueryResult> {
  const client = await pool.connect();
  let result: QueryResult;
  try {
    result = await client.query(config as QueryConfig, values);
  } catch (error) {
    client.release(connectionSurvives(error) ? undefined : (error as Error));
    throw error;
  }
  client.release();
  return result;
}

export async function openDatabase(options: DatabaseOptions = {}): Promise<Database> {
  let embedded: EmbeddedDatabase | undefined;
  if (options.url === undefined) embedded = await openEmbeddedDatabase(options.dataDir ?? null);
  const timeoutMs = options.statementTimeoutMs ?? 5_000;
  const unnamed = options.preparedStatements === 'unnamed';
  const pool = createPool(options, embedded, timeoutMs, unnamed);
  const statementCount = countStatements(pool, unnamed, options.describeOnce ?? true);
  try {
    const applied = options.migrate === false ? [] : await migrate(pool);
    const releases: (() => Promise<void>)[] = [];
    return {
      pool,
      embedded: embedded !== undefined,
      url: embedded ? undefined : options.url,
      applied,
      statementCount,
      poolWaits: () => pool.waits,
      async readiness() {
        try {
          const pending = await pendingMigrations(pool);
          return pending.length === 0 ? { ready: true } : { ready: false, reason: `pending migrations: ${pending.join(', ')}` };
        } catch (error) {
          // The driver's message (host, port) is for the log, not for whoever can reach /readyz.
          return { ready: false, reason: 'database unreachable', cause: error };
        }
      },
      onClose(release) {
        releases.push(release);
      },
      async close() {
        await Promise.all(releases.map((release) => release()));
        await pool.end();
        await embedded?.close();
      },
    };
  } catch (error) {
    await pool.end().catch(() => {});
    await embedded?.close();
    throw error;
  }
}

/** The service's pool: bounds, keepalive and the statement timeout as the database allows them. */
function createPool(options: DatabaseOptions, embedded: EmbeddedDatabase | undefined, timeoutMs: number, unnamed: boolean): ServicePool {
  const pool = new ServicePool({
    connectionString: embedded?.url ?? options.url,
    types: PG_TYPES,
    // PGlite serves one connection; see openEmbeddedDatabase.
    max: embedded ? 1 : (options.poolMax ?? 10),
    // A slow database fails requests at the bound (503 DATABASE_TIMEOUT)
    // instead of letting them queue without end. PGlite runs one statement
    // at a time in this process and has no timer to cancel it with: there only
    // the wait for the connection is bounded.
    connectionTimeoutMillis: timeoutMs,
    // PGlite's socket serves one connection and frees its slot a moment after
    // a client leaves: closing the idle connection (pg's default, after 10 s)
    // would race the reconnect of the next request ("Too many connections").
    idleTimeoutMillis: embedded ? 0 : 10_000,
    // A startup parameter, which PgBouncer refuses: with unnamed statements
    // (the pooler setting) it is set per transaction instead (src/db/sql.ts).
    ...(embedded || timeoutMs === 0 || unnamed ? {} : { statement_timeout: timeoutMs }),
    // An idle connection whose server vanished without closing it (a host
    // cut off in a failover) is found by the OS's probes instead of by the
    // next request; the bound on a request is the client-side one below.
    ...(embedded ? {} : KEEPALIVE),
  });
  if (!embedded && timeoutMs > 0) {
    setPoolBounds(pool, {
      ...(unnamed ? { transactionTimeoutMs: timeoutMs } : {}),
      queryTimeoutMs: clientBoundMs(timeoutMs),
    });
  }
  // An idle client whose server went away emits 'error'; the pool drops it and
  // the next query reconnects. Without a listener it would crash the process.
  pool.on('error', () => {});
  return pool;
}

/**
 * Counts every statement at the one place all of them pass: each pooled
 * client's query(). Benchmarks and /metrics read it. With unnamed statements
 * (the pooler setting) it also sends each statement without its name;
 * with describeOnce false, the service's statements Describe every time.
 */
function countStatements(pool: ServicePool, unnamed: boolean, describeOnce: boolean): () => number {
  let statements = 0;
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      statements++;
      // Unnamed: the same statement text, sent without its name, so that no
      // server connection is asked to remember it.
      const [config] = args;
      if (!describeOnce && config instanceof DescribedOnceQuery) config.describeOnce = false;
      if (unnamed && config instanceof DescribedOnceQuery) {
        // The service's own statements: the same object, its name taken away.
        config.name = undefined;
        return query(...args);
      }
      if (unnamed && typeof config === 'object' && config !== null && 'name' in config) {
        const { name: _name, ...rest } = config as { name?: string };
        return query(rest, ...args.slice(1));
      }
      return query(...args);
    };
  });
  return () => statements;
}
