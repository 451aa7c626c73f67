// Registers the REST routes (src/rest/routes/) on Fastify, each executing its
// GraphQL operations against the same schema, resolvers and per-request
// context as /graphql.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type DocumentNode, type ExecutionResult, execute, getOperationAST, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Context } from '../context';
import { fromExecutionError } from '../http/failures';
import { mayCompile } from '../graphql/execute';
import { operationLabel } from '../http/observability';
import { inOperationSpan } from '../tracing/spans';
import { REST_ROUTES } from './routes';

export type ContextOf = (request: FastifyRequest) => Context;

export interface RestExecutionOptions {
  /** false: every operation runs on graphql-js (the reference the differential test compares with). */
  compile?: boolean;
}

type Runner = (contextValue: Context, variables: Record<string, unknown>) => Promise<ExecutionResult> | ExecutionResult;

export function registerRestRoutes(app: FastifyInstance, schema: GraphQLSchema, contextOf: ContextOf, options: RestExecutionOptions = {}): void {
  // Each query is compiled once (graphql-jit) against the same schema and
  // resolvers as /graphql: the same execution, without re-walking the
  // document on every request. Mutations run on graphql-js, as on /graphql
  // (src/graphql/execute.ts mayCompile: one rule for both surfaces).
  const runners = new Map<DocumentNode, Runner>();
  for (const document of REST_ROUTES.flatMap((route) => route.documents)) {
    const operation = getOperationAST(document);
    if (!operation) throw new Error('REST operation document without exactly one operation');
    if (options.compile === false || !mayCompile(operation)) {
      // instrumentation-graphql sees graphql-js's execute and makes its span.
      runners.set(document, (contextValue, variableValues) => execute({ schema, document, contextValue, variableValues }));
      continue;
    }
    const result = compileQuery(schema, document);
    if (!isCompiledQuery(result)) throw new Error(`REST operation does not compile: ${result.errors?.[0]?.message}`);
    // A compiled query is invisible to instrumentation-graphql: its span is made here.
    runners.set(document, (contextValue, variableValues) => inOperationSpan(document, () => result.query(undefined, contextValue, variableValues)));
  }

  for (const route of REST_ROUTES) {
    app.route({
      method: route.method,
      url: route.url,
      config: { errorStyle: route.style },
      handler: (request, reply) =>
        route.handle(request, reply, async (document, variables) => {
          request.operation = labelOf(document);
          const result = await runners.get(document)!(contextOf(request), variables as Record<string, unknown>);
          if (result.errors?.length) throw fromExecutionError(result.errors[0]!);
          return result.data as never;
        }),
    });
  }
}

const labels = new WeakMap<object, string>();

/** The operation a REST route runs, labelled as /graphql requests are (computed once per document). */
function labelOf(document: DocumentNode): string {
  let label = labels.get(document);
  if (label === undefined) {
    const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
    label = operation ? operationLabel(operation) : '';
    labels.set(document, label);
  }
  return label;
}
