// What a response may be: the documented statuses and GraphQL error codes,
// the error shapes of each route family, the spec's user records, a
// stack-trace detector, and the Violation a property fails with.
import { MESSAGES } from '../../../src/errors';
import { USER_FIELDS } from '../records';

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
