// Services for black-box tests: the app from createApp() listening on a free
// loopback port, over the run's database (see jest.config.js) unless told
// otherwise. Which helper:
//
// - useService(options): the usual one. One service for the file or the
//   describe block it is called in; it registers the beforeAll that starts it
//   and the afterAll that closes it, and its fields can be read once the
//   block's tests (or later beforeAll hooks) run.
// - startService(options): a service inside one test or hook (several
//   instances with different options, one that a test closes itself); the
//   caller closes it.
// - service.start(options): another service over the database of one from
//   useService, with other options; closed with it (before it) after the block.
//
// Every service listens on a socket; `inject()` sends a request to the app
// without one (Fastify's light-my-request), for tests where the socket is not
// what is tested. Elsewhere: configured.ts (apps built from environment
// variables, as main builds them), twins.ts (two services over copies of one
// database), fuzz.ts's startIsolatedService (a database of its own on a
// server), and child processes of dist/main.js in the tests of the process
// itself (test/ops/lifecycle.test.ts).
import type { AddressInfo } from 'node:net';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { type App, type AppOptions, createApp } from '../../src/app';
import { type Database, type DatabaseOptions, openDatabase } from '../../src/db';

/** createApp's options but the database, which is chosen by `database`. */
export interface ServiceOptions extends Omit<Partial<AppOptions>, 'database'> {
  /**
   * An open database, which stays the caller's (close() leaves it open), or
   * openDatabase()'s options for one of the service's own, closed with it.
   * Default: its own connection to the run's database (openTestDatabase()).
   */
  database?: Database | DatabaseOptions;
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

/** `options`: createApp's, over the defaults (no rate limits, no logger, TEST_SESSION_BUDGETS), and the database. */
export async function startService(options: ServiceOptions = {}): Promise<TestService> {
  const { database, ...given_ } = options;
  const appOptions: typeof given_ = {
    ...given_,
    sessions: {
      ...given_.sessions,
      loginAttempts: { ...TEST_SESSION_BUDGETS.loginAttempts, ...given_.sessions?.loginAttempts },
      applicationSessions: { ...TEST_SESSION_BUDGETS.applicationSessions, ...given_.sessions?.applicationSessions },
    },
    addressBooks: { ...TEST_SESSION_BUDGETS.addressBooks, ...given_.addressBooks },
  };
  const given = database !== undefined && isDatabase(database);
  const db = given ? database : database ? await openDatabase(database) : await openTestDatabase();
  let app: App | undefined;
  try {
    app = await createApp({ ...appOptions, database: db });
    await app.fastify.listen({ host: '127.0.0.1', port: 0 });
  } catch (error) {
    // Nothing left open by a start that failed (a port, a database of its own).
    await app?.close().catch(() => {});
    if (!given) await db.close().catch(() => {});
    throw error;
  }
  const { port } = app.fastify.server.address() as AddressInfo;
  // Over TLS the name the test certificate is for (test/support/tls.ts).
  const baseUrl = options.https ? `https://localhost:${port}` : `http://127.0.0.1:${port}`;

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
          if (!given) await db.close();
        }
      })();
      return closed;
    },
  };
}

export interface UseServiceHooks {
  /** How the service starts (default startService; fuzz.ts's startIsolatedService for a database of its own on a server). */
  start?: (options: ServiceOptions) => Promise<TestService>;
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
    service = await (hooks.start ?? startService)(typeof options === 'function' ? await options() : options);
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
