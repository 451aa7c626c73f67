// The per-request context, built the same way for GraphQL and for the REST
// shim: the request id, the client address, the services, and the caller,
// resolved from the credential headers on first use (so that introspection
// and session creation need none) and then memoised for the rest of the request.
import type { Caller, Credentials, Services } from './services';
import type { LiveSocket } from './services/live';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's context, made on first use by createApp()'s contextOf (GraphQL, a REST route, or a hook). */
    context?: Context;
  }
}

export interface Context {
  readonly requestId: string;
  /** The client's address (X-Forwarded-For only with TRUST_PROXY): failed-login budgets count by it. */
  readonly address: string;
  readonly services: Services;
  /** The session token the request sent, if any (a session's own `token` field echoes it). */
  readonly sessionToken: string | undefined;
  /** Checks the request's credentials once; rejects with an AppError when they fail. */
  caller(): Promise<Caller>;
  /** The caller once caller() has succeeded, for what the response reports (the session's expiry). */
  readonly authenticated: Caller | undefined;
  /** The request ended its own session: the response no longer reports an expiry for it. */
  sessionEnded(): void;
  /** A WebSocket's subscriptions (src/graphql/subscriptions.ts); undefined over HTTP. */
  readonly live?: LiveSocket | undefined;
}

type HeaderValue = string | string[] | undefined;

/** Names of the headers that carry a session token (lower case): the spec's, and QuickBlox SDKs'. */
export const DEFAULT_SESSION_TOKEN_HEADERS = ['svc-token', 'qb-token'] as const;

/**
 * Every request header whose value can change who the caller is: the
 * session-token headers, Authorization, On-Behalf-Of — what credentialsFromHeaders
 * reads. Caching (Vary), CORS and CSRF prevention name them from here.
 */
export const credentialHeaders = (tokenHeaders: readonly string[] = DEFAULT_SESSION_TOKEN_HEADERS): string[] => [
  ...tokenHeaders,
  'authorization',
  'on-behalf-of',
];

/**
 * Reads the credential headers. A header sent twice counts as its first value;
 * two different session-token headers at once are reported (a 400, like a
 * token and an API key together).
 */
/** A header's first value. At module level: a closure made per request costs an allocation (and, under tsx, a __name call). */
const one = (value: HeaderValue): string | undefined => (Array.isArray(value) ? value[0] : value);

export function credentialsFromHeaders(headers: Record<string, HeaderValue>, tokenHeaders: readonly string[] = DEFAULT_SESSION_TOKEN_HEADERS): Credentials {
  let token: string | undefined;
  let tokens = 0;
  for (const name of tokenHeaders) {
    const value = one(headers[name]);
    if (value === undefined) continue;
    tokens++;
    token ??= value;
  }
  return {
    token,
    severalTokens: tokens > 1,
    authorization: one(headers['authorization']),
    onBehalfOf: one(headers['on-behalf-of']),
  };
}

/** What a request's context and Apollo Server's copy of it share: the caller, once checked. */
interface CallerState {
  pending: Promise<Caller> | undefined;
  authenticated: Caller | undefined;
}

/**
 * A class, its state in one shared object: Apollo Server hands resolvers a
 * shallow copy of every context (`Object.assign` onto an object of the same
 * prototype). A plain object with a getter and four closures took V8's slow
 * path there (the getter evaluated, each property defined one by one: 1.3% of
 * the service's CPU under the GraphQL lookup's load, with the closures'
 * allocation beside it, BENCHMARKS.md); own data properties are copied on the
 * fast path, and the copy shares `state`, so a caller checked (or a session
 * ended) through either is seen through both — the onSend hook reads the
 * original.
 */
class RequestContext implements Context {
  readonly sessionToken: string | undefined;
  private readonly state: CallerState = { pending: undefined, authenticated: undefined };

  constructor(
    readonly services: Services,
    private readonly credentials: Credentials,
    readonly requestId: string,
    readonly address: string,
    readonly live?: LiveSocket,
  ) {
    this.sessionToken = credentials.token;
  }

  caller(): Promise<Caller> {
    const state = this.state;
    return (state.pending ??= this.services.auth.authenticate(this.credentials).then((resolved) => {
      state.authenticated = resolved;
      return resolved;
    }));
  }

  get authenticated(): Caller | undefined {
    return this.state.authenticated;
  }

  sessionEnded(): void {
    this.state.authenticated = undefined;
  }
}

export function createContext(services: Services, credentials: Credentials, requestId: string, address = '', live?: LiveSocket): Context {
  return new RequestContext(services, credentials, requestId, address, live);
}
