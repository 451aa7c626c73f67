// A peer of the benchmark: Apollo Server 5 on Fastify through
// @as-integrations/fastify doing the GraphQL lookup Mercurius does
// (bench/peers/lookup.ts: the same schema, resolver and statement), with
// Apollo's default plugins that do per-request work turned off as the service
// turns them off, and queries compiled (graphql-jit) through the gateway
// seam with the service's own executor (src/graphql/execute.ts), as Mercurius
// compiles them. What Apollo Server itself makes of the lookup with nothing
// of the service around it (no security headers, logs, metrics, limits or
// rate limits): the ceiling of issue 18's GraphQL goals under "still Apollo
// Server 5".
//
// Environment: DATABASE_URL (required), PORT (0), HOST (127.0.0.1),
// DB_POOL_MAX (10). Prints {"msg":"listening",…}; GET /healthz.
import { ApolloServer } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import fastifyApollo, { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import { makeExecutableSchema } from '@graphql-tools/schema';
import Fastify, { type FastifyRequest } from 'fastify';
import { compiledExecution } from '../../src/graphql/execute';
import { type Headers, LOOKUP_SCHEMA, lookupResolvers, serve } from './lookup';

interface Context {
  headers: Headers;
}

async function main(): Promise<void> {
  const { resolvers, pool, counter } = lookupResolvers((context: Context) => context.headers);
  const schema = makeExecutableSchema({ typeDefs: LOOKUP_SCHEMA, resolvers });
  const app = Fastify({ logger: false });
  const plugins = [
    fastifyApolloDrainPlugin(app),
    ApolloServerPluginLandingPageDisabled(),
    ApolloServerPluginCacheControlDisabled(),
    ApolloServerPluginInlineTraceDisabled(),
  ];
  const apollo = new ApolloServer<Context>({ gateway: compiledExecution(schema).gateway, plugins });
  await apollo.start();
  await app.register(fastifyApollo(apollo), { path: '/graphql', context: async (request: FastifyRequest) => ({ headers: request.headers }) });
  await serve(app, pool, counter);
}

main().catch((error: unknown) => {
  process.stderr.write(`apollo-lookup peer: ${String(error)}\n`);
  process.exit(1);
});
