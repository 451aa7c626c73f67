// Shared pieces of the property-based fuzz tests (test/fuzz/): a service over
// a database of its own, raw HTTP requests (node:http, so header values and
// paths go out byte for byte as generated), the documented statuses and error
// shapes of each route family, a stack-trace detector, outcome counters, and
// the fast-check run settings (seed from FUZZ_SEED, printed on failure).
import { createHash, randomBytes } from 'node:crypto';
import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { Client, Pool } from 'pg';
import { migrate } from '../../src/db/migrate';
import { MESSAGES } from '../../src/errors';
import { type Digest, diffDigests, digest } from './digest';
import { LONG } from './figures';
import { USER_FIELDS } from './records';
import type { Tenant } from './seed';
import { type ServiceOptions, startService, type TestService, usingServer } from './service';
import { restForm, signedSessionRequest } from './sessions';

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
export async function startIsolatedService(options: Omit<ServiceOptions, 'database'> = {}): Promise<TestService> {
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
  // As openTestDatabase() opens the run's database.
  const service = await startService({ ...options, database: { url: url.toString(), poolMax: 5, migrate: false } });
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
    const request = httpRequest({ host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent: false, timeout: timeoutMs }, (res) => {
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
    });
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
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(value)
    ? value
    : Buffer.from(value, 'utf8')
        .toString('latin1')
        .replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

// ---------------------------------------------------------------------------
// What a response may be.

/**
 * The REST statuses of docs/errors.md's Errors table (rate limits are off in these
 * tests: no 429; no database fault: no 503). POST /session.json also answers
 * 201, and it and POST /login.json 429 past the failed-password budgets
 * (SESSION_STATUSES).
 */
export const REST_STATUSES = [200, 400, 401, 403, 404, 413, 415, 422] as const;

/** What POST /session.json and POST /login.json may answer besides REST_STATUSES. */
export const SESSION_STATUSES = [201, 429] as const;

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
  // createSession's refusals (docs/graphql.md, GraphQL reference), and the failed-password budgets.
  'UNKNOWN_APPLICATION',
  'INVALID_SIGNATURE',
  'TIMESTAMP_OUT_OF_WINDOW',
  'NONCE_REUSED',
  'TOO_MANY_REQUESTS',
  // Root fields over the document's cost limits together (src/graphql/cost.ts).
  'COST_LIMIT_EXCEEDED',
]);

/** Messages each REST error status may carry (docs/errors.md's Errors table); 422 messages name the input and vary. */
const REST_MESSAGES: Record<number, (message: string) => boolean> = {
  // "Malformed request path" (an invalid percent-escape) and "Malformed HTTP
  // request" (bytes Node's parser refuses) are src/app.ts's; README's table has
  // no row of their own, its Decisions say 400 is a malformed request.
  // "Malformed query" is GET /address_book.json's: a query in the JSON-object
  // form QuickBlox's JavaScript SDK sends that is not a JSON object.
  400: (m) =>
    m === MESSAGES.bothCredentials ||
    m === MESSAGES.severalTokens ||
    m === MESSAGES.onBehalfOfWithoutApiKey ||
    m.startsWith(MESSAGES.malformedBody) ||
    m.startsWith('Malformed query: ') ||
    m === 'Malformed request path' ||
    m === 'Malformed HTTP request',
  401: (m) =>
    ([MESSAGES.noCredentials, MESSAGES.sessionMissing, MESSAGES.malformedAuthorization, MESSAGES.unknownApiKey, MESSAGES.badLogin] as string[]).includes(m),
  403: (m) => ([MESSAGES.onBehalfOfUnknown, MESSAGES.needUser, MESSAGES.wrongPermissions, MESSAGES.sessionRequired] as string[]).includes(m),
  404: (m) => m.startsWith('No route for ') || m === MESSAGES.userNotFound,
  413: (m) => m === 'Request body too large',
  415: (m) => m.startsWith('Unsupported Content-Type: '),
  422: (m) => m.length > 0,
  429: (m) => new RegExp(`^${MESSAGES.rateLimited}: retry in [1-9][0-9]* s$`).test(m),
};

/** The refusals of a session request that name no parameter (`{"errors":{"base":[…]}}`, 422). */
export const isSessionRefusal = (m: string): boolean =>
  ([MESSAGES.unknownApplication, MESSAGES.invalidSignature, MESSAGES.nonceReused] as string[]).includes(m) ||
  /^Unexpected timestamp: more than \d+ s away from the server's clock \(\d+\)$/.test(m);

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

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const keysAre = (value: Record<string, unknown>, keys: readonly string[]): boolean =>
  JSON.stringify(Object.keys(value).sort()) === JSON.stringify([...keys].sort());

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string');

/** `{"errors":["<message>", …]}`: the delete and address-book paths (and unknown paths). */
export function checkListError(status: number, body: unknown): void {
  check(isPlainObject(body) && keysAre(body, ['errors']) && isStringList(body.errors), `expected {"errors":[string]}, got ${excerpt(body)}`);
  for (const message of body.errors) {
    check(REST_MESSAGES[status]?.(message), `message ${JSON.stringify(message)} is not one README documents for ${status}`);
  }
}

