// The health probes: GET /healthz (the process answers) and GET /readyz (it
// can serve: the database answers, and it is not draining). Kubernetes and
// load balancers poll them (docs/operation.md, Operation: Health); the rate limits and
// the tracing leave them out.
import type { FastifyInstance } from 'fastify';
import type { Database } from '../db';
import { sendUnstored } from './caching';

export interface ProbesOptions {
  /** Readiness asks the database (src/db/index.ts). */
  database: Pick<Database, 'readiness'>;
  /** From drain() on (src/http/lifecycle.ts), readiness fails while requests are still served. */
  lifecycle: { readonly draining: boolean };
}

/** Probes report this instance now: a cached answer would report another moment. */
export function registerProbes(fastify: FastifyInstance, { database, lifecycle }: ProbesOptions): void {
  fastify.get('/healthz', async (_request, reply) => sendUnstored(reply, { status: 'ok' }));
  fastify.get('/readyz', async (request, reply) => {
    // Stopping: out of the balancers first, while requests are still served.
    if (lifecycle.draining) return sendUnstored(reply.code(503), { status: 'unavailable', reason: 'shutting down' });
    const readiness = await database.readiness();
    if (readiness.ready) return sendUnstored(reply, { status: 'ready' });
    if (readiness.cause !== undefined) request.log.warn({ err: readiness.cause }, 'not ready');
    return sendUnstored(reply.code(503), { status: 'unavailable', reason: readiness.reason });
  });
}
