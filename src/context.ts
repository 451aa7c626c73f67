// The per-request context, built the same way for GraphQL and for the REST
// shim: the request id, the services, and the caller, resolved from the
// credential headers on first use (so that introspection needs none) and then
// memoised for the rest of the request.
import type { Caller, Credentials, Services } from './services';

export interface Context {
  readonly requestId: string;
  readonly services: Services;
  /** Checks the request's credentials once; rejects with an AppError when they fail. */
  caller(): Promise<Caller>;
}

type HeaderValue = string | string[] | undefined;

/** Reads the credential headers. A header sent twice counts as its first value. */
export function credentialsFromHeaders(headers: Record<string, HeaderValue>): Credentials {
  const one = (value: HeaderValue): string | undefined => (Array.isArray(value) ? value[0] : value);
  return {
    token: one(headers['svc-token']),
    authorization: one(headers['authorization']),
    onBehalfOf: one(headers['on-behalf-of']),
  };
}

export function createContext(services: Services, credentials: Credentials, requestId: string): Context {
  let caller: Promise<Caller> | undefined;
  return {
    requestId,
    services,
    caller: () => (caller ??= services.auth.authenticate(credentials)),
  };
}
