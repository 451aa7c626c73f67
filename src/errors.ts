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
  /** The Retry-After an answer with this code carries (REST: the header; GraphQL: extensions.retryAfterSeconds). */
  retryAfterSeconds?: number;
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
  APPLICATION_DISABLED: {
    status: 403,
    objectShape: 'base',
    meaning:
      "The credentials' application is disabled by its operator (admin app:disable): its API key, sessions and session requests are refused until it is enabled again; nothing of it was deleted",
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
  SERVICE_UNAVAILABLE: {
    status: 503,
    objectShape: 'code',
    meaning:
      'The database cannot take the request now (unreachable, refusing connections, out of connections, restarting, shutting down), or this instance is shutting down; nothing was written; retry',
    retryAfterSeconds: 1,
  },
  DATABASE_BUSY: {
    status: 503,
    objectShape: 'code',
    meaning: 'A deadlock or serialization failure with a concurrent request; nothing was written; retry',
    retryAfterSeconds: 1,
  },
  DATABASE_TIMEOUT: {
    status: 503,
    objectShape: 'code',
    meaning: 'The database did not answer within DB_STATEMENT_TIMEOUT_MS (slow statement, or no free connection)',
    retryAfterSeconds: 2,
  },
  WRITE_OUTCOME_UNKNOWN: {
    status: 503,
    objectShape: 'code',
    meaning:
      'A write was sent but its commit was never confirmed (the connection was lost in a failover, or the synchronous standby did not confirm in time): it may or may not have been applied; retry, or read to find out',
    retryAfterSeconds: 1,
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
  applicationDisabled: 'Forbidden. Application is disabled.',
  wrongPermissions: 'WrongPermissions',
  userNotFound: 'User not found',
  malformedBody: 'Malformed request body',
  fragmentInTarget: 'Malformed request target: it holds "#" (a fragment stays in the client and is never sent)',
  repeatedParameter: 'is sent more than once: send each query-string parameter once',
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

/** A configuration the service cannot start with: the process says so and exits (src/main.ts), no stack trace. */
export class ConfigError extends Error {
  override name = 'ConfigError';
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
  /** `reason`: which budget, when the client can do something about it (the request limits say nothing). */
  constructor(
    readonly retryAfterSeconds: number,
    reason?: string,
  ) {
    super('TOO_MANY_REQUESTS', `${MESSAGES.rateLimited}: ${reason === undefined ? '' : `${reason}; `}retry in ${retryAfterSeconds} s`);
  }
}

interface ErrorFields {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
}

/** What each classified condition answers. */
const MESSAGE_OF_ANSWER = {
  DATABASE_BUSY: MESSAGES.conflict,
  DATABASE_TIMEOUT: MESSAGES.databaseTimeout,
  SERVICE_UNAVAILABLE: MESSAGES.databaseUnavailable,
} as const;

/**
 * A rule of the classification: what a thrown error (or one of its causes:
 * drivers wrap each other) looks like, by its code (PostgreSQL's SQLSTATE, a
 * socket's errno, Prisma's P-code) or its message, and the code it answers.
 */
interface Classification {
  answer: keyof typeof MESSAGE_OF_ANSWER;
  /** Why, for the reader: which conditions the rule covers. */
  covers: string;
  codes?: ReadonlySet<string>;
  /** SQLSTATE classes (their first two characters). */
  classes?: readonly string[];
  messages?: RegExp;
  /** Codes that count only with a message saying so (55000 is also raised by ordinary statements). */
  codeWithMessage?: { codes: ReadonlySet<string>; messages: RegExp };
}

/**
 * Every driver condition the service answers with something other than 500,
 * in the order they are tried. The first three are "the database cannot
 * take this now": each answers 503 with Retry-After (ERRORS' retryAfterSeconds).
 */
export const CLASSIFICATIONS: readonly Classification[] = [
  {
    answer: 'DATABASE_BUSY',
    covers: 'deadlock (40P01), serialization failure (40001): nothing was written, a retry can succeed',
    codes: new Set(['40P01', '40001']),
  },
  {
    answer: 'DATABASE_TIMEOUT',
    covers: 'the bounds of DB_STATEMENT_TIMEOUT_MS: PostgreSQL cancelled the statement (57014), or no pooled connection came free in time',
    codes: new Set(['57014']),
    messages: /timeout exceeded when trying to connect|due to connection timeout|canceling statement due to statement timeout|Query read timeout/i,
  },
  {
    answer: 'SERVICE_UNAVAILABLE',
    covers:
      'the database is down, restarting, refusing connections or unreachable: connection failures (08xxx, sockets, Prisma P1001/P1002/P1017), ' +
      'too many connections (53300), not accepting connections (55000 at connect: ALLOW_CONNECTIONS false), terminated by an administrator (57P01), ' +
      'a crash of another server process (57P02), starting up or shutting down (57P03); 25006: a standby reached where the primary was (a switchover the balancer has not seen)',
    codes: new Set([
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      'ENOTFOUND',
      'EAI_AGAIN',
      'EHOSTUNREACH',
      'P1001',
      'P1002',
      'P1017',
      '53300',
      '57P01',
      '57P02',
      '57P03',
      '25006',
    ]),
    classes: ['08'],
    messages:
      /Cannot use a pool after calling end|Connection terminated|connection timeout|Client has encountered a connection error|Can't reach database server|the database system is (starting up|shutting down|in recovery mode)|too many (connections|clients)/i,
    codeWithMessage: { codes: new Set(['55000']), messages: /not currently accepting connections/i },
  },
];

function matches(rule: Classification, code: string | undefined, message: string): boolean {
  if (code !== undefined) {
    if (rule.codes?.has(code)) return true;
    if (rule.classes?.some((prefix) => code.startsWith(prefix))) return true;
    if (rule.codeWithMessage?.codes.has(code) && rule.codeWithMessage.messages.test(message)) return true;
  }
  return rule.messages?.test(message) ?? false;
}

/** The first rule that the error or one of its causes matches. */
function classify(error: unknown): Classification | undefined {
  for (const rule of CLASSIFICATIONS) {
    for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 8; depth++) {
      const { code, message, cause } = e as ErrorFields;
      if (matches(rule, typeof code === 'string' ? code : undefined, typeof message === 'string' ? message : '')) return rule;
      e = cause;
    }
  }
  return undefined;
}

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
  const rule = classify(error);
  if (rule) return new AppError(rule.answer, MESSAGE_OF_ANSWER[rule.answer], { cause: error });
  return new AppError('INTERNAL_SERVER_ERROR', MESSAGES.internal, { cause: error });
}

/** Seconds a client should wait before retrying an answer with this code; undefined when a retry would not help. */
export function retryAfterSeconds(error: AppError): number | undefined {
  if (error instanceof RateLimitedError) return error.retryAfterSeconds;
  const kind: ErrorKind = ERRORS[error.code];
  return kind.retryAfterSeconds;
}