/**
 * The user lookup: `{"errors":{"base":[…]}}` for credential, permission and
 * malformed-request failures (400, 401, 403), `{"errors":{"<field>":[…]}}` for
 * invalid input (422), `{"code","message"}` otherwise (404, 413, 415).
 * The session family (/session.json, /login.json) is the same, and besides:
 * its 422 names one parameter, or "base" with one of the session request's
 * refusals (isSessionRefusal); 429 `{"code":"TOO_MANY_REQUESTS",…}` past the
 * failed-password budgets.
 */
export function checkObjectError(status: number, body: unknown, family: 'lookup' | 'session' = 'lookup'): void {
  check(isPlainObject(body), `expected a JSON object, got ${excerpt(body)}`);
  if (status === 400 || status === 401 || status === 403 || status === 422) {
    check(keysAre(body, ['errors']) && isPlainObject(body.errors), `expected {"errors":{field:[string]}}, got ${excerpt(body)}`);
    const fields = Object.entries(body.errors);
    check(fields.length > 0 && fields.every(([, v]) => isStringList(v)), `expected {"errors":{field:[string]}}, got ${excerpt(body)}`);
    if (status !== 422) check(keysAre(body.errors, ['base']), `a ${status} names "base", got ${excerpt(body)}`);
    if (family === 'session' && status === 422) {
      check(fields.length === 1 && (fields[0]![1] as string[]).length === 1, `a session request's 422 names one parameter once, got ${excerpt(body)}`);
      const [field, [message]] = fields[0] as [string, string[]];
      if (field === 'base') check(isSessionRefusal(message!), `${JSON.stringify(message)} is not a documented session refusal`);
    }
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
    check(status !== 429 || family === 'session', `a 429 outside the session paths: ${excerpt(body)}`);
    const expectedCode = { 404: 'NOT_FOUND', 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE', 429: 'TOO_MANY_REQUESTS' }[status];
    check(body.code === expectedCode, `a ${status} has code ${expectedCode}, got ${excerpt(body)}`);
    check(REST_MESSAGES[status]?.(body.message), `message ${JSON.stringify(body.message)} is not one README documents for ${status}`);
  }
}

/** `{"errors":[{message, extensions:{code}}, …]}` and possibly `data`: /graphql's errors. */
export function checkGraphQLErrors(body: unknown, allowData: boolean): void {
  check(isPlainObject(body), `expected a GraphQL response object, got ${excerpt(body)}`);
  const allowed = allowData ? ['errors', 'data'] : ['errors'];
  check(
    Object.keys(body).every((k) => allowed.includes(k)),
    `unexpected keys in ${excerpt(body)}`,
  );
  check(Array.isArray(body.errors) && body.errors.length > 0, `expected a non-empty errors list, got ${excerpt(body)}`);
  for (const error of body.errors as unknown[]) {
    check(isPlainObject(error) && typeof error.message === 'string' && error.message.length > 0, `error without a message: ${excerpt(error)}`);
    check(isPlainObject(error.extensions) && typeof error.extensions.code === 'string', `error without extensions.code: ${excerpt(error)}`);
    const code = error.extensions.code;
    check(GRAPHQL_CODES.has(code), `extensions.code ${code} is not one a client may cause (${error.message})`);
  }
}

/** The spec's full user record: exactly its fields, with their types. */
export function checkUserRecord(user: unknown): void {
  check(isPlainObject(user) && keysAre(user, USER_FIELDS), `not a full user record: ${excerpt(user)}`);
  check(Number.isInteger(user.id), `user.id is not an integer: ${excerpt(user)}`);
  check(typeof user.login === 'string', `user.login is not a string: ${excerpt(user)}`);
  for (const field of ['created_at', 'updated_at']) {
    check(typeof user[field] === 'string' && !Number.isNaN(Date.parse(user[field])), `user.${field} is not a timestamp`);
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

/**
 * Runs a property of requests against a stateful service: the database's
 * digest is taken first (the property advances it once a request), then
 * fuzzParameters(runs) cases. Answers the figures every fuzz file reports
 * beside its own counts.
 */
export async function assertRequests<T>(
  pool: Pool,
  outcomes: Outcomes,
  runs: number,
  requests: fc.Arbitrary<T>,
  property: (request: T, tracker: DigestTracker) => Promise<void>,
): Promise<{
  runs: number;
  numRuns: number;
  seed: number;
  byStatus: Record<string, number>;
  digestsCompared: number;
  durationMs: ReturnType<Outcomes['durationsMs']>;
  wallSeconds: number;
}> {
  const tracker = new DigestTracker(pool);
  await tracker.baseline();
  const parameters = fuzzParameters(runs);
  const started = Date.now();
  await fc.assert(
    fc.asyncProperty(requests, (request) => property(request, tracker)),
    parameters,
  );
  return {
    runs: outcomes.runs,
    numRuns: parameters.numRuns,
    seed: parameters.seed,
    byStatus: outcomes.byStatus,
    digestsCompared: tracker.compared,
    durationMs: outcomes.durationsMs(),
    wallSeconds: Math.round((Date.now() - started) / 100) / 10,
  };
}

/** A response slower than this is a failure (generous: requests take milliseconds; a hang or a pg_sleep would show). */
export const MAX_RESPONSE_MS = 5_000;

/**
 * The bound for a request that stores `items` rows (an upload of ~10,000
 * contacts): MAX_RESPONSE_MS plus 2 ms a row. Such an upload takes ~0.9 s on
 * a quiet machine; at load 21 (the suite beside other work on 2 cores) one
 * took 6.3 s and failed the flat bound, though nothing was wrong. Its speed
 * is the benchmark's (`npm run bench:phones`); this bound still catches a
 * hang.
 */
export const maxResponseMs = (items = 0): number => MAX_RESPONSE_MS + 2 * items;

/**
 * How long a fuzz file's beforeAll may take to start its service: an embedded
 * database's start, migrations and seed took over jest's 60 s once at load
 * average 18 (a Node 24 loop of the fuzz files beside other suites).
 */
export const SERVICE_START_TIMEOUT_MS = 180_000;

/**
 * fast-check settings: `runs` by default, `runs * longFactor` with
 * RELIABILITY_LONG=1 (3: CI runs it on every stop, and ten times as many cases
 * took the server run to 19 minutes; run it by hand with FUZZ_SEED or a loop
 * for longer searches). The seed is random per run (FUZZ_SEED replays one,
 * FUZZ_PATH a shrunk counterexample); fast-check prints both on failure.
 */
export interface FuzzParameters {
  seed: number;
  numRuns: number;
  path?: string;
  maxSkipsPerRun: number;
}

export function fuzzParameters(runs: number, longFactor = 3): FuzzParameters {
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
  /** The user the caller acts as, where the credential names one for sure. */
  userId?: number;
  headers: [string, HeaderValue | Repeat][];
}

export function credentialArbitraries(ts: [Tenant, Tenant]): { credentials: fc.Arbitrary<Credentials>; randomValue: fc.Arbitrary<string | Repeat> } {
  const [a, b] = ts;
  const userIds = ts.flatMap((t) => [t.owner.id, t.member.id, t.outsider.id]);
  const headerCase = (name: string) => fc.constantFrom(name, name.toLowerCase(), name.toUpperCase());
  const valid: Credentials[] = ts.flatMap((t, i) => {
    const tenant = i as 0 | 1;
    return [
      { label: 'owner token', tenant, userId: t.owner.id, headers: [['SVC-Token', t.ownerToken]] },
      { label: 'member token', tenant, userId: t.member.id, headers: [['SVC-Token', t.memberToken]] },
      { label: 'outsider token', tenant, userId: t.outsider.id, headers: [['SVC-Token', t.outsiderToken]] },
      { label: 'application token', tenant, headers: [['SVC-Token', t.appToken]] },
      // QuickBlox SDKs send the token as QB-Token: the same rules.
      { label: 'owner QB-Token', tenant, userId: t.owner.id, headers: [['QB-Token', t.ownerToken]] },
      { label: 'application QB-Token', tenant, headers: [['qb-token', t.appToken]] },
      { label: 'api key', tenant, headers: [['Authorization', `ApiKey ${t.apiKey}`]] },
      // HTTP drops whitespace around a header value: still the key.
      { label: 'api key with a trailing space', tenant, headers: [['Authorization', `ApiKey ${t.apiKey} `]] },
      {
        label: 'api key on behalf of owner',
        tenant,
        userId: t.owner.id,
        headers: [
          ['Authorization', `ApiKey ${t.apiKey}`],
          ['On-Behalf-Of', String(t.owner.id)],
        ],
      },
      {
        label: 'api key on behalf of member',
        tenant,
        userId: t.member.id,
        headers: [
          ['Authorization', `ApiKey ${t.apiKey}`],
          ['On-Behalf-Of', String(t.member.id)],
        ],
      },
    ] satisfies Credentials[];
  });
  const tokenHeader = fc.constantFrom('SVC-Token', 'QB-Token');
  const randomValue: fc.Arbitrary<string | Repeat> = fc.oneof(
    { weight: 4, arbitrary: arb.anyString(80).map(latin1Header) },
    { weight: 1, arbitrary: fc.record({ repeat: fc.constantFrom('a', 'é', 'A1_-', ' '), times: fc.integer({ min: 1_000, max: 60_000 }) }) },
  );
  const authorization: fc.Arbitrary<string | Repeat> = fc.oneof(
    randomValue,
    fc.constantFrom(
      'ApiKey',
      'ApiKey ',
      'apikey x',
      'APIKEY x',
      'Bearer x',
      'Basic dXNlcjpwYXNz',
      'ApiKey  x',
      ' ApiKey x',
      'ApiKey x y',
      `ApiKey ${a.apiKey}x`,
      `apikey ${a.apiKey}`,
      `Bearer ${a.apiKey}`,
      `ApiKey ${'k'.repeat(513)}`,
      `ApiKey ${b.ownerToken}`,
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
    { weight: 2, arbitrary: fc.tuple(tokenHeader.chain(headerCase), randomValue).map(([n, v]): Credentials => ({ label: 'random token', headers: [[n, v]] })) },
    {
      weight: 1,
      // Two session-token headers at once: 400, whatever their values (docs/operation.md, Credentials: exactly one).
      arbitrary: fc.tuple(fc.constantFrom(a, b), fc.constantFrom('same', 'other', 'random'), fc.boolean()).map(([t, which, svcFirst]): Credentials => {
        const other = which === 'same' ? t.ownerToken : which === 'other' ? t.memberToken : 'nonsense';
        const pair: [string, string][] = [
          ['SVC-Token', t.ownerToken],
          ['QB-Token', other],
        ];
        return { label: 'SVC-Token and QB-Token', headers: svcFirst ? pair : pair.reverse() };
      }),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(headerCase('Authorization'), authorization).map(([n, v]): Credentials => ({ label: 'odd authorization', headers: [[n, v]] })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...valid.filter((c) => /token$/i.test(c.label))), authorization)
        .map(([c, v]): Credentials => ({ label: 'both', headers: [...c.headers, ['Authorization', v]] })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(a, b), onBehalfOf).map(([t, v]): Credentials => ({
        label: 'token with on-behalf-of',
        headers: [
          ['SVC-Token', t.ownerToken],
          ['On-Behalf-Of', v],
        ],
      })),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(0, 1), onBehalfOf).map(([i, v]): Credentials => ({
        label: 'api key with odd on-behalf-of',
        // Valid user ids of the same tenant make this a valid caller of that tenant; of the other, a 403.
        tenant: i,
        headers: [
          ['Authorization', `ApiKey ${ts[i].apiKey}`],
          ['On-Behalf-Of', v],
        ],
      })),
    },
    {
      weight: 1,
      // A header line sent twice: Node joins the values ("a, b"), which names no session.
      arbitrary: fc.tuple(fc.constantFrom(0, 1), fc.boolean()).map(([i, validFirst]): Credentials => ({
        label: 'token sent twice',
        headers: [['SVC-Token', validFirst ? [ts[i].memberToken, 'nonsense'] : ['nonsense', ts[i].memberToken]]],
      })),
    },
  );

  return { credentials, randomValue };
}

/** Request line and headers stay under the service's 64 KiB (docs/operation.md, Limits: over it is 431, tested on its own). */
const HEADER_BUDGET = 62 * 1024;

/**
 * The headers to send: the first value of each name (case-insensitively, so a
 * random extra header never replaces a credential), with the largest
 * repeated values trimmed until the request line and headers fit the budget.
 * The descriptor's own values are not touched (fast-check replays them).
 */
export function fitHeaders(pairs: readonly (readonly [string, HeaderValue | Repeat])[], requestLineLength: number): Record<string, HeaderValue> {
  const copy = pairs.map(([k, v]): [string, HeaderValue | Repeat] => [k, typeof v === 'object' && !Array.isArray(v) ? { ...v } : v]);
  const size = () => requestLineLength + copy.reduce((n, [k, v]) => n + k.length + 4 + (Array.isArray(v) ? v.join('').length : textLength(v)), 200);
  for (let over = size() - HEADER_BUDGET; over > 0; over = size() - HEADER_BUDGET) {
    const repeated = copy.map(([, v]) => v).filter((v): v is Repeat => typeof v === 'object' && !Array.isArray(v) && v.times > 0);
    if (repeated.length === 0) break;
    const largest = repeated.reduce((x, y) => (textLength(x) >= textLength(y) ? x : y));
    largest.times = Math.max(0, largest.times - Math.ceil(over / largest.repeat.length));
  }
  const headers: Record<string, HeaderValue> = {};
  for (const [name, value] of copy) {
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name;
    headers[key] ??= Array.isArray(value) ? value : materialize(value);
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

// ---------------------------------------------------------------------------
// Session requests (POST /session.json, createSession): described by what
// makes them right or wrong, signed when sent (the timestamp is relative to
// the clock then), with the answer README documents for each.

/** The service's default window (SESSION_TIMESTAMP_WINDOW_S): generated offsets keep 100 s clear of it either way. */
export const TIMESTAMP_WINDOW_S = 3600;

type SeededUser = 'owner' | 'member' | 'outsider';

export interface SessionUserSpec {
  field: 'login' | 'email';
  who: SeededUser | 'nobody';
  /** The seed's password, or another one. */
  password: string /* 'right', or another */;
}

/** Parameters a session request can get wrong in form: each answered 422 naming `field` (docs/rest.md, Sessions). */
const MALFORMATIONS = {
  'application_id not a number': { field: 'application_id', set: { application_id: 'app' } },
  'application_id 0': { field: 'application_id', set: { application_id: '0' } },
  'application_id over Int': { field: 'application_id', set: { application_id: '2147483648' } },
  'application_id a boolean': { field: 'application_id', set: { application_id: true } },
  'timestamp not Unix seconds': { field: 'timestamp', set: { timestamp: '2026-11-23' } },
  'timestamp negative': { field: 'timestamp', set: { timestamp: '-1' } },
  'timestamp of 13 digits': { field: 'timestamp', set: { timestamp: '1000000000000' } },
  'timestamp a fraction': { field: 'timestamp', set: { timestamp: 1.5 } },
  'nonce empty': { field: 'nonce', set: { nonce: '' } },
  'nonce with a space': { field: 'nonce', set: { nonce: 'a b' } },
  'nonce not ASCII': { field: 'nonce', set: { nonce: 'n\u00e9' } },
  'nonce of 65 characters': { field: 'nonce', set: { nonce: 'n'.repeat(65) } },
  'nonce an object': { field: 'nonce', set: { nonce: { a: 1 } } },
  'auth_key with NUL': { field: 'auth_key', set: { auth_key: 'a\u0000b' } },
  'no application_id': { field: 'application_id', set: { application_id: undefined } },
  'no auth_key': { field: 'auth_key', set: { auth_key: undefined } },
  'no timestamp': { field: 'timestamp', set: { timestamp: undefined } },
  'no nonce': { field: 'nonce', set: { nonce: undefined } },
  'no signature': { field: 'signature', set: { signature: undefined } },
  'signature a list': { field: 'signature', set: { signature: ['a', 'b'] } },
  'an unknown parameter': { field: 'x', set: { x: '1' } },
  'a social provider': { field: 'provider', set: { provider: 'facebook' } },
  'provider keys': { field: 'keys[token]', set: { 'keys[token]': 't' } },
  // Login and email together are taken (the Android SDK's request); the email is then checked as the login is.
  'an email with NUL beside a login': {
    field: 'email',
    user: { 'user[login]': 'owner', 'user[email]': 'ow\u0000ner@example.com', 'user[password]': 'password123' },
  },
  'a login without password': { field: 'password', user: { 'user[login]': 'owner' } },
  'a password without login': { field: 'login', user: { 'user[password]': 'password123' } },
  'an empty login': { field: 'login', user: { 'user[login]': '', 'user[password]': 'password123' } },
  'a login with NUL': { field: 'login', user: { 'user[login]': 'ow\u0000ner', 'user[password]': 'password123' } },
  // One character past each maximum (docs/operation.md, Limits), in characters: code points, emoji included.
  'auth_key of 65 characters': { field: 'auth_key', set: { auth_key: 'k'.repeat(65) } },
  'signature of 65 characters': { field: 'signature', set: { signature: 'a'.repeat(65) } },
  'a login of 256 characters': { field: 'login', user: { 'user[login]': '\u{1F600}'.repeat(256), 'user[password]': 'password123' } },
  'an email of 256 characters': { field: 'email', user: { 'user[email]': `${'e'.repeat(244)}@example.com`, 'user[password]': 'password123' } },
  'a password of 256 characters': { field: 'password', user: { 'user[login]': 'owner', 'user[password]': '\u{1F600}'.repeat(256) } },
  // Parameters named like Object.prototype's members are unknown parameters like any other.
  'a parameter named __proto__': { field: '__proto__', set: { ['__proto__']: '1' } },
  'a parameter named constructor': { field: 'constructor', set: { constructor: '1' } },
  'a user parameter named __proto__': { field: 'user[__proto__]', user: { 'user[login]': 'owner', 'user[password]': 'password123', 'user[__proto__]': 'x' } },
} satisfies Record<string, { field: string; set?: Record<string, unknown>; user?: Record<string, string> }>;

export type Malformation = keyof typeof MALFORMATIONS;

export type SessionChange =
  | { kind: 'none' }
  /** The signature's hex digit at `at` (modulo its length) replaced by one of another value. */
  | { kind: 'signature digit'; at: number; by: number }
  /** A signed parameter changed after signing (the user: another password, or a user added). */
  | { kind: 'changed after signing'; param: 'timestamp' | 'nonce' | 'user' }
  | { kind: 'another secret'; secret: string }
  | { kind: "the other application's auth key" }
  | { kind: 'an unknown application' }
  | { kind: 'malformed'; name: Malformation };

export interface SessionSpec {
  tenant: 0 | 1;
  user: SessionUserSpec | undefined;
  /** Seconds from the clock when sent. */
  offset: number;
  nonce: string;
  algorithm: 'sha1' | 'sha256';
  change: SessionChange;
}

/** The answer README documents for a session request; NONCE_REUSED is the caller's to tell (it knows the pairs used). */
export type SessionOutcome = 'created' | 'BAD_USER_INPUT' | 'UNKNOWN_APPLICATION' | 'INVALID_SIGNATURE' | 'TIMESTAMP_OUT_OF_WINDOW' | 'UNAUTHENTICATED';

export interface SessionRequestParts {
  /** Under QuickBlox's names (`user[login]`); undefined values are left out when sent. */
  parameters: Record<string, unknown>;
  expected: SessionOutcome;
  /** For BAD_USER_INPUT: the parameter the 422 names. */
  field?: string;
  applicationId: number;
  /** The user the session is for (null: the application's), when created. */
  userId: number | null;
  /** `<application>:<timestamp>:<nonce>`: what a creation uses up. */
  pair: string;
}

/** Printable ASCII, 1 to 64 characters (README): `&`, `=`, `[` and `%` included. */
export const validNonce: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 0, max: 2 ** 31 - 1 }).map(String),
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 64 }),
);

