// REST error bodies. The spec has two families:
// - delete and address book: {"errors": ["message", ...]}
// - user lookup: {"errors": {"<field>": ["message"]}} for authentication,
//   authorization and validation failures, {"code": "...", "message": "..."}
//   for everything else (not found, rate limits, outages).
import type { FastifyReply } from 'fastify';
import { type AppError, toAppError } from '../errors';

/** 'graphql' is for /graphql itself, whose clients read GraphQL-shaped errors. */
export type ErrorStyle = 'list' | 'object' | 'graphql';

/** REST names of inputs whose GraphQL name differs. */
const REST_FIELD_NAMES: Record<string, string> = { externalUserId: 'external_user_id' };

export function errorBody(error: AppError, style: ErrorStyle): unknown {
  if (style === 'list') return { errors: [error.message] };
  if (style === 'graphql') return { errors: [{ message: error.message, extensions: { code: error.code } }] };
  switch (error.code) {
    case 'UNAUTHENTICATED':
    case 'BAD_REQUEST':
    case 'FORBIDDEN':
      return { errors: { base: [error.message] } };
    case 'BAD_USER_INPUT': {
      const field = error.field === undefined ? 'base' : (REST_FIELD_NAMES[error.field] ?? error.field);
      return { errors: { [field]: [error.message] } };
    }
    default:
      return { code: error.code, message: error.message };
  }
}

export function sendError(reply: FastifyReply, thrown: unknown, style: ErrorStyle): FastifyReply {
  const error = toAppError(thrown);
  // Failures with a cause (a bug, the database) are logged with it; a 503 the
  // service chose itself (shutting down) is not an error of its own.
  if (error.status === 500 || (error.status > 500 && error.cause !== undefined)) {
    reply.log.error({ err: error.cause ?? error }, error.message);
  }
  return reply.code(error.status).send(errorBody(error, style));
}
