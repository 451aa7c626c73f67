// Services for black-box tests: the app from createApp() listening on a free
// loopback port, over the run's database (see jest.config.js) unless told
// otherwise. Tests start services one way, with these two:
//
// - useService(options): the usual one. One service for the file or the
//   describe block it is called in; it registers the beforeAll that starts it
//   and the afterAll that closes it, and its fields can be read once the
//   block's tests (or later beforeAll hooks) run. Its start(options) starts
//   another service over the same database, closed with it.
// - startService(options): a service inside one test or hook (several
//   instances with different options, one that a test closes itself); the
//   caller closes it.
//
// What varies is an option of both: `database` (the run's, an open one, one
// of the service's own, or 'isolated': a fresh one on a server, for digests of
// every table), `env` (options built from environment variables as src/main.ts
// builds them), `replicas` (reads on standbys), and startService's `twin` (a
// second service over a byte copy of a seeded database, for differential
// tests).
//
// Every service listens on a socket; `inject()` sends a request to the app
// without one (Fastify's light-my-request), for tests where the socket is not
// what is tested. Child processes of dist/main.js are started by the tests of
// the process itself (test/ops/lifecycle.test.ts).
import type { AddressInfo } from 'node:net';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { type App, type AppOptions, appOptionsFromConfig, createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { type Database, type DatabaseOptions, openDatabase } from '../../src/db';
import type { Provisioning } from '../../src/provisioning';
import { type ReplicaOptions, ReadReplicas } from '../../src/scale/replicas';
import { newSecretsKey } from '../../src/services/secrets';
import { isolatedDatabase, seededCopies } from './databases';

/** createApp's options but the database, which is chosen by `database`. */
export interface ServiceOptions extends Omit<Partial<AppOptions>, 'database'> {
  /**
   * An open database, which stays the caller's (close() leaves it open);
   * openDatabase()'s options for one of the service's own, closed with it; or
   * 'isolated': a database of its own that only this service writes (on a
   * PostgreSQL server a fresh one, created next to the run's and dropped on
   * close, so that a digest of every table sees only this service's writes;
   * on the embedded database, where every test file has its own, as the
   * default). Default: its own connection to the run's database
   * (openTestDatabase()).
   */
  database?: Database | DatabaseOptions | 'isolated';
  /**
   * createApp's options as src/main.ts builds them, from these environment
   * variables (appOptionsFromConfig(loadConfig(env))), with rate limits and
   * issue 31's budgets off unless `env` sets them; the other options given
   * override what they build.
   */
  env?: Record<string, string>;
  /**
   * Reads on standbys (src/scale/replicas.ts, the scale tests): a
   * ReadReplicas over these standbys, with the service's database as the
   * primary and its `redis`, started before the app and closed after it
   * (ReadingService.reads).
   */
  replicas?: Omit<ReplicaOptions, 'primary' | 'redis'>;
}

/** A service started with `replicas`. */
export interface ReadingService extends TestService {
  readonly reads: ReadReplicas;
}

/** startService's `twin`: a second service, over a copy of the first one's database made once `seed` ran on it. */
export interface TwinOptions<S> {
  /** The twin's options over the service's (e.g. every document on plain graphql-js). */
  options: Omit<ServiceOptions, 'database' | 'env'>;
  /** Run once, on an app with the service's options, before the database is copied: what it returns is valid on both sides. */
  seed: (provisioning: Provisioning) => Promise<S>;
}

/**
 * A service and its twin: two copies of one seeded database, byte for byte
 * (the embedded database's folder; a PostgreSQL database used as a template),
 * so tokens, keys, ids and hashes are the same on both sides; one secrets key
 * unless the options give one. close() closes both and drops the copies.
 */
export interface TwinService<S> extends TestService {
  /** The same service with the twin's options, over the other copy. */
  readonly twin: TestService;
  /** What the seed returned. */
  readonly seeded: S;
}

export interface TestService {
  readonly baseUrl: string;
  /** The port baseUrl names (for a proxy put in front of the service). */
  readonly port: number;
  readonly app: App;
  readonly db: Database;
  /** REST call; body objects are sent as JSON unless `form` is set. */
  rest(method: string, path: string, options?: RequestOptions): Promise<HttpResult>;
  /** A REST call that must not answer 5xx: `rest()` plus `expect(status).toBeLessThan(500)`. */
  call(method: string, path: string, options?: RequestOptions): Promise<HttpResult>;
  /** POST /graphql. */
  graphql(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<GraphQLResult>;
  /** A request handed to the app without a socket (`app.fastify.inject`). */
  inject(options: InjectOptions | string): Promise<LightMyRequestResponse>;
  /** Closes the app, then the database if it is the service's own; a second call waits for the first. */
  close(): Promise<void>;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  body?: unknown;
  /** Send the body form-encoded. */
  form?: boolean;
  /** Send this exact body text. */
  raw?: string;
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body (undefined when the body is not JSON). */
  body: any;
}

export interface GraphQLResult extends HttpResult {
  body: { data?: any; errors?: { message: string; extensions?: { code?: string; field?: string } }[] };
}

/** fetch, with the body read as text and parsed as JSON when it is JSON. */
export async function fetchResult(url: string, init: RequestInit): Promise<HttpResult> {
  const response = await fetch(url, init);
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

export const usingServer = (): boolean => Boolean(process.env.TEST_RUN_DATABASE_URL);

/** openDatabase()'s options for a connection of its own to the run's database, with `more` on top. */
export function testDatabaseOptions(more: Partial<DatabaseOptions> = {}): DatabaseOptions {
  const url = process.env.TEST_RUN_DATABASE_URL;
  return url ? { url, poolMax: 5, migrate: false, ...more } : { dataDir: null, ...more };
}

export async function openTestDatabase(): Promise<Database> {
  return openDatabase(testDatabaseOptions());
}

const isDatabase = (database: Database | DatabaseOptions): database is Database => 'pool' in database && 'readiness' in database;

/**
 * The budgets of issue 31 that a test meets only when it sets them: password
 * checks (right or wrong), application sessions opened and new phone numbers
 * a day. Tests open hundreds of sessions from 127.0.0.1 and upload books of
 * thousands of numbers, as they make requests without rate limits;
 * test/security/password-checks, application-sessions and address-books set
 * their own.
 */
const UNBOUNDED = 1_000_000_000;
export const TEST_SESSION_BUDGETS = {
  loginAttempts: { checksPerAccount: UNBOUNDED, checksPerAddress: UNBOUNDED },
  applicationSessions: { perApplication: UNBOUNDED, perAddress: UNBOUNDED },
  addressBooks: { discoveryPerDay: UNBOUNDED },
} as const;

/** What `env` is read over: TEST_SESSION_BUDGETS and no rate limits, as the defaults of startService are. */
const UNBOUNDED_ENV: Record<string, string> = {
  RATE_LIMIT_ENABLED: 'false',
  PASSWORD_CHECKS_PER_ACCOUNT: String(UNBOUNDED),
  PASSWORD_CHECKS_PER_ADDRESS: String(UNBOUNDED),
  APPLICATION_SESSIONS_PER_APPLICATION: String(UNBOUNDED),
  APPLICATION_SESSIONS_PER_ADDRESS: String(UNBOUNDED),
  CONTACT_DISCOVERY_PER_DAY: String(UNBOUNDED),
};

type AppPart = Omit<ServiceOptions, 'database' | 'env' | 'replicas'>;

/** createApp's options but the database: `env`'s, then the options given, over the defaults (no rate limits, no logger, TEST_SESSION_BUDGETS). */
function appOptionsOf(options: Omit<ServiceOptions, 'database' | 'replicas'>): AppPart {
  const { env, ...rest } = options;
  const given: AppPart = env ? { ...appOptionsFromConfig(loadConfig({ ...UNBOUNDED_ENV, ...env })), ...rest } : rest;
  return {
    ...given,
    sessions: {
      ...given.sessions,
      loginAttempts: { ...TEST_SESSION_BUDGETS.loginAttempts, ...given.sessions?.loginAttempts },
      applicationSessions: { ...TEST_SESSION_BUDGETS.applicationSessions, ...given.sessions?.applicationSessions },
    },
    addressBooks: { ...TEST_SESSION_BUDGETS.addressBooks, ...given.addressBooks },
  };
}

interface ServiceDatabase {
  db: Database;
  /** The caller's: left open on close. */
  given: boolean;
  /** Removes a database made for the service, once closed. */
  drop: () => Promise<void>;
}

async function databaseOf(database: ServiceOptions['database']): Promise<ServiceDatabase> {
  const none = async () => {};
  if (database === undefined) return { db: await openTestDatabase(), given: false, drop: none };
  if (database === 'isolated') {
    const own = await isolatedDatabase(testDatabaseOptions());
    try {
      return { db: await openDatabase(own.options), given: false, drop: own.drop };
    } catch (error) {
      await own.drop().catch(() => {});
      throw error;
    }
  }
  if (isDatabase(database)) return { db: database, given: true, drop: none };
  return { db: await openDatabase(database), given: false, drop: none };
}

/** startService's options with a twin: the database is made for the pair. */
export type TwinServiceOptions<S> = Omit<ServiceOptions, 'database'> & { twin: TwinOptions<S> };

/**
 * `options`: createApp's (see ServiceOptions for `database` and `env`), over
 * the defaults (no rate limits, no logger, TEST_SESSION_BUDGETS). With `twin`,
 * a TwinService: the service and its twin over two copies of one seeded
 * database.
 */
export async function startService(options: ServiceOptions & { replicas: ServiceOptions['replicas'] & object }): Promise<ReadingService>;
export async function startService(options?: ServiceOptions): Promise<TestService>;
export async function startService<S>(options: TwinServiceOptions<S>): Promise<TwinService<S>>;
export async function startService(options: ServiceOptions & { twin?: TwinOptions<unknown> } = {}): Promise<TestService> {
  const { twin, database, replicas, ...rest } = options;
  if (twin) return startTwins(rest, twin);
  const appOptions = appOptionsOf(rest);
  const own = await databaseOf(database);
  if (!replicas) return listen(appOptions, own);
  const reads = new ReadReplicas({ ...replicas, primary: own.db.pool, redis: appOptions.redis });
  const closeReads = async () => {
    await reads.close();
  };
  try {
    await reads.start();
  } catch (error) {
    await closeReads().catch(() => {});
    if (!own.given) await own.db.close().catch(() => {});
    await own.drop().catch(() => {});
    throw error;
  }
  const service = await listen({ ...appOptions, reads }, own, closeReads);
  const reading: ReadingService = { ...service, reads };
  return reading;
}

async function startTwins<S>(given: Omit<ServiceOptions, 'database'>, twin: TwinOptions<S>): Promise<TwinService<S>> {
  // One key seals the applications' auth secrets for the seeding app and both sides (without it each makes its own).
  const options = { secretsKey: newSecretsKey(), ...given };
  const appOptions = appOptionsOf(options);
  const copies = await seededCopies(appOptions, twin.seed);
  const own = async (database: DatabaseOptions): Promise<ServiceDatabase> => ({ db: await openDatabase(database), given: false, drop: async () => {} });
  let subject: TestService | undefined;
  let reference: TestService | undefined;
  try {
    subject = await listen(appOptions, await own(copies.a));
    reference = await listen(appOptionsOf({ ...options, ...twin.options }), await own(copies.b));
  } catch (error) {
    await subject?.close().catch(() => {});
    await copies.drop().catch(() => {});
    throw error;
  }
  const [a, b] = [subject, reference];
  let closed: Promise<void> | undefined;
  return {
    ...a,
    twin: b,
    seeded: copies.seeded,
    close() {
      closed ??= (async () => {
        try {
          await a.close();
          await b.close();
        } finally {
          await copies.drop();
        }
      })();
      return closed;
    },
  };
}

async function listen(appOptions: AppPart, { db, given, drop }: ServiceDatabase, afterApp = async () => {}): Promise<TestService> {
  let app: App | undefined;
  try {
    app = await createApp({ ...appOptions, database: db });
    await app.fastify.listen({ host: '127.0.0.1', port: 0 });
  } catch (error) {
    // Nothing left open by a start that failed (a port, a database of its own).
    await app?.close().catch(() => {});
    await afterApp().catch(() => {});
    if (!given) await db.close().catch(() => {});
    await drop().catch(() => {});
    throw error;
  }
  const { port } = app.fastify.server.address() as AddressInfo;
  // Over TLS the name the test certificate is for (test/support/tls.ts).
  const baseUrl = appOptions.https ? `https://localhost:${port}` : `http://127.0.0.1:${port}`;

  async function request(method: string, path: string, options: RequestOptions = {}): Promise<HttpResult> {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | undefined = options.raw;
    if (options.body !== undefined) {
      if (options.form) {
        body = new URLSearchParams(options.body as Record<string, string>).toString();
        headers['content-type'] ??= 'application/x-www-form-urlencoded';
      } else {
        body = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
    }
    return fetchResult(`${baseUrl}${path}`, { method, headers, body });
  }

  async function call(method: string, path: string, options?: RequestOptions): Promise<HttpResult> {
    const res = await request(method, path, options);
    expect(res.status).toBeLessThan(500);
    return res;
  }

  let closed: Promise<void> | undefined;
  return {
    baseUrl,
    port,
    app,
    db,
    rest: request,
    call,
    graphql: (query, variables, headers) => request('POST', '/graphql', { headers, body: { query, variables } }),
    inject: (injected) => app.fastify.inject(injected),
    close() {
      closed ??= (async () => {
        try {
          await app.close();
        } finally {
          try {
            await afterApp().finally(async () => {
              if (!given) await db.close();
            });
          } finally {
            await drop();
          }
        }
      })();
      return closed;
    },
  };
}

export interface UseServiceHooks {
  /** The start's bound, ms (default: the test timeout). */
  timeoutMs?: number;
  /** Start nothing (the block's tests skip in this run, e.g. for want of PostgreSQL binaries). */
  skip?: boolean;
  /**
   * Close without failing the block: for a database a test took down or
   * away, which cannot take the session touches close() writes.
   */
  ignoreCloseErrors?: boolean;
}

export interface UsedService extends TestService {
  /** Another service over this one's database, with these options; closed before it after the block's tests (or by its own close()). */
  start(options?: Omit<ServiceOptions, 'database'>): Promise<TestService>;
}

/**
 * A service for the file or describe block this is called in: registers the
 * beforeAll that starts it and the afterAll that closes it (with the services
 * its start() made), and returns a handle whose fields are the started
 * service's. `options` may be a function, called in the beforeAll, for
 * options that exist only once earlier hooks ran (a database instance,
 * another service's database). Jest runs a block's afterAll hooks in the order
 * they were declared: one that must run before the service closes (restarting
 * a stopped database) is declared before useService, one that must run after
 * it (destroying the database) after.
 */
export function useService(options: ServiceOptions | (() => ServiceOptions | Promise<ServiceOptions>) = {}, hooks: UseServiceHooks = {}): UsedService {
  let service: TestService | undefined;
  const others: TestService[] = [];
  const started = (): TestService => {
    if (!service) throw new Error('useService: the service is not started yet (read it in a test, or in a hook declared after useService)');
    return service;
  };
  beforeAll(async () => {
    if (hooks.skip) return;
    service = await startService(typeof options === 'function' ? await options() : options);
  }, hooks.timeoutMs);
  afterAll(async () => {
    const closing = async (one: TestService) => {
      await (hooks.ignoreCloseErrors ? one.close().catch(() => {}) : one.close());
    };
    try {
      for (const other of others.splice(0)) await closing(other);
    } finally {
      if (service) await closing(service);
    }
  });
  return {
    get baseUrl() {
      return started().baseUrl;
    },
    get port() {
      return started().port;
    },
    get app() {
      return started().app;
    },
    get db() {
      return started().db;
    },
    rest: (...args) => started().rest(...args),
    call: (...args) => started().call(...args),
    graphql: (...args) => started().graphql(...args),
    inject: (injected) => started().inject(injected),
    close: () => started().close(),
    async start(more = {}) {
      const other = await startService({ ...more, database: started().db });
      others.push(other);
      return other;
    },
  };
}