export function sessionSpecArbitrary(): fc.Arbitrary<SessionSpec> {
  const user: fc.Arbitrary<SessionUserSpec | undefined> = fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 3,
      arbitrary: fc.record({
        field: fc.constantFrom('login' as const, 'email' as const),
        who: fc.constantFrom<SeededUser | 'nobody'>('owner', 'member', 'outsider', 'nobody'),
        password: fc.oneof(
          { weight: 2, arbitrary: fc.constant('right') },
          { weight: 1, arbitrary: fc.constantFrom('password124', 'a&b=c[d]%20\u00e9\u{1F600}', ' password123') },
        ),
      }),
    },
  );
  const offset = fc.oneof(
    { weight: 2, arbitrary: fc.integer({ min: -(TIMESTAMP_WINDOW_S - 100), max: TIMESTAMP_WINDOW_S - 100 }) },
    { weight: 1, arbitrary: fc.integer({ min: TIMESTAMP_WINDOW_S + 100, max: 10_000_000 }).chain((o) => fc.constantFrom(o, -o)) },
  );
  const change: fc.Arbitrary<SessionChange> = fc.oneof(
    // Weighed so that a default run meets each documented answer a dozen times or more.
    { weight: 8, arbitrary: fc.constant({ kind: 'none' as const }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('signature digit' as const), at: fc.nat(63), by: fc.nat(14) }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('changed after signing' as const),
        param: fc.constantFrom('timestamp' as const, 'nonce' as const, 'user' as const),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('another secret' as const), secret: fc.string({ maxLength: 44 }) }) },
    { weight: 3, arbitrary: fc.constantFrom({ kind: "the other application's auth key" as const }, { kind: 'an unknown application' as const }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('malformed' as const), name: fc.constantFrom(...(Object.keys(MALFORMATIONS) as Malformation[])) }) },
  );
  return fc.record({
    tenant: fc.constantFrom(0 as const, 1 as const),
    user,
    offset,
    nonce: validNonce,
    algorithm: fc.constantFrom('sha1' as const, 'sha256' as const),
    change,
  });
}

