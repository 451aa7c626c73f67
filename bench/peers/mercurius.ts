// A peer of the benchmark: Mercurius (Fastify's GraphQL server) with
// graphql-jit, answering the GraphQL lookup the benchmark sends the service
// (`userByExternalId`, all 19 fields) over the same database, with the same
// credential check as the baseline (bench/peers/lookup.ts). What the fastest
// Node GraphQL server makes of the same work (issue 18's reference: the
// service's GraphQL lookup ≥ 0.85 of it).
//
// Not a second implementation: only this one query, only SVC-Token session
// tokens; credential failures are GraphQL errors without the service's codes.
//
// Environment: DATABASE_URL (required), PORT (0), HOST (127.0.0.1),
// DB_POOL_MAX (10). Prints {"msg":"listening","address":…}; GET /healthz.
import Fastify from 'fastify';
import mercurius from 'mercurius';
import { type Headers, LOOKUP_SCHEMA, lookupResolvers, serve } from './lookup';

const { resolvers, pool, counter } = lookupResolvers((ctx: { reply: { request: { headers: Headers } } }) => ctx.reply.request.headers);

const app = Fastify({ logger: false });
// jit: 1 compiles a document the second time it is seen (graphql-jit), as the service does.
void app.register(mercurius, { schema: LOOKUP_SCHEMA, resolvers, jit: 1, graphiql: false });
serve(app, pool, counter).catch((error: unknown) => {
  process.stderr.write(`mercurius peer: ${String(error)}\n`);
  process.exit(1);
});
