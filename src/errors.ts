// Every expected failure of the service, in one place: its code, HTTP
// status, REST shape and meaning (ERRORS), the messages shared by both
// surfaces, and the classification of anything thrown (toAppError). How a
// failure becomes a response is src/http/failures.ts.
//
// Code is both the GraphQL `extensions.code` and the key the REST shim maps to
// an HTTP status and body; resolvers and services throw AppError and never a
// bare Error, so every failure a client can cause has a documented shape.

/**
 * Where the message goes in the object-shaped REST errors (the user lookup,
 * sessions, login): `base` → {"errors":{"base":[m]}}, `field` →
 * {"errors":{"<input>":[m]}}, `code` → {"code":"<CODE>","message":m}. The
 * list-shaped paths (delete, address book) always answer {"errors":[m]}.
 */
export type ObjectShape = 'base' | 'field' | 'code';

interface ErrorKind {
  status: number;
  objectShape: ObjectShape;
  /** What the code means, for the API documents (OpenAPI, README). */
  meaning: string;
}

/** Every error code: its HTTP status, its REST shape, and what it means. The OpenAPI document is built from this. */
export const ERRORS = {
  BAD_REQUEST: { status: 400, objectShape: 'base', meaning: 'Malformed request: an unreadable body or path, conflicting credential headers' },
  UNAUTHENTICATED: { status: 401, objectShape: 'base', meaning: 'No credentials, credentials that name no live session or key, or a wrong login or password' },
  FORBIDDEN: {
    status: 403,
    objectShape: 'base',
    meaning: 'Valid credentials that may not do this (an application session where a user is needed, an API key where a session is)',
  },
  WRONG_PERMISSIONS: { status: 403, objectShape: 'base', meaning: "The spec's WrongPermissions: a delete the caller may not make" },
  NOT_FOUND: { status: 404, objectShape: 'code', meaning: 'No such record, or no route for this path and method' },
  REQUEST_TIMEOUT: {
    status: 408,
    objectShape: 'code',
    meaning:
      'The request did not arrive in time: its body went silent for BODY_IDLE_TIMEOUT_MS, or the whole request took over REQUEST_TIMEOUT_MS; the connection is closed',
  },
  PAYLOAD_TOO_LARGE: { status: 413, objectShape: 'code', meaning: 'Request body over 2 MiB' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, objectShape: 'code', meaning: 'A body of another type than JSON or form-encoded' },
  COST_LIMIT_EXCEEDED: {
    status: 400,
    objectShape: 'code',
    meaning:
      '/graphql: a document whose root fields together would read or write more than its limits allow (rows, contacts, ids per document; src/graphql/cost.ts), refused before any resolver runs',
  },
  PERSISTED_QUERY_NOT_IN_LIST: {
    status: 400,
    objectShape: 'code',
    meaning: '/graphql under GRAPHQL_TRUSTED_DOCUMENTS=enforce: a document that is not in the manifest',
  },
  BAD_USER_INPUT: {
    status: 422,
    objectShape: 'field',
    meaning: 'A well-formed request whose values fail validation (one longer than its maximum included, refused before any work); the message names the input',
  },
  UNKNOWN_APPLICATION: { status: 422, objectShape: 'base', meaning: 'Session request: no application with this id and auth key (QuickBlox answers 422 too)' },
  INVALID_SIGNATURE: { status: 422, objectShape: 'base', meaning: 'Session request: the signature is not the HMAC of the parameters under the auth secret' },
  TIMESTAMP_OUT_OF_WINDOW: { status: 422, objectShape: 'base', meaning: "Session request: the signed timestamp is too far from the server's clock" },
  NONCE_REUSED: { status: 422, objectShape: 'base', meaning: 'Session request: this timestamp and nonce were already used (a replay)' },
  TOO_MANY_REQUESTS: {
    status: 429,
    objectShape: 'code',
    meaning:
      'Over a request budget (per credential, per address) or a failed-password budget (per account, per unknown login or email, per address); Retry-After says when to retry',
  },
  INTERNAL_SERVER_ERROR: { status: 500, objectShape: 'code', meaning: "Anything unexpected (a bug); details only in the service's log" },
  SERVICE_UNAVAILABLE: { status: 503, objectShape: 'code', meaning: 'The database cannot be reached, or this instance is shutting down; retry' },
  DATABASE_BUSY: { status: 503, objectShape: 'code', meaning: 'A deadlock or serialization failure with a concurrent request; nothing was written; retry' },
  DATABASE_TIMEOUT: {
    status: 503,
    objectShape: 'code',
    meaning: 'The database did not answer within DB_STATEMENT_TIMEOUT_MS (slow statement, or no free connection)',
  },
  WRITE_OUTCOME_UNKNOWN: {
    status: 503,
    objectShape: 'code',
    meaning:
      'A write was sent but its commit was never confirmed (the connection was lost in a failover, or the synchronous standby did not confirm in time): it may or may not have been applied; retry, or read to find out',
  },
} as const satisfies Record<string, ErrorKind>;

export type ErrorCode = keyof typeof ERRORS;

/** The HTTP status of each code. */
export const ERROR_STATUS = Object.fromEntries(Object.entries(ERRORS).map(([code, kind]) => [code, kind.status])) as {
  [C in ErrorCode]: (typeof ERRORS)[C]['status'];
};

