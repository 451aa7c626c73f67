// Subscriptions over WebSocket (issue 33): graphql-ws's `graphql-transport-ws`
// protocol on GET /graphql (the same port and path as every other request),
// through @fastify/websocket. What a socket may do is decided here; which
// events it is owed, and reading them from the database, in
// src/services/live.ts.
//
// - Credentials: the connection_init payload's `SVC-Token` (or another
//   session-token header name), or `Authorization` with `On-Behalf-Of`
//   (browsers cannot set headers on a WebSocket); else the upgrade request's
//   headers. A user is needed. Refused: closed with 4403; no connection_init
//   within LIVE_INIT_TIMEOUT_MS: 4408 (graphql-ws).
// - Documents pass what /graphql's pass: the token limit (parse), the
//   validation rules with graphql-armor's (depth, cost, aliases, directives),
//   the trusted-document check. A subscription has one root field, so the
//   root-field cost rule (src/graphql/cost.ts) has nothing to add up. Queries
//   and mutations stay on HTTP.
// - Session end: every revocation applied here (this instance's own and
//   those of the bus, src/scale/revocations.ts) closes the sockets of that
//   session, API key or application with 4403; each socket's credentials are
//   checked again every LIVE_RECHECK_MS (an expired session: 4403).
// - Bounds: sockets per user (1008) and per instance (1013), subscriptions
//   per socket (an error on that subscription), message size (1009, ws), and
//   per socket at most LIVE_SOCKET_QUEUE_MAX events waiting and
//   LIVE_SOCKET_BUFFER_BYTES unsent: past either the consumer is too slow and
//   its socket is closed (1013), so that it never grows the process.
import websocket, { type WebSocket } from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  type DocumentNode,
  type ExecutionArgs,
  getOperationAST,
  GraphQLError,
  type GraphQLSchema,
  parse,
  specifiedRules,
  validate,
  type ValidationRule,
} from 'graphql';
import { makeHandler } from 'graphql-ws/use/@fastify/websocket';
import { createContext, credentialsFromHeaders, type Context } from '../context';
import { AppError, toAppError } from '../errors';
import type { Caller, Credentials, Services } from '../services';
import { API_KEY_MESSAGE, APPLICATION_MESSAGE } from '../services/auth';
import { decodeCursor, encodeCursor, type LiveEvent, type LiveEventKind, LiveHub, type LiveSocket } from '../services/live';
import type { MessageAddedEventMapper } from './mappers/live.mappers';
import { hashSecret } from '../services/secrets';
import { databaseIdOf, toGlobalId } from '../services/global-id';
import { parseOptions } from './limits';
import type { TrustedDocuments } from './trusted-documents';
import type { Registry } from 'prom-client';
import { registerLiveMetrics } from '../http/operator-metrics';

/** Close codes (docs/graphql.md, "Subscriptions"). 4403 and 4408 are graphql-ws's own. */
export const CLOSE = {
  forbidden: 4403,
  initTimeout: 4408,
  policy: 1008,
  tooBig: 1009,
  tryAgainLater: 1013,
  goingAway: 1001,
} as const;

export interface LiveOptions {
  /** Serve subscriptions (default true). */
  enabled?: boolean;
  /** A server URL for the LISTEN connection (LIVE_LISTEN_URL, else DATABASE_URL); undefined on the embedded database. */
  listenUrl?: string | undefined;
  /** The listener's periodic read (LIVE_POLL_MS). */
  pollMs?: number;
  /** connection_init must arrive within this (LIVE_INIT_TIMEOUT_MS). */
  initTimeoutMs?: number;
  /** Open sockets of one user on this instance (LIVE_SOCKETS_PER_USER). */
  socketsPerUser?: number;
  /** Open sockets on this instance (LIVE_SOCKETS_MAX). */
  socketsMax?: number;
  /** Subscriptions one socket may hold (LIVE_SUBSCRIPTIONS_PER_SOCKET). */
  subscriptionsPerSocket?: number;
  /** Largest message a client may send, bytes (LIVE_MESSAGE_BYTES_MAX). */
  messageBytesMax?: number;
  /** Events waiting to be sent on one socket (LIVE_SOCKET_QUEUE_MAX). */
  socketQueueMax?: number;
  /** Bytes sent to a socket and not yet taken by the client (LIVE_SOCKET_BUFFER_BYTES). */
  socketBufferBytes?: number;
  /** Ping interval; a socket that does not answer within it is dropped (LIVE_KEEPALIVE_MS). */
  keepAliveMs?: number;
  /** How often each socket's credentials are checked again (LIVE_RECHECK_MS). */
  recheckMs?: number;
}

