// A real service for black-box tests: the app from createApp() listening on a
// free loopback port, over the run's database (see jest.config.ts).
import type { AddressInfo } from 'node:net';
import { type App, type AppOptions, createApp } from '../../src/app';
import { type Database, openDatabase } from '../../src/db';

export interface TestService {
  readonly baseUrl: string;
  readonly app: App;
  readonly db: Database;
  /** REST call; body objects are sent as JSON unless `form` is set. */
  rest(method: string, path: string, options?: RequestOptions): Promise<HttpResult>;
  /** A REST call that must not answer 5xx: `rest()` plus `expect(status).toBeLessThan(500)`. */
  call(method: string, path: string, options?: RequestOptions): Promise<HttpResult>;
  /** POST /graphql. */
  graphql(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<GraphQLResult>;
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

export async function openTestDatabase(): Promise<Database> {
  const url = process.env.TEST_RUN_DATABASE_URL;
  return url ? openDatabase({ url, poolMax: 5, migrate: false }) : openDatabase({ dataDir: null });
}

/** `options`: createApp's, over the defaults (no rate limits, no logger). */
export async function startService(options: Omit<Partial<AppOptions>, 'database'> = {}): Promise<TestService> {
  const db = await openTestDatabase();
  const app = await createApp({ ...options, database: db });
  await app.fastify.listen({ host: '127.0.0.1', port: 0 });
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

  return {
    baseUrl,
    app,
    db,
    rest: request,
    call,
    graphql: (query, variables, headers) => request('POST', '/graphql', { headers, body: { query, variables } }),
    async close() {
      await app.close();
      await db.close();
    },
  };
}
