// /graphql's route: Apollo Server's own HTTP entry point
// (executeHTTPGraphQLRequest) called as @as-integrations/fastify's handler
// calls it, with the request handed over for less. The integration's handler
// parses a `new URL(request.url, …)` on every request for its query string
// and copies the headers through Object.entries; here the query string is
// cut from the URL as sent and the headers are copied in place
// (BENCHMARKS.md, "Lookups and the GraphQL pipeline"). The rest is the same:
// the methods, the headers
// and status Apollo answers with, a complete body as a string, an incremental
// one streamed. The integration's drain plugin is still used (src/graphql/apollo.ts).
import { Readable } from 'node:stream';
import { type ApolloServer, type BaseContext, HeaderMap, type HTTPGraphQLRequest } from '@apollo/server';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, MESSAGES } from '../errors';

/** `own` false (DEPENDENCY_OVERRIDES_OFF=apollo-route): the integration's own handler, on the same routes. */
export function registerApolloRoute<TContext extends BaseContext>(
  fastify: FastifyInstance,
  apollo: ApolloServer<TContext>,
  path: string,
  context: (request: FastifyRequest, reply: FastifyReply) => Promise<TContext>,
  own = true,
): void {
  apollo.assertStarted('registerApolloRoute()');
  const handler = own ? ownHandler(apollo, context) : fastifyApolloHandler(apollo, { context });
  // GET on a route of its own: a WebSocket upgrade of it is served by
  // graphql-ws (src/graphql/subscriptions.ts gives it a wsHandler), which
  // @fastify/websocket allows on a GET-only route.
  fastify.route({ method: 'GET', url: path, handler });
  fastify.route({ method: ['POST', 'OPTIONS'], url: path, handler });
}

function ownHandler<TContext extends BaseContext>(
  apollo: ApolloServer<TContext>,
  context: (request: FastifyRequest, reply: FastifyReply) => Promise<TContext>,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const response = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: graphQLRequestOf(request),
      context: () => context(request, reply),
    });
    for (const [name, value] of response.headers) reply.header(name, value);
    reply.code(response.status ?? 200);
    if (response.body.kind === 'complete') return response.body.string;
    return reply.send(Readable.from(response.body.asyncIterator));
  };
}

/** What Apollo reads of a request: method, headers (repeated ones joined), query string, parsed body. */
export function graphQLRequestOf(request: FastifyRequest): HTTPGraphQLRequest {
  const headers = new HeaderMap();
  const sent = request.headers;
  for (const name in sent) {
    const value = sent[name];
    // As the integration: empty values are left out.
    if (value) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const search = searchOf(request.url);
  if (search !== '') refuseRepeated(new URLSearchParams(search));
  return { method: request.method.toUpperCase(), headers, search, body: request.body };
}

/**
 * /graphql's query-string parameters, read once as Apollo reads them
 * (URLSearchParams over searchOf): the trust check and the persisted-query
 * check read these, never the router's own parse, so that what is checked is
 * what runs. A parameter sent twice is refused (400): readers disagree on
 * which one counts (issue 31).
 */
export function graphQLParameters(url: string): URLSearchParams {
  const params = new URLSearchParams(searchOf(url));
  refuseRepeated(params);
  return params;
}

function refuseRepeated(params: URLSearchParams): void {
  if (params.size < 2) return;
  const seen = new Set<string>();
  for (const name of params.keys()) {
    if (seen.has(name)) throw new AppError('BAD_REQUEST', `Parameter ${JSON.stringify(name.slice(0, 64))} ${MESSAGES.repeatedParameter}`);
    seen.add(name);
  }
}

/**
 * `new URL(url, base).search`, for what Apollo makes of it (URLSearchParams):
 * from the first `?` before any `#` to that `#` or the end; nothing when
 * there is no query. For visible ASCII, URLSearchParams then reads the same
 * parameters from it as from URL's (checked over random targets).
 */
export function searchOf(url: string): string {
  const hash = url.indexOf('#');
  const end = hash < 0 ? url.length : hash;
  const question = url.indexOf('?');
  if (question < 0 || question >= end) return '';
  const search = url.slice(question, end);
  // Anything but visible ASCII (not valid in a request target, but Node may
  // pass it): URL's own encoding decides, as it did.
  if (NOT_VISIBLE_ASCII.test(search)) return new URL(url, 'http://localhost/').search;
  return search === '?' ? '' : search;
}

const NOT_VISIBLE_ASCII = /[^\x21-\x7e]/;
