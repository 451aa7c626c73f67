// Shared pieces of the property-based fuzz tests (test/fuzz/): a service over
// a database of its own, raw HTTP requests (node:http, so header values and
// paths go out byte for byte as generated), the documented statuses and error
// shapes of each route family, a stack-trace detector, outcome counters, and
// the fast-check run settings (seed from FUZZ_SEED, printed on failure).
import { randomBytes } from 'node:crypto';
import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { Client, Pool } from 'pg';
import type { AppOptions } from '../../src/app';
import { migrate } from '../../src/db/migrate';
import { MESSAGES } from '../../src/errors';
import { type Digest, diffDigests, digest } from './digest';
import { LONG } from './figures';
import { USER_FIELDS } from './records';
import type { Tenant } from './seed';
import { startService, type TestService, usingServer } from './service';

// ---------------------------------------------------------------------------
// A service whose database holds only this file's data.

/**
 * startService() over a database of its own. On the embedded database every
 * test file already has its own; on a PostgreSQL server the run's database is
 * shared by the test files running in parallel, whose writes would show in a
 * digest of every table. So there a fresh database is created (and dropped
 * on close) next to the run's one, so that "the digest did not change" means
 * "this request wrote nothing".
 */
export async function startIsolatedService(options: Omit<Partial<AppOptions>, 'database'> = {}): Promise<TestService> {
  const runUrl = process.env.TEST_RUN_DATABASE_URL;
  if (!usingServer() || !runUrl) return startService(options);
  const url = new URL(runUrl);
  const name = `${url.pathname.slice(1)}_fz${randomBytes(4).toString('hex')}`.slice(0, 63);
  const admin = new Client({ connectionString: runUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  url.pathname = `/${name}`;
  const pool = new Pool({ connectionString: url.toString(), max: 1 });
  try {
    await migrate(pool);
  } finally {
    await pool.end();
  }
  // startService reads the run's database from the environment: point it at
  // this one for the call only.
  process.env.TEST_RUN_DATABASE_URL = url.toString();
  let service: TestService;
  try {
    service = await startService(options);
  } finally {
    process.env.TEST_RUN_DATABASE_URL = runUrl;
  }
  return {
    ...service,
    async close() {
      await service.close();
      const dropper = new Client({ connectionString: runUrl });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

// ---------------------------------------------------------------------------
// Raw HTTP.

export type HeaderValue = string | string[];

export interface RawRequest {
  method: string;
  /** Sent as is in the request line (must be 0x21–0xff characters: node:http refuses others). */
  path: string;
  headers?: Record<string, HeaderValue>;
  body?: Buffer | string;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body; undefined when the body is not JSON (or empty). */
  json: unknown;
  ms: number;
}

/**
 * One request on a connection of its own (agent: false, Connection: close):
 * a response that makes the server drop the connection cannot spill into the
 * next request. Header values go out as latin1 bytes, as node:http writes
 * them; a body always gets its Content-Length (node sends a GET or DELETE
 * body unframed otherwise, which the server would read as a second request).
 */
export function send(port: number, req: RawRequest, timeoutMs = 20_000): Promise<RawResponse> {
  const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
  const headers: Record<string, HeaderValue> = { ...req.headers };
  const names = new Set(Object.keys(headers).map((n) => n.toLowerCase()));
  if (body !== undefined && !names.has('content-length') && !names.has('transfer-encoding')) {
    headers['content-length'] = String(body.length);
  }
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent: false, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms: performance.now() - started });
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', reject);
    // The server may answer (413) and close before the whole body is written.
    request.on('socket', (socket) => socket.on('error', () => {}));
    request.end(body);
  });
}

/** GET /healthz answers 200 {"status":"ok"}: the process survived. */
export async function expectHealthy(port: number): Promise<void> {
  const res = await send(port, { method: 'GET', path: '/healthz' }, 5_000);
  if (res.status !== 200 || JSON.stringify(res.json) !== '{"status":"ok"}') {
    throw new Error(`/healthz answered ${res.status} ${res.text.slice(0, 200)}`);
  }
}

/** Node's HTTP client refuses header values outside tab, 0x20–0x7e and 0x80–0xff: send other text as its UTF-8 bytes read as latin1. */
export function latin1Header(value: string): string {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(value) ? value : Buffer.from(value, 'utf8').toString('latin1').replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

// ---------------------------------------------------------------------------
// What a response may be.

/** The REST statuses of README's Errors table (rate limits are off in these tests: no 429; no database fault: no 503). */
export const REST_STATUSES = [200, 400, 401, 403, 404, 413, 415, 422] as const;

/**
 * /graphql: 200 (results and operation errors), 400 (malformed GraphQL
 * requests, as Apollo Server answers them), 404 (a method /graphql does not
 * serve: the REST "unknown path or method" row), 413 and 415 (bodies).
 */
export const GRAPHQL_STATUSES = [200, 400, 404, 413, 415] as const;

/**
 * GraphQL `extensions.code`s a client can cause: the service's (README's
 * table, src/errors.ts) and those Apollo Server gives malformed requests
 * (README: "malformed GraphQL requests answer 400 as Apollo Server does").
 * INTERNAL_SERVER_ERROR is left out on purpose: README reserves it for bugs.
 */
export const GRAPHQL_CODES = new Set([
  'UNAUTHENTICATED',
  'BAD_REQUEST',
  'FORBIDDEN',
  'WRONG_PERMISSIONS',
  'BAD_USER_INPUT',
  'NOT_FOUND',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

/** Messages each REST error status may carry (README's Errors table); 422 messages name the input and vary. */
const REST_MESSAGES: Record<number, (message: string) => boolean> = {
  // "Malformed request path" (an invalid percent-escape) and "Malformed HTTP
  // request" (bytes Node's parser refuses) are src/app.ts's; README's table has
  // no row of their own, its Decisions say 400 is a malformed request.
  400: (m) =>
    m === MESSAGES.bothCredentials ||
    m === MESSAGES.onBehalfOfWithoutApiKey ||
    m.startsWith(MESSAGES.malformedBody) ||
    m === 'Malformed request path' ||
    m === 'Malformed HTTP request',
  401: (m) => ([MESSAGES.noCredentials, MESSAGES.sessionMissing, MESSAGES.malformedAuthorization, MESSAGES.unknownApiKey] as string[]).includes(m),
  403: (m) => ([MESSAGES.onBehalfOfUnknown, MESSAGES.needUser, MESSAGES.wrongPermissions] as string[]).includes(m),
  404: (m) => m.startsWith('No route for ') || m === MESSAGES.userNotFound,
  413: (m) => m === 'Request body too large',
  415: (m) => m.startsWith('Unsupported Content-Type: '),
  422: (m) => m.length > 0,
};

/**
 * Text that only a leaked stack trace or source location would put in a body.
 * Generated inputs never contain these (they are echoed by some messages).
 */
const STACK_MARKERS = [/\n\s+at /, / {4}at \S/, /node_modules/, /\.ts:\d/, /\.js:\d+:\d+/, /\bat (?:async )?[\w.<>]+ \(/];

export function stackTraceIn(text: string): string | undefined {
  return STACK_MARKERS.find((marker) => marker.test(text))?.source;
}

/** An inconsistency found in a response: the property fails with it. */
export class Violation extends Error {
  override name = 'Violation';
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Violation(message);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const keysAre = (value: Record<string, unknown>, keys: readonly string[]): boolean =>
  JSON.stringify(Object.keys(value).sort()) === JSON.stringify([...keys].sort());

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string');

/** `{"errors":["<message>", …]}`: the delete and address-book paths (and unknown paths). */
export function checkListError(status: number, body: unknown): void {
  check(isPlainObject(body) && keysAre(body, ['errors']) && isStringList(body.errors), `expected {"errors":[string]}, got ${excerpt(body)}`);
  for (const message of body.errors as string[]) {
    check(REST_MESSAGES[status]?.(message), `message ${JSON.stringify(message)} is not one README documents for ${status}`);
  }
}

/**
 * The user lookup: `{"errors":{"base":[…]}}` for credential, permission and
 * malformed-request failures (400, 401, 403), `{"errors":{"<field>":[…]}}` for
 * invalid input (422), `{"code","message"}` otherwise (404, 413, 415).
 */
export function checkObjectError(status: number, body: unknown): void {
  check(isPlainObject(body), `expected a JSON object, got ${excerpt(body)}`);
  if (status === 400 || status === 401 || status === 403 || status === 422) {
    check(keysAre(body, ['errors']) && isPlainObject(body.errors), `expected {"errors":{field:[string]}}, got ${excerpt(body)}`);
    const fields = Object.entries(body.errors as Record<string, unknown>);
    check(fields.length > 0 && fields.every(([, v]) => isStringList(v)), `expected {"errors":{field:[string]}}, got ${excerpt(body)}`);
    if (status !== 422) check(keysAre(body.errors as Record<string, unknown>, ['base']), `a ${status} names "base", got ${excerpt(body)}`);
    for (const [, messages] of fields) {
      for (const message of messages as string[]) {
        check(REST_MESSAGES[status]?.(message), `message ${JSON.stringify(message)} is not one README documents for ${status}`);
      }
    }
  } else {
    check(
      keysAre(body, ['code', 'message']) && typeof body.code === 'string' && typeof body.message === 'string',
      `expected {"code","message"}, got ${excerpt(body)}`,
    );
    const expectedCode = { 404: 'NOT_FOUND', 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE' }[status];
    check(body.code === expectedCode, `a ${status} has code ${expectedCode}, got ${excerpt(body)}`);
    check(REST_MESSAGES[status]?.(body.message as string), `message ${JSON.stringify(body.message)} is not one README documents for ${status}`);
  }
}

/** `{"errors":[{message, extensions:{code}}, …]}` and possibly `data`: /graphql's errors. */
export function checkGraphQLErrors(body: unknown, allowData: boolean): void {
  check(isPlainObject(body), `expected a GraphQL response object, got ${excerpt(body)}`);
  const allowed = allowData ? ['errors', 'data'] : ['errors'];
  check(Object.keys(body).every((k) => allowed.includes(k)), `unexpected keys in ${excerpt(body)}`);
  check(Array.isArray(body.errors) && body.errors.length > 0, `expected a non-empty errors list, got ${excerpt(body)}`);
  for (const error of body.errors as unknown[]) {
    check(isPlainObject(error) && typeof error.message === 'string' && error.message.length > 0, `error without a message: ${excerpt(error)}`);
    check(isPlainObject(error.extensions) && typeof error.extensions.code === 'string', `error without extensions.code: ${excerpt(error)}`);
    const code = error.extensions.code as string;
    check(GRAPHQL_CODES.has(code), `extensions.code ${code} is not one a client may cause (${error.message})`);
  }
}

/** The spec's full user record: exactly its fields, with their types. */
export function checkUserRecord(user: unknown): void {
  check(isPlainObject(user) && keysAre(user, USER_FIELDS), `not a full user record: ${excerpt(user)}`);
  check(Number.isInteger(user.id), `user.id is not an integer: ${excerpt(user)}`);
  check(typeof user.login === 'string', `user.login is not a string: ${excerpt(user)}`);
  for (const field of ['created_at', 'updated_at']) {
    check(typeof user[field] === 'string' && !Number.isNaN(Date.parse(user[field] as string)), `user.${field} is not a timestamp`);
  }
  for (const field of ['age_over16', 'allow_statistics_analysis', 'allow_sales_activities']) {
    check(typeof user[field] === 'boolean', `user.${field} is not a boolean`);
  }
  check(typeof user.parents_contacts === 'string' && typeof user.user_tags === 'string', 'parents_contacts and user_tags are strings');
}

export function checkCompactUser(user: unknown): void {
  check(
    isPlainObject(user) && keysAre(user, ['id', 'phone']) && Number.isInteger(user.id) && (typeof user.phone === 'string' || user.phone === null),
    `not a compact user {id, phone}: ${excerpt(user)}`,
  );
}

export function excerpt(value: unknown, max = 300): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

// ---------------------------------------------------------------------------
// The database did not change.

/** Digests the database before and after requests, one digest per request. */
export class DigestTracker {
  private last: Digest | undefined;
  compared = 0;

  constructor(private readonly pool: Pool) {}

  async baseline(): Promise<Digest> {
    this.last = await digest(this.pool);
    return this.last;
  }

  /** Takes a digest and returns what changed since the previous one; the new one becomes the baseline. */
  async advance(): Promise<{ before: Digest; after: Digest; diff: string }> {
    const before = this.last ?? (await digest(this.pool));
    const after = await digest(this.pool);
    this.last = after;
    this.compared++;
    return { before, after, diff: diffDigests(before, after) };
  }
}

// ---------------------------------------------------------------------------
// Counting and running.

export class Outcomes {
  runs = 0;
  readonly byStatus: Record<string, number> = {};
  readonly byKind: Record<string, Record<string, number>> = {};
  private readonly durations: number[] = [];

  record(kind: string, status: number, ms: number): void {
    this.runs++;
    this.byStatus[status] = (this.byStatus[status] ?? 0) + 1;
    const perKind = (this.byKind[kind] ??= {});
    perKind[status] = (perKind[status] ?? 0) + 1;
    this.durations.push(ms);
  }

  durationsMs(): { p50: number; p99: number; max: number } {
    const sorted = [...this.durations].sort((a, b) => a - b);
    const at = (q: number) => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 10) / 10;
    return { p50: at(0.5), p99: at(0.99), max: Math.round((sorted[sorted.length - 1] ?? 0) * 10) / 10 };
  }
}

/** A response slower than this is a failure (generous: requests take milliseconds; a hang or a pg_sleep would show). */
export const MAX_RESPONSE_MS = 5_000;

/**
 * fast-check settings: `runs` by default, `runs * longFactor` with
 * RELIABILITY_LONG=1. The seed is random per run (FUZZ_SEED replays one,
 * FUZZ_PATH a shrunk counterexample); fast-check prints both on failure.
 */
export interface FuzzParameters {
  seed: number;
  numRuns: number;
  path?: string;
  maxSkipsPerRun: number;
}

export function fuzzParameters(runs: number, longFactor = 10): FuzzParameters {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
  return {
    seed,
    numRuns: LONG ? runs * longFactor : runs,
    ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
    // The service is real and stateful: shrinking replays requests, keep it bounded.
    maxSkipsPerRun: 100,
  };
}

/** A string `times` copies of `unit` long, kept small in fast-check's counterexample reports. */
export interface Repeat {
  repeat: string;
  times: number;
}

export type Text = string | Repeat;

export const materialize = (text: Text): string => (typeof text === 'string' ? text : text.repeat.repeat(text.times));

export const textLength = (text: Text): number => (typeof text === 'string' ? text.length : text.repeat.length * text.times);

// ---------------------------------------------------------------------------
// Credentials: valid ones of two tenants (so requests reach validation and
// the operations, not only authentication), and every kind of wrong one.

export interface Credentials {
  label: string;
  /** Index of the tenant whose credential decides who the caller is (undefined: none or invalid). */
  tenant?: 0 | 1;
  headers: [string, HeaderValue | Repeat][];
}

export function credentialArbitraries(ts: [Tenant, Tenant]): { credentials: fc.Arbitrary<Credentials>; randomValue: fc.Arbitrary<string | Repeat> } {
  const [a, b] = ts;
  const userIds = ts.flatMap((t) => [t.owner.id, t.member.id, t.outsider.id]);
  const headerCase = (name: string) => fc.constantFrom(name, name.toLowerCase(), name.toUpperCase());
  const valid: Credentials[] = ts.flatMap((t, i) => {
    const tenant = i as 0 | 1;
    return [
      { label: 'owner token', tenant, headers: [['SVC-Token', t.ownerToken]] },
      { label: 'member token', tenant, headers: [['SVC-Token', t.memberToken]] },
      { label: 'outsider token', tenant, headers: [['SVC-Token', t.outsiderToken]] },
      { label: 'application token', tenant, headers: [['SVC-Token', t.appToken]] },
      { label: 'api key', tenant, headers: [['Authorization', `ApiKey ${t.apiKey}`]] },
      // HTTP drops whitespace around a header value: still the key.
      { label: 'api key with a trailing space', tenant, headers: [['Authorization', `ApiKey ${t.apiKey} `]] },
      { label: 'api key on behalf of owner', tenant, headers: [['Authorization', `ApiKey ${t.apiKey}`], ['On-Behalf-Of', String(t.owner.id)]] },
      { label: 'api key on behalf of member', tenant, headers: [['Authorization', `ApiKey ${t.apiKey}`], ['On-Behalf-Of', String(t.member.id)]] },
    ] satisfies Credentials[];
  });
  const randomValue: fc.Arbitrary<string | Repeat> = fc.oneof(
    { weight: 4, arbitrary: arb.anyString(80).map(latin1Header) },
    { weight: 1, arbitrary: fc.record({ repeat: fc.constantFrom('a', 'é', 'A1_-', ' '), times: fc.integer({ min: 1_000, max: 60_000 }) }) },
  );
  const authorization: fc.Arbitrary<string | Repeat> = fc.oneof(
    randomValue,
    fc.constantFrom(
      'ApiKey', 'ApiKey ', 'apikey x', 'APIKEY x', 'Bearer x', 'Basic dXNlcjpwYXNz', 'ApiKey  x', ' ApiKey x', 'ApiKey x y',
      `ApiKey ${a.apiKey}x`, `apikey ${a.apiKey}`, `Bearer ${a.apiKey}`, `ApiKey ${'k'.repeat(513)}`, `ApiKey ${b.ownerToken}`,
    ),
    fc.string({ maxLength: 40 }).map((s) => `ApiKey ${latin1Header(s)}`),
  );
  const onBehalfOf: fc.Arbitrary<string | Repeat> = fc.oneof(
    fc.constantFrom('0', '-1', '1.0', '01', '2147483647', '2147483648', '99999999999', ' 1', '1 ', '0x1', '1e2', 'abc', ''),
    fc.constantFrom(...userIds.map(String)),
    randomValue,
  );
  const credentials: fc.Arbitrary<Credentials> = fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...valid) },
    { weight: 1, arbitrary: fc.constant<Credentials>({ label: 'none', headers: [] }) },
    { weight: 2, arbitrary: fc.tuple(headerCase('SVC-Token'), randomValue).map(([n, v]): Credentials => ({ label: 'random token', headers: [[n, v]] })) },
    { weight: 2, arbitrary: fc.tuple(headerCase('Authorization'), authorization).map(([n, v]): Credentials => ({ label: 'odd authorization', headers: [[n, v]] })) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(...valid.filter((c) => c.label.endsWith('token'))), authorization)
        .map(([c, v]): Credentials => ({ label: 'both', headers: [...c.headers, ['Authorization', v]] })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(a, b), onBehalfOf)
        .map(([t, v]): Credentials => ({ label: 'token with on-behalf-of', headers: [['SVC-Token', t.ownerToken], ['On-Behalf-Of', v]] })),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(0, 1), onBehalfOf).map(([i, v]): Credentials => ({
        label: 'api key with odd on-behalf-of',
        // Valid user ids of the same tenant make this a valid caller of that tenant; of the other, a 403.
        tenant: i as 0 | 1,
        headers: [['Authorization', `ApiKey ${ts[i]!.apiKey}`], ['On-Behalf-Of', v]],
      })),
    },
    {
      weight: 1,
      // A header line sent twice: Node joins the values ("a, b"), which names no session.
      arbitrary: fc.tuple(fc.constantFrom(0, 1), fc.boolean()).map(([i, validFirst]): Credentials => ({
        label: 'token sent twice',
        headers: [['SVC-Token', validFirst ? [ts[i]!.memberToken, 'nonsense'] : ['nonsense', ts[i]!.memberToken]]],
      })),
    },
  );

  return { credentials, randomValue };
}

/** Request line and headers stay under the service's 64 KiB (README, Limits: over it is 431, tested on its own). */
const HEADER_BUDGET = 62 * 1024;

/**
 * The headers to send: the first value of each name (case-insensitively, so a
 * random extra header never replaces a credential), with the largest
 * repeated values trimmed until the request line and headers fit the budget.
 * The descriptor's own values are not touched (fast-check replays them).
 */
export function fitHeaders(pairs: readonly (readonly [string, HeaderValue | Repeat])[], requestLineLength: number): Record<string, HeaderValue> {
  const copy = pairs.map(([k, v]): [string, HeaderValue | Repeat] => [k, typeof v === 'object' && !Array.isArray(v) ? { ...v } : v]);
  const size = () => requestLineLength + copy.reduce((n, [k, v]) => n + k.length + 4 + (Array.isArray(v) ? v.join('').length : textLength(v as Text)), 200);
  for (let over = size() - HEADER_BUDGET; over > 0; over = size() - HEADER_BUDGET) {
    const repeated = copy.map(([, v]) => v).filter((v): v is Repeat => typeof v === 'object' && !Array.isArray(v) && v.times > 0);
    if (repeated.length === 0) break;
    const largest = repeated.reduce((x, y) => (textLength(x) >= textLength(y) ? x : y));
    largest.times = Math.max(0, largest.times - Math.ceil(over / largest.repeat.length));
  }
  const headers: Record<string, HeaderValue> = {};
  for (const [name, value] of copy) {
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name;
    headers[key] ??= Array.isArray(value) ? value : materialize(value as Text);
  }
  return headers;
}

/** fast-check arbitraries reused by both surfaces. */
export const arb = {
  /** Strings of any code point (no lone surrogates) or of latin1/control characters, or printable ASCII. */
  anyString: (maxLength = 40): fc.Arbitrary<string> =>
    fc.oneof(
      fc.string({ maxLength }),
      fc.string({ unit: 'binary', maxLength }),
      fc.string({ unit: 'binary-ascii', maxLength }),
      fc.string({ unit: 'grapheme', maxLength }),
    ),
  /** Values a JSON body may hold where the service expects a 0/1 flag, a string or a list. */
  jsonJunk: (): fc.Arbitrary<unknown> =>
    fc.oneof(
      fc.constantFrom(0, 1, -1, 2, 1.5, '0', '1', '', 'true', true, false, null, [], {}, [1], { a: 1 }, '1 ', ' 1', '01', 1e308, -0),
      fc.jsonValue({ maxDepth: 3 }),
      fc.string({ unit: 'binary', maxLength: 20 }),
    ),
};
