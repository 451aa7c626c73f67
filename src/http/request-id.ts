// Request ids: the client's X-Request-Id when it is a sane token, else a
// UUID; every answer carries the id back (X-Request-Id, exposed to browsers
// by CORS), and every log line of the request carries it as reqId, so a
// client's report and the service's log meet on one value.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** Longest id taken from a client: longer ones (or other characters) are replaced, so a log line's size stays bounded. */
export const REQUEST_ID_MAX = 128;
const SANE = new RegExp(`^[\\w.-]{1,${REQUEST_ID_MAX}}$`);

/** Fastify's genReqId: the id of a request as it arrives. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SANE.test(given) ? given : randomUUID();
}

/**
 * Sets X-Request-Id on every answer, the failures' included. Registered
 * before any other onRequest hook, so that an answer another hook gives (a
 * 503 while closing, a 429) carries it too. A callback hook: no promise per request.
 */
export function registerRequestIds(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
}
