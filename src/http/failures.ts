// Every failure becomes a response here, for both surfaces and for the
// framework's own errors: AppErrors of the services, driver errors (classified
// by toAppError), errors graphql-js reports for the REST shim's variables,
// Fastify's body and routing errors, and requests Node's HTTP parser refuses.
//
// REST answers in the family of its path: {"errors":["…"]} (list: delete,
// address book, unknown paths) or the object shapes of the user lookup,
// sessions and login (src/errors.ts ObjectShape); /graphql in GraphQL's.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type GraphQLFormattedError, GraphQLError } from 'graphql';
import { AppError, ERRORS, MESSAGES, badInput, retryAfterSeconds, toAppError } from '../errors';

/** 'graphql' is for /graphql itself, whose clients read GraphQL-shaped errors. */
export type ErrorStyle = 'list' | 'object' | 'graphql';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which of the spec's error shapes the route answers with. */
    errorStyle?: ErrorStyle;
  }
}

/** REST names of inputs whose GraphQL name differs (a Map: a client's `constructor` parameter names nothing here). */
const REST_FIELD_NAMES = new Map([
  ['externalUserId', 'external_user_id'],
  ['applicationId', 'application_id'],
  ['authKey', 'auth_key'],
]);

export function errorBody(error: AppError, style: ErrorStyle): unknown {
  if (style === 'list') return { errors: [error.message] };
  if (style === 'graphql') return { errors: [{ message: error.message, extensions: { code: error.code } }] };
  switch (ERRORS[error.code].objectShape) {
    case 'base':
      return { errors: { base: [error.message] } };
    case 'field': {
      const field = error.field === undefined ? 'base' : (REST_FIELD_NAMES.get(error.field) ?? error.field);
      return { errors: { [field]: [error.message] } };
    }
    case 'code':
      return { code: error.code, message: error.message };
  }
}

/** Answers `thrown` in `style`; failures with a cause (a bug, the database) are logged with it. */
export function sendFailure(reply: FastifyReply, thrown: unknown, style: ErrorStyle): FastifyReply {
  const error = toAppError(thrown);
  // A 503 the service chose itself (shutting down) is not an error of its own.
  if (error.status === 500 || (error.status > 500 && error.cause !== undefined)) {
    reply.log.error({ err: error.cause ?? error }, error.message);
  }
  // 429 and every 503: when to try again (a client retries a 503, not a 500).
  const retryAfter = retryAfterSeconds(error);
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
  return reply.code(error.status).send(errorBody(error, style));
}

/**
 * Apollo Server's formatError: the service's failures with their code (and
 * the input they concern); graphql-js's own errors (syntax, validation,
 * variables) keep Apollo's codes.
 */
export function formatGraphQLError(log: FastifyInstance['log']) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = error instanceof GraphQLError ? error.originalError : error;
    if (!original || original instanceof GraphQLError) return formatted;
    const appError = toAppError(original);
    if (appError.status >= 500) log.error({ err: appError.cause ?? appError }, appError.message);
    const retryAfter = retryAfterSeconds(appError);
    return {
      message: appError.message,
      locations: formatted.locations,
      path: formatted.path,
      extensions: {
        code: appError.code,
        ...(appError.field === undefined ? {} : { field: appError.field }),
        ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter }),
      },
    };
  };
}

/**
 * An error of an operation the REST shim executed. graphql-js's own errors
 * (which may wrap further GraphQLErrors) can only be variables of the wrong
 * type there: the documents are fixed and valid.
 */
export function fromExecutionError(error: GraphQLError): AppError {
  const original = error.originalError;
  if (original && !(original instanceof GraphQLError)) return toAppError(original);
  const variable = /^Variable "\$(\w+)"/.exec(error.message)?.[1];
  return badInput(variable ?? 'base', error.message);
}

/** A path a route matched but does not serve (e.g. no ".json" suffix): answered as no route. */
export class RouteNotFound extends AppError {
  constructor() {
    super('NOT_FOUND', 'Not found');
  }
}

const noRoute = (request: FastifyRequest): AppError => new AppError('NOT_FOUND', `No route for ${request.method} ${request.url.split('?')[0]}`);

/** Fastify's own request errors (body parsing, limits, a bad URL) in the service's terms. */
function fromFrameworkError(error: unknown): unknown {
  if (error instanceof AppError) return error;
  const { code, statusCode } = error as { code?: string; statusCode?: number };
  if (code === 'FST_ERR_BAD_URL') return new AppError('BAD_REQUEST', 'Malformed request path');
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new AppError('PAYLOAD_TOO_LARGE', 'Request body too large');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Content-Type: send application/json or application/x-www-form-urlencoded');
  }
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return new AppError('BAD_REQUEST', MESSAGES.malformedBody);
  }
  return error;
}

/**
 * The not-found and error handlers, and the options Fastify takes at
 * construction for what fails before routing. `styleOfPath`: the family of a
 * path no route took (or took for another method).
 */
export function failureHandling(styleOfPath: (path: string) => Exclude<ErrorStyle, 'graphql'>) {
  // Doubled slashes are the path with single ones, as the router reads it (ignoreDuplicateSlashes).
  const styleOfUrl = (url: string) => styleOfPath((url.split(/[?#]/)[0] ?? '').replace(/\/{2,}/g, '/'));
  return {
    /** Fastify option: a path that is not valid percent-encoding fails before routing. */
    frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) => sendFailure(reply, fromFrameworkError(error), styleOfUrl(request.url)),
    /** Fastify option: requests Node's HTTP parser refuses never reach a route. */
    clientErrorHandler: answerClientError,
    /** Before any plugin registers: child contexts inherit the handlers set by then. */
    register(fastify: FastifyInstance) {
      fastify.setNotFoundHandler((request, reply) => sendFailure(reply, noRoute(request), styleOfUrl(request.url)));
      fastify.setErrorHandler((error, request, reply) => {
        // A route's own style; else /graphql's, or the style of the path (a
        // path with no route for its method can still fail here, on its body).
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- typed as always set; kept as a guard for errors outside a matched route
        const style: ErrorStyle = request.routeOptions.config?.errorStyle ?? (request.routeOptions.url === '/graphql' ? 'graphql' : styleOfUrl(request.url));
        if (error instanceof RouteNotFound) return sendFailure(reply, noRoute(request), style);
        return sendFailure(reply, fromFrameworkError(error), style);
      });
    },
  };
}

/** Node's 'clientError': the connection is answered (in the list shape) and closed, as Node and Fastify do. */
function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A HEAD answer has no body: a client would choke on one.
  const head = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
  if (socket.writable) {
    const [status, message] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request line and headers too large']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, MESSAGES.requestTimeout]
          : [400, 'Malformed HTTP request'];
    const body = JSON.stringify({ errors: [message] });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
    );
  }
  socket.destroy(error);
}
