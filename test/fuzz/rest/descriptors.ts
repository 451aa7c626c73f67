// What the REST fuzz test (test/fuzz/http.test.ts) generates, shrinks and
// prints: request descriptors. Large parts are Repeat descriptors,
// materialized only when sent, so a counterexample stays readable. The
// arbitraries of each route family are in this folder beside it.
import fc from 'fast-check';
import {
  type Credentials,
  type HeaderValue,
  type LoginSpec,
  materialize,
  type Repeat,
  type SessionEncoding,
  type SessionSpec,
  type Text,
  textLength,
} from '../../support/fuzz';

export type Route = 'delete' | 'registered' | 'upload' | 'addressBook' | 'lookup' | 'createSession' | 'session' | 'endSession' | 'login' | 'logout' | 'unknown';
export type KnownRoute = Exclude<Route, 'unknown'>;

export type Body =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown; contentType: string | undefined }
  | { kind: 'text'; text: Text; contentType: string | undefined }
  | { kind: 'bytes'; bytes: number[]; contentType: string | undefined }
  | { kind: 'form'; pairs: [string, string][]; contentType: string | undefined }
  | { kind: 'deep'; depth: number; open: '[' | '{"a":'; at: 'top' | 'contacts' | 'force' | 'udid' | 'name'; contentType: string | undefined }
  | { kind: 'large'; size: number; json: boolean; contentType: string | undefined }
  | { kind: 'manyContacts'; count: number; contentType: string | undefined }
  /** A session request, signed when sent. */
  | { kind: 'session'; spec: SessionSpec; encoding: SessionEncoding }
  /** The last session request that created a session, sent again byte for byte. */
  | { kind: 'replay' }
  | { kind: 'login'; spec: LoginSpec; form: boolean };

/**
 * GET /address_book.json's query: `?udid=…`, none, the JSON object QuickBlox's
 * JavaScript SDK sends in place of a query string (`?{"udid":"…"}`, as a
 * browser's fetch or, under Node, the SDK's node-fetch 2 writes it), or other
 * text in that form.
 */
export type BookQuery =
  | { form: 'query string'; udid: string }
  | { form: 'none' }
  | { form: 'json'; udid: string; client: 'fetch' | 'node-fetch' }
  | { form: 'json text'; text: string };

export interface RequestDescriptor {
  route: Route;
  method: string;
  /** Path without the query string, percent-encoded, in parts (concatenated when sent; the first is the route's prefix). */
  path: PathPart[];
  query: string;
  /** GET /address_book.json only: its query, in place of `query`. */
  book?: BookQuery;
  credentials: Credentials;
  extraHeaders: [string, HeaderValue | Repeat][];
  body: Body;
}

/** A piece of a path: text, a repeated unit, or `hexIds` distinct well-formed message ids joined by commas. */
export type PathPart = Text | { hexIds: number };

export const partText = (part: PathPart): string =>
  typeof part === 'object' && 'hexIds' in part
    ? Array.from({ length: part.hexIds }, (_, i) => `f${i.toString(16).padStart(23, '0')}`).join(',')
    : materialize(part);

export const partLength = (part: PathPart): number => (typeof part === 'object' && 'hexIds' in part ? part.hexIds * 25 : textLength(part));

/** Paths stay under this many characters, so that the request line and headers fit the 64 KiB limit with headers. */
export const PATH_BUDGET = 48 * 1024;

/** The path as sent: the largest repeated parts trimmed to the budget. */
export function pathOf(parts: PathPart[]): string {
  const trimmed = parts.map((p) => (typeof p === 'object' ? { ...p } : p));
  for (let over = trimmed.reduce((n, p) => n + partLength(p), 0) - PATH_BUDGET; over > 0; over = trimmed.reduce((n, p) => n + partLength(p), 0) - PATH_BUDGET) {
    const repeats = trimmed.filter((p): p is Repeat => typeof p === 'object' && 'repeat' in p && p.times > 0);
    if (repeats.length === 0) break;
    const largest = repeats.reduce((x, y) => (textLength(x) >= textLength(y) ? x : y));
    largest.times = Math.max(0, largest.times - Math.ceil(over / largest.repeat.length));
  }
  return trimmed.map(partText).join('');
}

export const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'] as const;

/** Each route: its path (the first part of a descriptor's path), method, and error family (docs/errors.md, Errors; Sessions). */
export const ROUTES: Record<KnownRoute, { path: string; method: string; family: 'list' | 'object' | 'session' }> = {
  delete: { path: '/chat/Message/', method: 'DELETE', family: 'list' },
  registered: { path: '/address_book/registered_users.json', method: 'GET', family: 'list' },
  upload: { path: '/address_book.json', method: 'POST', family: 'list' },
  addressBook: { path: '/address_book.json', method: 'GET', family: 'list' },
  lookup: { path: '/users/external/', method: 'GET', family: 'object' },
  createSession: { path: '/session.json', method: 'POST', family: 'session' },
  session: { path: '/session.json', method: 'GET', family: 'session' },
  endSession: { path: '/session.json', method: 'DELETE', family: 'session' },
  login: { path: '/login.json', method: 'POST', family: 'session' },
  logout: { path: '/login.json', method: 'DELETE', family: 'session' },
};
export const KNOWN_ROUTES = Object.keys(ROUTES) as KnownRoute[];

/** Paths that are not the REST surface (ops endpoints, GraphQL, the explorer): never generated as "unknown". */
export const NOT_REST = /^\/(?:healthz|readyz|metrics|openapi\.json|playground|graphql)(?:[/?#]|$)/;

/** Percent-encoded path material: every character outside 0x21–0x7e is escaped (node:http and the HTTP parser refuse raw ones). */
export const enc = (s: string): string => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Encoded segments with meaning to a router, a decoder or SQL. */
export const SPECIAL_SEGMENTS = [
  '',
  '.',
  '..',
  '%2E%2E',
  '%00',
  '%2C',
  '%2F',
  '%5C',
  '%20',
  '%25',
  '%27',
  '%22',
  '%3B',
  '%3F',
  '%23',
  '+',
  '*',
  '~',
  '-',
  '%E2%80%99',
  '%EF%BF%BF',
  '%F0%9F%92%A9',
  '%C3%A9',
  "'",
  '%2527',
  'null',
  'undefined',
  'NaN',
  '__proto__',
  'constructor',
  // Not valid percent-encoding (400 "Malformed request path").
  '%zz',
  '%',
  '%FF',
  '%C0%AE',
  '%E0%A4%A',
  '1%',
];

/** The `.json` after a path's last segment, and what may stand in its place. */
export const jsonSuffix = fc.oneof(
  { weight: 8, arbitrary: fc.constant('.json') },
  { weight: 1, arbitrary: fc.constantFrom('', '.JSON', '.json.json', '.xml', '%2Ejson', '.json/', '.json%00') },
);
