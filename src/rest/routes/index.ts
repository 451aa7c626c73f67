// Every legacy REST route, by domain: one file per domain of the GraphQL
// operations they run (src/rest/operations/<domain>.graphql). The order is
// the OpenAPI document's.
import { ADDRESS_BOOK_ROUTES } from './address-book';
import { CHAT_ROUTES } from './chat';
import type { RestRoute } from './route';
import { SESSION_ROUTES } from './session';
import { USER_ROUTES } from './user';

export type { Callers, ParameterSchemas, RestRoute } from './route';

export const REST_ROUTES: readonly RestRoute[] = [...CHAT_ROUTES, ...ADDRESS_BOOK_ROUTES, ...USER_ROUTES, ...SESSION_ROUTES];

/** The error family of a path, whatever the method (for paths no route took, or took for another method). */
export function styleOfPath(path: string): 'list' | 'object' {
  const route = REST_ROUTES.find((r) => (r.url.endsWith(':file') ? path.startsWith(r.url.slice(0, -':file'.length)) : r.url === path));
  return route?.style ?? 'list';
}