export const LIVE_DEFAULTS = {
  pollMs: 1_000,
  initTimeoutMs: 5_000,
  socketsPerUser: 10,
  socketsMax: 10_000,
  subscriptionsPerSocket: 20,
  messageBytesMax: 64 * 1024,
  socketQueueMax: 1_000,
  socketBufferBytes: 1024 * 1024,
  keepAliveMs: 12_000,
  recheckMs: 30_000,
} as const;

export interface LiveStats {
  sockets: number;
  subscriptions: number;
  droppedConsumers: number;
  refused: number;
}

export interface Live {
  readonly hub: LiveHub;
  readonly stats: LiveStats;
  close(): Promise<void>;
}

/** One socket's state. */
interface SocketState {
  readonly socket: WebSocket;
  caller: (Caller & { kind: 'user' }) | undefined;
  credentials: Credentials | undefined;
  /** What a revocation names for this socket's credentials. */
  revokedBy: Set<string>;
  readonly subscriptions: Set<() => void>;
  queued: number;
  closed: boolean;
}

/** The resolvers' way to the socket's subscriptions; a subscription over HTTP never gets here (refused in validation). */
export function liveSocketOf(context: Context): LiveSocket {
  if (!context.live) throw new AppError('BAD_REQUEST', 'Subscriptions are served over WebSocket (graphql-transport-ws) on GET /graphql');
  return context.live;
}

/** `dialogId`: a dialog's global id (as Dialog.id) or its 24-hex database id. */
export function dialogIdArgument(id: string | null | undefined): string | undefined {
  if (id === null || id === undefined) return undefined;
  const databaseId = databaseIdOf(id, 'Dialog');
  if (databaseId !== undefined) return databaseId;
  throw new AppError('BAD_USER_INPUT', 'dialogId must be a dialog id', { field: 'dialogId' });
}

/**
 * A subscription field's events (messagesDeleted, messageAdded): the same
 * arguments (`dialogId`, `after`: its cursor decoded, RESYNC_REQUIRED past
 * retention from the hub) and the same socket bounds for every field; only
 * the kinds of events and what each becomes differ.
 */
export function liveEvents<T>(
  context: Context,
  args: { dialogId?: string | null; after?: string | null },
  kinds: readonly LiveEventKind[],
  map: (event: LiveEvent) => T,
): Promise<AsyncIterableIterator<T>> {
  return liveSocketOf(context).subscribe({
    kinds,
    dialogId: dialogIdArgument(args.dialogId),
    after: args.after == null ? undefined : decodeCursor(args.after),
    map,
  });
}

/** A new message's event as MessageAddedEvent (its message read for each subscriber: resolvers/MessageAddedEvent.ts). */
export function addedEvent(event: LiveEvent): MessageAddedEventMapper {
  return {
    cursor: encodeCursor(event.key),
    messageId: event.messageIds[0]!,
    dialogId: event.dialogId,
    // The trigger writes the sender for every new message (user_id is null only for deletes for everyone).
    senderId: event.userId!,
    createdAt: event.createdAt,
  };
}

/** A deletion event as MessagesDeletedEvent. */
export function deletionEvent(event: LiveEvent) {
  return {
    cursor: encodeCursor(event.key),
    dialogId: toGlobalId('Dialog', event.dialogId),
    scope: event.kind === 'hidden' ? ('FOR_ME' as const) : ('FOR_EVERYONE' as const),
    deletedMessageIds: event.messageIds.map((id) => toGlobalId('Message', id)),
    deletedMessageDatabaseIds: [...event.messageIds],
    deletedAt: event.createdAt,
  };
}

export interface SubscriptionsOptions extends LiveOptions {
  schema: GraphQLSchema;
  services: Services;
  pool: import('pg').Pool;
  sessionTokenHeaders: readonly string[];
  validationRules: readonly ValidationRule[];
  trusted: TrustedDocuments;
  /** Where the metrics go (src/http/operator-metrics.ts, registerLiveMetrics). */
  metrics?: Registry;
  onError?: (error: unknown) => void;
}