/** The request a spec describes, signed now (as QuickBlox SDKs sign: test/support/sessions.ts), and its documented answer. */
export function sessionRequestParts(spec: SessionSpec, ts: [Tenant, Tenant], nowSeconds = Math.floor(Date.now() / 1000)): SessionRequestParts {
  const t = ts[spec.tenant];
  const { change } = spec;
  const user = spec.user && {
    [spec.user.field]: spec.user.field === 'login' ? spec.user.who : `${spec.user.who}@example.com`,
    password: spec.user.password === 'right' ? 'password123' : spec.user.password,
  };
  const timestamp = nowSeconds + spec.offset;
  const signed = signedSessionRequest(t, user, {
    timestamp,
    nonce: spec.nonce,
    algorithm: spec.algorithm,
    ...(change.kind === 'another secret' ? { secret: change.secret === t.authSecret ? `${change.secret}x` : change.secret } : {}),
    ...(change.kind === "the other application's auth key" ? { authKey: ts[1 - spec.tenant]!.authKey } : {}),
    ...(change.kind === 'an unknown application' ? { applicationId: '2000000000' } : {}),
  });
  const parameters: Record<string, unknown> = restForm(signed);
  let field: string | undefined;
  switch (change.kind) {
    case 'signature digit': {
      const at = change.at % signed.signature.length;
      const digit = (parseInt(signed.signature[at]!, 16) + 1 + change.by) % 16;
      parameters.signature = `${signed.signature.slice(0, at)}${digit.toString(16)}${signed.signature.slice(at + 1)}`;
      break;
    }
    case 'changed after signing':
      if (change.param === 'timestamp') parameters.timestamp = String(timestamp + 1);
      else if (change.param === 'nonce')
        parameters.nonce = spec.nonce.length < 64 ? `${spec.nonce}0` : `${spec.nonce.slice(0, -1)}${spec.nonce.endsWith('0') ? '1' : '0'}`;
      else if (user) parameters['user[password]'] = `${user.password}x`;
      else Object.assign(parameters, { 'user[login]': 'owner', 'user[password]': 'password123' });
      break;
    case 'malformed': {
      const malformation: { field: string; set?: Record<string, unknown>; user?: Record<string, string> } = MALFORMATIONS[change.name];
      if (malformation.user) {
        for (const key of Object.keys(parameters)) if (key.startsWith('user[')) delete parameters[key];
        ownAssign(parameters, malformation.user);
      }
      ownAssign(parameters, malformation.set ?? {});
      field = malformation.field;
      break;
    }
  }
  const seeded = spec.user && spec.user.who !== 'nobody' ? t[spec.user.who] : undefined;
  const expected: SessionOutcome =
    change.kind === 'malformed'
      ? 'BAD_USER_INPUT'
      : change.kind === "the other application's auth key" || change.kind === 'an unknown application'
        ? 'UNKNOWN_APPLICATION'
        : change.kind !== 'none'
          ? 'INVALID_SIGNATURE'
          : Math.abs(spec.offset) > TIMESTAMP_WINDOW_S
            ? 'TIMESTAMP_OUT_OF_WINDOW'
            : spec.user && (!seeded || spec.user.password !== 'right')
              ? 'UNAUTHENTICATED'
              : 'created';
  return {
    parameters,
    expected,
    ...(field === undefined ? {} : { field }),
    applicationId: t.applicationId,
    userId: seeded?.id ?? null,
    pair: `${t.applicationId}:${signed.timestamp}:${signed.nonce}`,
  };
}

