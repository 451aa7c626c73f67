// Apollo Server as the service runs it: the schema through the compiled
// executor, the document limits and cost, trusted documents, the operation
// labels of the metrics, and Apollo's own defaults the service turns off
// (each with its reason below). createApp() starts it and hands it to the
// /graphql route (src/overrides/apollo-route.ts).
import { ApolloServer } from '@apollo/server';
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginInlineTraceDisabled,
  ApolloServerPluginLandingPageDisabled,
} from '@apollo/server/plugin/disabled';
import { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import type { FastifyInstance } from 'fastify';
import { GraphQLError, type GraphQLSchema, type ValidationRule } from 'graphql';
import type { Context } from '../context';
import { formatGraphQLError } from '../http/failures';
import { operationLabelPlugin } from '../http/observability';
import { csrfPreflightHeaders } from '../http/security';
import { rememberApolloQueryHashes } from '../overrides/query-hash';
import { costLimitPlugin } from './cost';
import { compiledExecution } from './execute';
import { graphqlArmor, parseOptions } from './limits';
import { registerTrustedDocuments, type TrustedDocumentsOptions } from './trusted-documents';

/** What Apollo's set-up reads of the app's options. */
export interface ApolloOptions {
  /** Answer introspection queries (default true; off in production). */
  introspection?: boolean | undefined;
  /** Trusted documents on /graphql (default: off, with automatic persisted queries). */
  trustedDocuments?: TrustedDocumentsOptions | undefined;
  /** Run queries compiled (graphql-jit; default true). */
  compiledQueries?: boolean | undefined;
  /** Remember Apollo's hash of each query text (src/overrides/query-hash.ts), unless that override is off. */
  queryHashOverride: boolean;
  /** Headers that carry a session token: a request with one needs no CSRF preflight header of its own. */
  sessionTokenHeaders: readonly string[];
}

/** Apollo Server over the schema, with the service's limits, trusted documents and executor, started. */
export async function startApollo(fastify: FastifyInstance, schema: GraphQLSchema, options: ApolloOptions) {
  const introspection = options.introspection ?? true;
  // Depth, cost, aliases, directives and tokens; batching off.
  const armor = graphqlArmor(introspection);
  const trusted = registerTrustedDocuments(fastify, options.trustedDocuments ?? { mode: 'off' });
  const execution = compiledExecution(schema, { compile: options.compiledQueries ?? true });
  // Apollo's SHA-256 of each request's query text, remembered by text.
  if (options.queryHashOverride) rememberApolloQueryHashes();
  const apollo = new ApolloServer<Context>({
    // The schema comes through the gateway interface with the compiled
    // executor (src/graphql/execute.ts): Apollo parses, validates and formats;
    // execution runs compiled documents.
    gateway: execution.gateway,
    introspection,
    validationRules: [...armor.validationRules, noSubscriptions],
    persistedQueries: trusted.persistedQueries,
    csrfPrevention: { requestHeaders: csrfPreflightHeaders(options.sessionTokenHeaders) },
    parseOptions,
    allowBatchedHttpRequests: false,
    // The explorer page is served by the service itself (Apollo's own landing
    // pages load from a CDN and show nothing offline).
    plugins: [
      fastifyApolloDrainPlugin(fastify),
      ApolloServerPluginLandingPageDisabled(),
      // The schema sets no cache hints, and the cache-control plugin, on by
      // default, wraps every field's resolver to collect them: the compiled
      // documents would then call a resolver for each scalar field of each
      // result instead of reading the property (BENCHMARKS.md).
      ApolloServerPluginCacheControlDisabled(),
      // Apollo adds its inline-trace plugin unless told not to; it traces
      // only a federation subgraph's requests, which this schema is not, but
      // its hook still ran (and made a promise) for every request.
      ApolloServerPluginInlineTraceDisabled(),
      operationLabelPlugin((hash) => trusted.isTrusted(hash)),
      ...armor.plugins,
      trusted.plugin,
      // What the root fields would read or write together, before any resolver runs.
      costLimitPlugin,
    ],
    includeStacktraceInErrorResponses: false,
    formatError: formatGraphQLError(fastify.log),
    // main owns the signals (src/http/lifecycle.ts): Apollo's own handler
    // would stop /graphql at the first SIGTERM, before the drain's delay, and
    // raise the signal again.
    stopOnTerminationSignals: false,
  });
  await apollo.start();
  return { apollo, execution, trusted, armor };
}

/** Subscriptions are served over WebSocket (src/graphql/subscriptions.ts): over HTTP refused in validation (400), not at execution as a server error. */
const noSubscriptions: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (node.operation === 'subscription') {
      context.reportError(new GraphQLError('Subscriptions are served over WebSocket (graphql-transport-ws) on GET /graphql, not over HTTP', { nodes: node }));
    }
  },
});