/**
 * Registers @fastify/websocket and makes GET /graphql (registered after this)
 * upgrade to graphql-ws; starts this instance's listener.
 */
export async function registerSubscriptions(fastify: FastifyInstance, options: SubscriptionsOptions): Promise<Live | undefined> {
  if (options.enabled === false) return undefined;
  const settings = { ...LIVE_DEFAULTS, ...definedOf(options) };
  const { services, schema, trusted } = options;
  const hub = new LiveHub({ pool: options.pool, listenUrl: options.listenUrl, pollMs: settings.pollMs, onError: options.onError });
  const stats: LiveStats = { sockets: 0, subscriptions: 0, droppedConsumers: 0, refused: 0 };
  const sockets = new Map<WebSocket, SocketState>();
  const perUser = new Map<string, number>();
  const rules = [...specifiedRules, ...options.validationRules];
  const userKey = (caller: { applicationId: number; userId: number }) => `${caller.applicationId}:${caller.userId}`;

  const close = (state: SocketState, code: number, reason: string) => {
    if (state.closed) return;
    state.closed = true;
    state.socket.close(code, reason);
  };

  const liveSocket = (state: SocketState): LiveSocket => ({
    async subscribe({ kinds, dialogId, after, map }) {
      const caller = state.caller!;
      if (state.subscriptions.size >= settings.subscriptionsPerSocket) {
        throw new AppError('TOO_MANY_REQUESTS', `At most ${settings.subscriptionsPerSocket} subscriptions per socket`);
      }
      const queue = new EventQueue<ReturnType<typeof map>>(() => {
        state.queued--;
      });
      const remove = await hub.subscribe(
        {
          applicationId: caller.applicationId,
          userId: caller.userId,
          dialogId,
          kinds: new Set<LiveEventKind>(kinds),
          deliver: (event) => {
            if (state.closed) return;
            // Past either bound the client does not keep up: closed, never buffered without end.
            if (state.queued >= settings.socketQueueMax || state.socket.bufferedAmount > settings.socketBufferBytes) {
              stats.droppedConsumers++;
              close(state, CLOSE.tryAgainLater, 'Slow consumer: events waited beyond the bound; reconnect with after');
              return;
            }
            state.queued++;
            queue.push(map(event));
          },
        },
        after,
      );
      const done = () => {
        remove();
        if (state.subscriptions.delete(done)) stats.subscriptions--;
        state.queued -= queue.clear();
      };
      state.subscriptions.add(done);
      stats.subscriptions++;
      queue.onReturn(done);
      if (state.closed) done();
      return queue;
    },
  });

  const unsubscribeRevocations = services.auth.onRevocation((message) => {
    for (const state of sockets.values()) {
      if (!state.caller) continue;
      if (message === undefined) void recheck(state);
      else if (state.revokedBy.has(message)) close(state, CLOSE.forbidden, 'Session ended');
    }
  });

  /** Credential rechecks in flight at once (the pool's other connections stay for requests). */
  const RECHECK_CONCURRENCY = 2;
  const recheck = async (state: SocketState) => {
    if (!state.credentials || state.closed) return;
    try {
      const caller = await services.auth.authenticate(state.credentials);
      if (caller.kind !== 'user' || caller.userId !== state.caller?.userId) close(state, CLOSE.forbidden, 'Session ended');
    } catch (error) {
      if (isRefusal(error)) close(state, CLOSE.forbidden, 'Session ended');
    }
  };
  // The periodic recheck walks the sockets a few at a time: all at once, the
  // benchmark's 10,000 sockets put 10,000 credential checks in the pool's
  // queue every 30 s, ahead of the requests (lookups answered 503 after
  // waiting for a connection). A walk still running skips the next tick.
  let rechecking = false;
  const recheckTimer = setInterval(() => {
    if (rechecking) return;
    rechecking = true;
    const pending = [...sockets.values()];
    const worker = async () => {
      for (let state = pending.pop(); state; state = pending.pop()) await recheck(state);
    };
    void Promise.all(Array.from({ length: RECHECK_CONCURRENCY }, worker)).finally(() => (rechecking = false));
  }, settings.recheckMs);
  recheckTimer.unref();

  const handler = makeHandler<Record<string, unknown>, { state: SocketState }>(
    {
      schema,
      connectionInitWaitTimeout: settings.initTimeoutMs,
      onConnect: async (ctx) => {
        const state = sockets.get(ctx.extra.socket);
        if (!state) return false;
        const credentials = credentialsOf(ctx.connectionParams, ctx.extra.request, options.sessionTokenHeaders);
        let caller: Caller;
        try {
          caller = await services.auth.authenticate(credentials);
        } catch (error) {
          if (isRefusal(error)) {
            stats.refused++;
            return false;
          }
          close(state, CLOSE.tryAgainLater, 'Service unavailable: retry');
          return false;
        }
        if (caller.kind !== 'user') {
          stats.refused++;
          return false;
        }
        const key = userKey(caller);
        const count = perUser.get(key) ?? 0;
        if (count >= settings.socketsPerUser) {
          close(state, CLOSE.policy, `At most ${settings.socketsPerUser} sockets per user`);
          return false;
        }
        perUser.set(key, count + 1);
        state.caller = caller;
        state.credentials = credentials;
        state.revokedBy = revocationKeys(caller, credentials);
        return true;
      },
      onSubscribe: (ctx, _id, payload) => {
        const state = sockets.get(ctx.extra.socket);
        if (!state?.caller) return [new GraphQLError('Not connected', { extensions: { code: 'UNAUTHENTICATED' } })];
        let document: DocumentNode;
        try {
          document = parse(trusted.documentOf(payload), parseOptions);
        } catch (error) {
          return [asGraphQLError(error, 'GRAPHQL_PARSE_FAILED')];
        }
        const errors = validate(schema, document, rules);
        if (errors.length > 0) return errors.map((error) => withCode(error, 'GRAPHQL_VALIDATION_FAILED'));
        const operation = getOperationAST(document, payload.operationName);
        if (!operation) return [withCode(new GraphQLError('No operation to run (name one with operationName)'), 'BAD_REQUEST')];
        if (operation.operation !== 'subscription') {
          return [withCode(new GraphQLError('Over WebSocket only subscriptions are served: send queries and mutations to /graphql over HTTP'), 'BAD_REQUEST')];
        }
        const args: ExecutionArgs = {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: createContext(services, state.credentials!, ctx.extra.request.id, ctx.extra.request.ip, liveSocket(state)),
        };
        return args;
      },
      onError: (_ctx, _id, _payload, errors) => errors.map((error) => formatted(error)),
      onNext: (_ctx, _id, _payload, _args, result) => {
        if (!result.errors) return;
        return { ...result, errors: result.errors.map((error) => formatted(error)) };
      },
      onClose: (ctx) => {
        const state = sockets.get(ctx.extra.socket);
        if (!state) return;
        sockets.delete(ctx.extra.socket);
        stats.sockets--;
        state.closed = true;
        for (const done of [...state.subscriptions]) done();
        if (state.caller) {
          const key = userKey(state.caller);
          const count = (perUser.get(key) ?? 1) - 1;
          if (count <= 0) perUser.delete(key);
          else perUser.set(key, count);
        }
      },
    },
    settings.keepAliveMs,
  );

  // The route's wsHandler (GET /graphql is registered after this: the onRoute
  // hook, added before the plugin's own, gives it one).
  fastify.addHook('onRoute', (route) => {
    if (route.url !== '/graphql' || route.method !== 'GET') return;
    route.wsHandler = function (socket, request) {
      if (sockets.size >= settings.socketsMax) {
        socket.close(CLOSE.tryAgainLater, `This instance has its maximum of ${settings.socketsMax} sockets: retry (another instance)`);
        return;
      }
      const state: SocketState = {
        socket,
        caller: undefined,
        credentials: undefined,
        revokedBy: new Set(),
        subscriptions: new Set(),
        queued: 0,
        closed: false,
      };
      sockets.set(socket, state);
      stats.sockets++;
      socket.on('close', () => {
        state.closed = true;
      });
      return handler.call(this, socket, request);
    };
  });
  await fastify.register(websocket, {
    options: { maxPayload: settings.messageBytesMax },
    // Closing: every socket told 1001 (the client reconnects, elsewhere).
    preClose: (done) => {
      for (const state of sockets.values()) close(state, CLOSE.goingAway, 'Server going away');
      done();
    },
  });
  await hub.start();
  if (options.metrics) registerLiveMetrics(options.metrics, { stats, hub });

  return {
    hub,
    stats,
    async close() {
      clearInterval(recheckTimer);
      unsubscribeRevocations();
      for (const state of sockets.values()) close(state, CLOSE.goingAway, 'Server going away');
      await hub.close();
    },
  };
}