/** Object.assign as own data properties: a `__proto__` key is copied as a key, not set as the prototype. */
function ownAssign(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(source)) Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** What POST /session.json answered, in the terms of SessionOutcome (BAD_USER_INPUT with the parameter named). */
export function sessionAnswer(status: number, json: unknown): string {
  if (status === 201) return 'created';
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 429) return 'TOO_MANY_REQUESTS';
  const errors = (json as { errors?: Record<string, string[]> } | undefined)?.errors;
  const [field, [message] = []] = (status === 422 && errors && !Array.isArray(errors) ? Object.entries(errors)[0] : undefined) ?? [];
  if (field === undefined || message === undefined) return String(status);
  if (field !== 'base') return `BAD_USER_INPUT ${field}`;
  const refusals: Record<string, string> = {
    [MESSAGES.unknownApplication]: 'UNKNOWN_APPLICATION',
    [MESSAGES.invalidSignature]: 'INVALID_SIGNATURE',
    [MESSAGES.nonceReused]: 'NONCE_REUSED',
  };
  return refusals[message] ?? (message.startsWith('Unexpected timestamp: ') ? 'TIMESTAMP_OUT_OF_WINDOW' : `422 ${message}`);
}

/** How a session request's body is written: JSON with `user` nested or flat (`"user[login]"`), JSON numbers where the text is an integer's, or a form. */
export type SessionEncoding = 'json nested' | 'json flat' | 'json numbers' | 'form';

