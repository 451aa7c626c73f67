// Response headers of QuickBlox's API that its SDKs read.
import type { FastifyInstance } from 'fastify';
import { SESSION_TTL_SECONDS } from '../services/auth';

/**
 * When the request's session token expires. QuickBlox's JavaScript SDK reads
 * it (on GET and POST answers) to know when to renew the session, parsing it
 * as `new Date(value.replaceAll('-', '/'))`: only the Rails form
 * "2026-11-23 20:00:00 UTC" survives that (an ISO 8601 string does not).
 */
export const SESSION_EXPIRY_HEADER = 'QB-Token-ExpirationDate';

export const qbTime = (date: Date): string => `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;

/**
 * Every answer to a request made with a live session token says when that
 * session now expires (each request moves it), as QuickBlox's API does: its
 * SDKs renew the session by it. A callback hook (no promise per request); the
 * header has whole seconds, so its text is made once a second.
 */
export function registerSessionExpiry(fastify: FastifyInstance): void {
  let expirySecond = -1;
  let expiryText = '';
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const caller = request.context?.authenticated;
    if (caller?.via === 'session' && !reply.hasHeader(SESSION_EXPIRY_HEADER)) {
      const second = Math.floor(Date.now() / 1000);
      if (second !== expirySecond) {
        expirySecond = second;
        expiryText = qbTime(new Date((second + SESSION_TTL_SECONDS) * 1000));
      }
      reply.header(SESSION_EXPIRY_HEADER, expiryText);
    }
    done(null, payload);
  });
}
