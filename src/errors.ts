// Every expected failure of the service, in one place.
//
// Code is both the GraphQL `extensions.code` and the key the REST shim maps to
// an HTTP status and body; resolvers and services throw AppError and never a
// bare Error, so every failure a client can cause has a documented shape.

export const ERROR_STATUS = {
  /** Malformed request: unreadable body, malformed headers, conflicting credentials. */
  BAD_REQUEST: 400,
  /** No credentials, or credentials that name no live session or key. */
  UNAUTHENTICATED: 401,
  /** Valid credentials that may not do this (e.g. an application token where a user is needed). */
  FORBIDDEN: 403,
  /** The spec's WrongPermissions: a delete the caller may not make. */
  WRONG_PERMISSIONS: 403,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** Well-formed request whose values fail validation. */
  BAD_USER_INPUT: 422,
  TOO_MANY_REQUESTS: 429,
  INTERNAL_SERVER_ERROR: 500,
  /** The database cannot be reached (or, for the admin CLI, is owned by another process). */
  SERVICE_UNAVAILABLE: 503,
  DATABASE_BUSY: 503,
  /** The database did not answer within DB_STATEMENT_TIMEOUT_MS (slow statement, or no free connection). */
  DATABASE_TIMEOUT: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Messages shared by both surfaces; the REST ones are the spec's where it names them. */
export const MESSAGES = {
  noCredentials: 'Token is required: send SVC-Token or Authorization: ApiKey <key>',
  bothCredentials: 'Send either SVC-Token or Authorization, not both',
  sessionMissing: 'Required session does not exist',
  malformedAuthorization: "Authorization must be 'ApiKey <key>'",
  unknownApiKey: 'Unknown API key',
  onBehalfOfWithoutApiKey: 'On-Behalf-Of is accepted only with Authorization: ApiKey',
  onBehalfOfUnknown: 'On-Behalf-Of does not name a user of this application',
  needUser: 'Forbidden. Need user.',
  wrongPermissions: 'WrongPermissions',
  userNotFound: 'User not found',
  malformedBody: 'Malformed request body',
  internal: 'Internal server error',
  databaseUnavailable: 'Service temporarily unavailable: the database cannot be reached',
  databaseTimeout: 'Service temporarily unavailable: the database did not answer in time',
  shuttingDown: 'Service temporarily unavailable: this instance is shutting down',
  conflict: 'Service temporarily unavailable: a concurrent request conflicted with this one; retry',
  rateLimited: 'Too many requests',
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

export const badInput = (field: string, message: string): AppError =>
  new AppError('BAD_USER_INPUT', message, { field });

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
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
const TIMEOUT_MESSAGES = /timeout exceeded when trying to connect|due to connection timeout|canceling statement due to statement timeout/i;
const isDatabaseTimeout = (error: unknown): boolean =>
  inCauseChain(error, (code, message) => code === '57014' || TIMEOUT_MESSAGES.test(message));

/** Deadlock or serialization failure (40P01, 40001): nothing was written, a retry can succeed. */
const isConflict = (error: unknown): boolean => inCauseChain(error, (code) => code === '40P01' || code === '40001');

/** Connection-level failures: the database is down, restarting or unreachable. */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'P1001', 'P1002', 'P1017', '57P01', '57P02', '57P03']);
const UNAVAILABLE_MESSAGES = /Cannot use a pool after calling end|Connection terminated|connection timeout|Client has encountered a connection error|Can't reach database server|the database system is (starting up|shutting down)/i;
const isDatabaseUnavailable = (error: unknown): boolean =>
  inCauseChain(
    error,
    (code, message) => (code !== undefined && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) || UNAVAILABLE_MESSAGES.test(message),
  );

/**
 * Any thrown value as an AppError: itself, 503 when the database cannot be
 * reached, else a 500 whose message reveals nothing of the cause.
 */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isConflict(error)) return new AppError('DATABASE_BUSY', MESSAGES.conflict, { cause: error });
  if (isDatabaseTimeout(error)) return new AppError('DATABASE_TIMEOUT', MESSAGES.databaseTimeout, { cause: error });
  if (isDatabaseUnavailable(error)) return new AppError('SERVICE_UNAVAILABLE', MESSAGES.databaseUnavailable, { cause: error });
  return new AppError('INTERNAL_SERVER_ERROR', MESSAGES.internal, { cause: error });
}