/** Messages shared by both surfaces; the REST ones are the spec's where it names them. */
export const MESSAGES = {
  noCredentials: 'Token is required: send SVC-Token or Authorization: ApiKey <key>',
  bothCredentials: 'Send either SVC-Token or Authorization, not both',
  severalTokens: 'Send one session token header (SVC-Token or QB-Token), not several',
  sessionRequired: 'This request needs a session token (SVC-Token or QB-Token), not an API key',
  badLogin: 'Unauthorized',
  unknownApplication: 'Unknown application or auth key',
  invalidSignature: 'Unexpected signature',
  nonceReused: 'Unexpected nonce: this timestamp and nonce were already used',
  sessionMissing: 'Required session does not exist',
  malformedAuthorization: "Authorization must be 'ApiKey <key>'",
  unknownApiKey: 'Unknown API key',
  onBehalfOfWithoutApiKey: 'On-Behalf-Of is accepted only with Authorization: ApiKey',
  onBehalfOfUnknown: 'On-Behalf-Of does not name a user of this application',
  needUser: 'Forbidden. Need user.',
  wrongPermissions: 'WrongPermissions',
  userNotFound: 'User not found',
  malformedBody: 'Malformed request body',
  requestTimeout: 'Request timeout: the request did not arrive in time',
  internal: 'Internal server error',
  databaseUnavailable: 'Service temporarily unavailable: the database cannot be reached',
  databaseTimeout: 'Service temporarily unavailable: the database did not answer in time',
  writeOutcomeUnknown: 'Service temporarily unavailable: the write was sent but its commit could not be confirmed; it may or may not have been applied',
  shuttingDown: 'Service temporarily unavailable: this instance is shutting down',
  conflict: 'Service temporarily unavailable: a concurrent request conflicted with this one; retry',
  rateLimited: 'Too many requests',
  rateLimitStoreUnavailable: 'Service temporarily unavailable: the rate-limit store cannot be reached',
} as const;

export interface AppErrorOptions {
  /**
   * The input the error is about, in GraphQL (camelCase) terms. The REST shim
   * turns it into the spec's field name for the object-shaped errors of the
   * user lookup; "base" when the error concerns the request as a whole.
   */
  field?: string;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.field = options.field;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const badInput = (field: string, message: string): AppError => new AppError('BAD_USER_INPUT', message, { field });

/** Over a budget (requests, failed logins): answered 429 with Retry-After. */
export class RateLimitedError extends AppError {
  constructor(readonly retryAfterSeconds: number) {
    super('TOO_MANY_REQUESTS', `${MESSAGES.rateLimited}: retry in ${retryAfterSeconds} s`);
  }
}

interface ErrorFields {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
}

/** Whether the error or one of its causes (drivers wrap each other) matches. */
function inCauseChain(error: unknown, matches: (code: string | undefined, message: string) => boolean): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 8; depth++) {
    const { code, message, cause } = e as ErrorFields;
    if (matches(typeof code === 'string' ? code : undefined, typeof message === 'string' ? message : '')) return true;
    e = cause;
  }
  return false;
}

/**
 * The bounds of DB_STATEMENT_TIMEOUT_MS: PostgreSQL cancelled the statement
 * (57014), or no pooled connection came free in time.
 */
const TIMEOUT_MESSAGES = /timeout exceeded when trying to connect|due to connection timeout|canceling statement due to statement timeout|Query read timeout/i;
const isDatabaseTimeout = (error: unknown): boolean => inCauseChain(error, (code, message) => code === '57014' || TIMEOUT_MESSAGES.test(message));

/** Deadlock or serialization failure (40P01, 40001): nothing was written, a retry can succeed. */
const isConflict = (error: unknown): boolean => inCauseChain(error, (code) => code === '40P01' || code === '40001');

/**
 * Connection-level failures: the database is down, restarting or unreachable;
 * or, 25006, the connection reached a standby (a primary demoted by a
 * switchover, before the load balancer noticed): nothing was written.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'P1001',
  'P1002',
  'P1017',
  '57P01',
  '57P02',
  '57P03',
  '25006',
]);
const UNAVAILABLE_MESSAGES =
  /Cannot use a pool after calling end|Connection terminated|connection timeout|Client has encountered a connection error|Can't reach database server|the database system is (starting up|shutting down)/i;
const isDatabaseUnavailable = (error: unknown): boolean =>
  inCauseChain(error, (code, message) => (code !== undefined && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) || UNAVAILABLE_MESSAGES.test(message));

/** A write sent whose commit was never confirmed (src/db/sql.ts StatementError.outcomeUnknown). */
function isOutcomeUnknown(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 8; depth++) {
    if ((e as { outcomeUnknown?: unknown }).outcomeUnknown === true) return true;
    e = (e as ErrorFields).cause;
  }
  return false;
}

/**
 * Any thrown value as an AppError: itself, 503 when the database cannot be
 * reached (WRITE_OUTCOME_UNKNOWN when that happened between a write and the
 * confirmation of its commit: never a success, never "nothing written"), else
 * a 500 whose message reveals nothing of the cause.
 */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isOutcomeUnknown(error)) return new AppError('WRITE_OUTCOME_UNKNOWN', MESSAGES.writeOutcomeUnknown, { cause: error });
  if (isConflict(error)) return new AppError('DATABASE_BUSY', MESSAGES.conflict, { cause: error });
  if (isDatabaseTimeout(error)) return new AppError('DATABASE_TIMEOUT', MESSAGES.databaseTimeout, { cause: error });
  if (isDatabaseUnavailable(error)) return new AppError('SERVICE_UNAVAILABLE', MESSAGES.databaseUnavailable, { cause: error });
  return new AppError('INTERNAL_SERVER_ERROR', MESSAGES.internal, { cause: error });
}