/** A numeric text whose JSON number reads back as the same text (what an SDK signing numbers signs). */
const asNumber = (value: unknown): unknown => (typeof value === 'string' && /^(?:0|[1-9][0-9]{0,14})$/.test(value) ? Number(value) : value);

/** POST /session.json's body and Content-Type. */
export function sessionBody(parameters: Record<string, unknown>, encoding: SessionEncoding): { body: string; contentType: string } {
  const present = Object.entries(parameters).filter(([, v]) => v !== undefined);
  if (encoding === 'form') {
    // A list is its key repeated, as form encoders write one.
    return {
      body: new URLSearchParams(present.flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((item): [string, string] => [k, String(item)]))).toString(),
      contentType: 'application/x-www-form-urlencoded; charset=UTF-8',
    };
  }
  if (encoding === 'json flat') return { body: JSON.stringify(Object.fromEntries(present)), contentType: 'application/json' };
  // Without a prototype, so that a `__proto__` parameter is written as one.
  const json: Record<string, unknown> = Object.create(null);
  for (const [key, value] of present) {
    const field = /^user\[(login|email|password)\]$/.exec(key)?.[1];
    const v = encoding === 'json numbers' && ['application_id', 'timestamp', 'nonce'].includes(key) ? asNumber(value) : value;
    if (field) ((json.user ??= {}) as Record<string, unknown>)[field] = v;
    else json[key] = v;
  }
  return { body: JSON.stringify(json), contentType: 'application/json; charset=utf-8' };
}