/** Credentials from the connection_init payload (any letter case), else from the upgrade request's headers. */
function credentialsOf(params: Readonly<Record<string, unknown>> | undefined, request: FastifyRequest, tokenHeaders: readonly string[]): Credentials {
  const fromPayload: Record<string, string> = {};
  for (const [name, value] of Object.entries(params ?? {})) if (typeof value === 'string') fromPayload[name.toLowerCase()] = value;
  const names = [...tokenHeaders, 'authorization', 'on-behalf-of'];
  const inPayload = names.some((name) => fromPayload[name] !== undefined);
  return credentialsFromHeaders(inPayload ? fromPayload : request.headers, tokenHeaders);
}

/** The revocation messages (src/services/auth.ts) that end this socket's credentials. */
function revocationKeys(caller: Caller, credentials: Credentials): Set<string> {
  const keys = new Set([`${APPLICATION_MESSAGE}${caller.applicationId}`]);
  if (caller.session) keys.add(caller.session.tokenHash);
  const apiKey = /^ApiKey\s+(\S+)$/i.exec(credentials.authorization ?? '')?.[1];
  if (caller.via === 'apiKey' && apiKey) keys.add(`${API_KEY_MESSAGE}${hashSecret(apiKey)}`);
  return keys;
}

/** Credentials refused (as opposed to the database failing). */
function isRefusal(error: unknown): boolean {
  return error instanceof AppError && ['UNAUTHENTICATED', 'FORBIDDEN', 'APPLICATION_DISABLED', 'BAD_REQUEST'].includes(error.code);
}

