// How long a client may take over each phase of a connection, so that slow or
// stalled clients cannot hold sockets (and what they have sent so far) forever:
//
// - headers: the request line and headers must arrive within `headersMs` of
//   the request's first byte (Node's headersTimeout);
// - body: a body may go silent for at most `bodyIdleMs` at a time;
// - the whole request, headers and body, must arrive within `requestMs` of its
//   first byte (Node's requestTimeout), whatever the pace: a client sending a
//   byte just often enough to stay under the idle bound is cut here;
// - keep-alive: a connection idle between requests is closed after
//   `keepAliveMs` (nothing to answer; clients reconnect).
//
// Answers are 408 REQUEST_TIMEOUT with `Connection: close`. Once the headers
// have arrived the route is known, and the 408 is in its family's shape
// (through the error handler); before that the service cannot know what was
// asked, and the answer is the list shape (src/http/failures.ts).
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError, MESSAGES } from '../errors';

export interface TimeoutOptions {
  headersMs: number;
  bodyIdleMs: number;
  requestMs: number;
  keepAliveMs: number;
}

/**
 * The whole request's bound must let the largest body (2 MiB) through a slow
 * mobile uplink: 180 s is 2 MiB at ~12 KB/s (~93 kbit/s, EDGE-class). Headers
 * are at most 64 KiB, and usually under 2. The keep-alive bound is longer than
 * the 60 s idle timeout of common load balancers, which should close first.
 */
export const DEFAULT_TIMEOUTS: Readonly<TimeoutOptions> = {
  headersMs: 20_000,
  bodyIdleMs: 30_000,
  requestMs: 180_000,
  keepAliveMs: 72_000,
};

/** The Fastify server options that carry these bounds to Node's HTTP server. */
export function serverTimeouts(timeouts: TimeoutOptions): {
  requestTimeout: number;
  keepAliveTimeout: number;
  server: { headersTimeout: number; requestTimeout: number; keepAliveTimeout: number; connectionsCheckingInterval: number };
} {
  return {
    // Fastify sets these two on the server after creating it.
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    server: {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      // Node checks the headers and request bounds on this interval (default
      // 30 s, so a 20 s bound would cut at up to 50 s).
      connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(Math.min(timeouts.headersMs, timeouts.requestMs) / 10))),
    },
  };
}

/**
 * The reply of the request whose body is still arriving on each socket: its
 * watcher's state. The watcher's listeners are the module-level functions
 * below, called with the request as `this`: arming one makes no closure per
 * request (under tsx each closure also cost a `__name` call: ~2% of a
 * GraphQL lookup's instructions with the closures, BENCHMARKS.md, "Lookups
 * and the GraphQL pipeline").
 */
const bodiesArriving = new WeakMap<Socket, FastifyReply>();

/**
 * The watched body arrived (or the request closed): the watcher goes. Its
 * timer goes too, unless the answer was already sent (a 415 is sent before
 * the body is read, which Node then reads and drops): the socket's timer is
 * then Node's keep-alive bound, which clearing it would lift, leaving the
 * idle connection open for good.
 */
function bodyEnded(this: IncomingMessage): void {
  const socket = this.socket;
  const reply = bodiesArriving.get(socket);
  if (reply?.request.raw !== this) return;
  bodiesArriving.delete(socket);
  if (!reply.sent) this.setTimeout(0);
}

/** The body went silent for too long, or Node's whole-request bound fired while it arrived. */
function bodyTimedOut(this: IncomingMessage): void {
  const socket = this.socket;
  const reply = bodiesArriving.get(socket);
  if (reply?.request.raw !== this) return;
  bodiesArriving.delete(socket);
  this.setTimeout(0);
  if (this.complete) return;
  // Node's 'timeout' event only reports; without an answer the socket stays open.
  if (reply.sent || this.listenerCount('error') === 0) {
    socket.destroy();
    return;
  }
  reply.header('connection', 'close');
  // Through the body parser, which answers it via the error handler in
  // the route's shape. Destroying the request instead would destroy the
  // socket and leave no answer at all.
  this.emit('error', new AppError('REQUEST_TIMEOUT', MESSAGES.requestTimeout));
}

/**
 * Bounds the body phase: a silence over `bodyIdleMs` ends the request with a
 * 408 in its route's shape, and so does Node's whole-request bound when it
 * fires while the body arrives (see `clientErrorHandler`).
 */
export function registerBodyTimeouts(fastify: FastifyInstance, timeouts: TimeoutOptions): void {
  const idleMs = timeouts.bodyIdleMs;
  fastify.addHook('preParsing', (request, reply, payload, done) => {
    const raw = request.raw;
    // Requests complete by now (no body, or one that came with the headers)
    // need no watcher. (A small POST body usually is not yet: the hook runs
    // before Node's parser has handed it over.) fastify.inject's request
    // (light-my-request) has no socket timer and streams its body from
    // memory: nothing to watch (a large injected body answered 500 here,
    // "raw.setTimeout is not a function").
    if (raw.complete || typeof raw.setTimeout !== 'function') return done(null, payload);
    bodiesArriving.set(raw.socket, reply);
    // The socket's own inactivity timer: nothing runs per chunk.
    raw.setTimeout(idleMs, bodyTimedOut);
    // `on`, not `once`: each is emitted once per request (and `once` wraps its listener in a closure).
    raw.on('end', bodyEnded);
    raw.on('close', bodyEnded);
    done(null, payload);
  });
}

/**
 * Node reports a request over `requestMs` (or `headersMs`) as a client error
 * on its socket. When the request's body is arriving, its route answers it;
 * otherwise `answer` does (nothing of the request is known yet).
 */
export function clientErrorHandler(
  answer: (error: Error & { code?: string }, socket: Socket) => void,
): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    const arriving = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? bodiesArriving.get(socket) : undefined;
    if (arriving) return bodyTimedOut.call(arriving.request.raw);
    answer(error, socket);
  };
}