/** GraphQL names of the parameters (createSession's SessionRequestInput); others keep theirs (GraphQL refuses them). */
const INPUT_NAMES = new Map([
  ['application_id', 'applicationId'],
  ['auth_key', 'authKey'],
  ['timestamp', 'timestamp'],
  ['nonce', 'nonce'],
  ['signature', 'signature'],
]);

/** The same request as createSession's input (JSON numbers where `numbers`, as SignedText takes them). */
export function sessionInput(parameters: Record<string, unknown>, numbers = false): Record<string, unknown> {
  const input: Record<string, unknown> = Object.create(null);
  for (const [key, value] of Object.entries(parameters)) {
    if (value === undefined) continue;
    const field = /^user\[(login|email|password)\]$/.exec(key)?.[1];
    if (field) ((input.user ??= {}) as Record<string, unknown>)[field] = value;
    else input[INPUT_NAMES.get(key) ?? key] = numbers && ['application_id', 'timestamp', 'nonce'].includes(key) ? asNumber(value) : value;
  }
  return input;
}

/** POST /login.json and `login`: who, by which field, with which password. */
export interface LoginSpec {
  /** 'both': login and email (of the same user: taken, as the Android SDK sends them); 'neither': only a password. */
  field: 'login' | 'email' | 'both' | 'neither';
  who: SeededUser | 'nobody';
  password: 'right' | 'wrong' | 'empty' | 'missing';
  /** The login or email, or the password, at its maximum length (a name no one has, a wrong password) or one character past it (255 / 256 characters). */
  length?: { of: 'name' | 'password'; past: boolean };
}

/** 255 (or 256) characters, emoji among them: the limits count code points. */
const lengthy = (characters: number, tail = ''): string => `${'\u{1F600}'.repeat(characters - 1 - tail.length)}x${tail}`;