function withCode(error: GraphQLError, code: string): GraphQLError {
  if (error.extensions['code'] !== undefined) return error;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...error.extensions, code },
  });
}

function asGraphQLError(error: unknown, code: string): GraphQLError {
  if (error instanceof GraphQLError) return withCode(error, code);
  const app = toAppError(error);
  return new GraphQLError(app.message, { extensions: { code: app.code } });
}

/** An error as the client sees it: an AppError's code and message, nothing else of an unexpected one. */
function formatted(error: GraphQLError) {
  const original = error.originalError;
  if (original && !(original instanceof GraphQLError)) {
    const app = toAppError(original);
    return { message: app.message, locations: error.locations, path: error.path, extensions: { code: app.code } };
  }
  return { message: error.message, locations: error.locations, path: error.path, extensions: { code: error.extensions['code'] ?? 'INTERNAL_SERVER_ERROR' } };
}

function definedOf(options: LiveOptions): Partial<Record<keyof typeof LIVE_DEFAULTS, number>> {
  const out: Partial<Record<keyof typeof LIVE_DEFAULTS, number>> = {};
  for (const key of Object.keys(LIVE_DEFAULTS) as (keyof typeof LIVE_DEFAULTS)[]) {
    const value = options[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** A subscription's events waiting for the client: an async iterator whose bound the caller keeps (it counts per socket). */
class EventQueue<T> implements AsyncIterableIterator<T> {
  private readonly items: T[] = [];
  private waiting: ((result: IteratorResult<T>) => void) | undefined;
  private done = false;
  private returned: (() => void) | undefined;

  constructor(private readonly taken: () => void) {}

  push(item: T): void {
    if (this.done) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      this.taken();
      resolve({ value: item, done: false });
    } else this.items.push(item);
  }

  /** Empties it; returns how many were waiting. */
  clear(): number {
    const count = this.items.length;
    this.items.length = 0;
    this.done = true;
    this.waiting?.({ value: undefined, done: true });
    this.waiting = undefined;
    return count;
  }

  onReturn(listener: () => void): void {
    this.returned = listener;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.items.length > 0) {
      this.taken();
      return Promise.resolve({ value: this.items.shift()!, done: false });
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.returned?.();
    this.clear();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}
