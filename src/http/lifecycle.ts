// How the HTTP service stops: the drain that lets an instance leave a load
// balancer without failing a request (readiness, which the drain fails, is
// src/http/probes.ts).
//
// A graceful stop, as Kubernetes and balancers need it (docs/operation.md,
// Stopping): an endpoint is removed asynchronously after SIGTERM, so for a
// while new requests keep coming. The steps:
//
// 1. drain(): /readyz answers 503 at once; every request is still served
//    (main waits SHUTDOWN_DELAY_MS here, for the balancers to notice).
// 2. close(): no new connection is accepted (refused by the kernel: a client
//    may retry it anywhere, nothing was sent); every answer from now on
//    carries `Connection: close`, so a kept-alive connection ends cleanly
//    after its next answer instead of being cut under a request on its way;
//    connections still idle after `idleGraceMs` are closed; requests in
//    flight finish. Then requests still arriving on a connection (pipelined
//    behind the last answer) are refused with a 503 in their route's shape.
//
// Live connections of other protocols (WebSockets: graphql-ws, when it comes)
// register with onClosing(): they are called when close() begins, to end
// their sockets with close code 1001 (Going Away), so clients reconnect
// elsewhere; close() waits for them, within main's bound.
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { AppError, MESSAGES } from '../errors';

export interface CloseOptions {
  /**
   * How long kept-alive connections that are idle when accepting stops may
   * still bring one more request (answered, with `Connection: close`) before
   * they are closed; 0 closes them at once (tests, Ctrl-C).
   */
  idleGraceMs?: number;
}

export interface Lifecycle {
  /** From drain() on: readiness fails, requests are still served. */
  readonly draining: boolean;
  drain(): void;
  /** Steps 2 of the stop, up to the moment Fastify itself closes (which the caller then runs). */
  stopAccepting(options?: CloseOptions): Promise<void>;
  /** Called once when close() begins: the hook for WebSockets (close them with 1001). */
  onClosing(listener: () => void | Promise<void>): void;
}

const POLL_MS = 20;

/**
 * Readiness's drain and the connection handling of a stop.
 * Registered before the routes: the onRequest hook must see every request.
 */
export function registerLifecycle(fastify: FastifyInstance): Lifecycle {
  const state = { draining: false, closing: false, refusing: false };
  const listeners: (() => void | Promise<void>)[] = [];
  const connections = new Set<net.Socket>();
  fastify.server.on('connection', (socket: net.Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });

  // Callback hooks, one boolean each per request: no promise, nothing else
  // while the service runs. Past the grace, a request still arriving on a
  // connection is refused in its route's shape (and the connection closed).
  fastify.addHook('onRequest', (_request, reply, done) => {
    if (!state.refusing) return done();
    reply.header('connection', 'close');
    done(new AppError('SERVICE_UNAVAILABLE', MESSAGES.shuttingDown));
  });
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (state.closing) reply.header('connection', 'close');
    done(null, payload);
  });

  return {
    get draining() {
      return state.draining;
    },
    drain() {
      state.draining = true;
    },
    async stopAccepting(options = {}) {
      state.draining = true;
      state.closing = true;
      await Promise.all(listeners.map(async (listener) => listener()));
      // The listening socket alone: http.Server.close() would also close the
      // idle kept-alive connections at once, under any request on its way.
      // (Fastify's close() calls it again later: Node then answers its
      // callback when the last connection is gone, as it would have.)
      const server = fastify.server;
      if (server.listening) net.Server.prototype.close.call(server);
      const until = Date.now() + (options.idleGraceMs ?? 0);
      while (connections.size > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      state.refusing = true;
    },
    onClosing(listener) {
      listeners.push(listener);
    },
  };
}