export const loginSpecArbitrary = (): fc.Arbitrary<LoginSpec> =>
  fc.record({
    field: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('login' as const, 'email' as const) },
      { weight: 1, arbitrary: fc.constantFrom('both' as const, 'neither' as const) },
    ),
    who: fc.constantFrom<SeededUser | 'nobody'>('owner', 'member', 'outsider', 'owner', 'member', 'outsider', 'nobody'),
    password: fc.oneof(
      { weight: 3, arbitrary: fc.constant('right' as const) },
      { weight: 1, arbitrary: fc.constantFrom('wrong' as const, 'empty' as const, 'missing' as const) },
    ),
    length: fc.oneof(
      { weight: 6, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.record({ of: fc.constantFrom('name' as const, 'password' as const), past: fc.boolean() }) },
    ),
  });

/** The input a login is refused for (422) by its length, if one is past its maximum and nothing is refused before it. */
export function oversizedLoginInput(spec: LoginSpec): 'login' | 'email' | 'password' | undefined {
  if (!spec.length?.past || spec.field === 'neither' || spec.password === 'empty' || spec.password === 'missing') return undefined;
  // Both: the login is measured first.
  return spec.length.of === 'name' ? (spec.field === 'both' ? 'login' : spec.field) : 'password';
}

/** The login's arguments (undefined: left out), and the user it logs in as in the caller's application `t` (undefined: refused, or no `t`). */
export function loginParts(spec: LoginSpec, t?: Tenant): { args: Record<string, string | undefined>; userId: number | undefined } {
  const characters = spec.length && (spec.length.past ? 256 : 255);
  const long = (of: 'name' | 'password') => characters !== undefined && spec.length?.of === of;
  const login = spec.field === 'login' || spec.field === 'both' ? (long('name') ? lengthy(characters!) : spec.who) : undefined;
  const email = spec.field === 'email' || spec.field === 'both' ? (long('name') ? lengthy(characters!, '@example.com') : `${spec.who}@example.com`) : undefined;
  const given = { right: 'password123', wrong: 'password124', empty: '', missing: undefined }[spec.password];
  const password = given && long('password') ? lengthy(characters!) : given;
  const ok = spec.who !== 'nobody' && !spec.length && spec.field !== 'neither' && spec.password === 'right';
  return { args: { login, email, password }, userId: ok && t ? t[spec.who as SeededUser].id : undefined };
}

// ---------------------------------------------------------------------------
// Disposable sessions: ending a session, login and logout change the session
// of the request's token, and the rest of a run needs the tenants' shared ones.

export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Whose a tenant's shared session token is (undefined: not one of them). */
export function sharedTokenOf(ts: [Tenant, Tenant], token: string): { applicationId: number; userId: number | undefined } | undefined {
  for (const t of ts) {
    for (const [shared, user] of [
      [t.ownerToken, t.owner],
      [t.memberToken, t.member],
      [t.outsiderToken, t.outsider],
      [t.appToken, undefined],
    ] as const) {
      if (token === shared) return { applicationId: t.applicationId, userId: user?.id };
    }
  }
  return undefined;
}

/** A session a request's token named instead of a tenant's shared one: its token hash and user before the request. */
export interface Disposable {
  hash: string;
  userId: number | null;
}

export type DisposableSessions = (req: RawRequest, tracker: DigestTracker) => Promise<Disposable | undefined>;

/**
 * Replaces each shared token in a request's headers (in place) by a new
 * session of the same kind (application, user, none), made as the admin CLI
 * makes them, and takes the digest's baseline again after making it.
 * Answers the first one made.
 */
export function disposableSessions(service: TestService, ts: [Tenant, Tenant]): DisposableSessions {
  return async (req, tracker) => {
    const made = new Map<string, Disposable & { token: string }>();
    const swap = async (value: string): Promise<string> => {
      const kind = sharedTokenOf(ts, value);
      if (!kind) return value;
      let disposable = made.get(value);
      if (!disposable) {
        const { token } = await service.app.provisioning.applications.createSession(kind.applicationId, kind.userId);
        disposable = { token, hash: tokenHash(token), userId: kind.userId ?? null };
        made.set(value, disposable);
      }
      return disposable.token;
    };
    const headers = req.headers ?? {};
    for (const [name, value] of Object.entries(headers)) {
      headers[name] = Array.isArray(value) ? await Promise.all(value.map(swap)) : await swap(value);
    }
    if (made.size > 0) await tracker.baseline();
    return made.values().next().value;
  };
}

// ---------------------------------------------------------------------------
// GET /address_book.json as QuickBlox's JavaScript SDK sends it.

/**
 * The query of `QB.addressbook.get(udid)`: '?' + JSON.stringify(params) as a
 * URL parser escapes it (a browser's fetch: WHATWG URL); node-fetch 2, the
 * SDK's under Node, then also passes it through url.parse, which escapes
 * these too. The SDK leaves '%' as it is, so a udid holding an escape
 * (`%41`) reads as the character it escapes: not a udid this form can send
 * (sdkCanSend), nor one with '#' (the URL would end there).
 */
export function sdkQuery(params: Record<string, unknown>, client: 'fetch' | 'node-fetch'): string {
  const { search } = new URL(`http://localhost/address_book.json?${JSON.stringify(params)}`);
  return client === 'fetch' ? search : search.replace(/[{}|\\^`]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export const sdkCanSend = (udid: string): boolean => !udid.includes('#') && !/%[0-9A-Fa-f]{2}/.test(udid);
