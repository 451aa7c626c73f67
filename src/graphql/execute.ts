// Execution of /graphql documents: queries compiled once (graphql-jit, as the
// REST paths' queries are), then run as plain functions, inside Apollo Server;
// mutations always on graphql-js.
//
// Why compiled: the CPU profile of the GraphQL lookup under load
// (BENCHMARKS.md) puts graphql-js's execute (field collection, argument
// coercion, completeValue per field of every request) at the top of the
// service's own frames; a compiled query does that work once per document.
//
// Why never a mutation: graphql-jit runs every root field of a mutation even
// after an earlier non-null one failed, and still answers `data: null` with
// the first error, so a client told "failed" could have had later fields
// committed (issue 17: a later deleteMessages deleted for everyone, a later
// login logged the session in). graphql-js runs mutation fields one after
// another and stops at the first non-null failure, whatever the send. A
// mutation's cost is its writes, not the executor's walk over its small
// answer, so compiling it buys nothing worth that difference.
//
// How it fits in Apollo Server: as the executor of its gateway interface, the
// one documented seam for replacing execution. Everything before execution
// stays Apollo's: parsing, validation (our limits and rules), persisted and
// trusted documents, CSRF prevention, plugins, error formatting and statuses.
//
// What keeps behaviour identical to graphql-js (test/fuzz/differential.test.ts
// sends generated documents to this service and to one that runs everything
// on graphql-js, and compares answers and databases):
// - only queries are compiled: reads in parallel, as graphql-js runs them;
// - variables are coerced by graphql-js first, so a bad variable fails with
//   graphql-js's own message and location (Apollo answers those 400
//   BAD_USER_INPUT by their shape); the compiled query only runs on variables
//   that graphql-js accepted;
// - a document is compiled the second time it is seen, not the first: a
//   client sending ever-new documents pays graphql-js's price, not a
//   compilation per request; compiled documents are kept in a bounded LRU;
// - documents graphql-jit cannot compile, introspection (__schema, __type),
//   documents with @skip or @include (graphql-jit lists a skipped field's
//   location in the errors of a field it merges with, graphql-js does not:
//   found by the differential test), and anything the compiled query refuses
//   fall back to graphql-js.
import type { GatewayExecutor, GatewayInterface } from '@apollo/server-gateway-interface';
import {
  type DocumentNode,
  type ExecutionResult,
  execute,
  getOperationAST,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  printSchema,
  type SelectionSetNode,
  BREAK,
  visit,
} from 'graphql';
import { getVariableValues } from 'graphql/execution/values';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import { LRUCache } from 'lru-cache';
import { inOperationSpan } from '../tracing/spans';

export interface CompiledExecutionOptions {
  /** Compiled documents kept (least recently used dropped first). */
  maxDocuments?: number;
  /** Characters of document text (and keys) the kept entries may hold together. */
  maxDocumentCharacters?: number;
  /** Times a document is seen before it is compiled. */
  compileAfter?: number;
  /** false: every document runs on graphql-js (the reference the differential test compares with). */
  compile?: boolean;
}

/**
 * Whether an operation may run compiled: queries only. The rule of both
 * surfaces (/graphql here, the REST routes in src/rest/register.ts).
 */
export const mayCompile = (operation: OperationDefinitionNode): boolean => operation.operation === 'query';

/**
 * A document (under one operation name): how often it was seen, then either
 * its compiled query with the operation it runs, or that it runs on graphql-js.
 */
type Entry = { seen: number; compiled?: { query: CompiledQuery; operation: OperationDefinitionNode }; fallback?: true; size: number };

/**
 * A compiled document keeps its syntax tree and its text, and graphql-jit
 * writes its literal arguments into the generated code (which V8 keeps
 * besides): 100 documents with a 1.9 MB string argument each held 470 MB.
 * So the cache is bounded by the text it holds as well as by entries, and a
 * document longer than any real operation (they have 11–77 tokens; the
 * introspection query, never compiled, 2 KB) is not compiled at all: it runs
 * on graphql-js, as a document seen once does.
 */
const MAX_DOCUMENT_CHARACTERS = 8 * 1024 * 1024;
const MAX_COMPILED_DOCUMENT_CHARACTERS = 16 * 1024;

/** Counters for tests and metrics: how /graphql documents were executed. */
export interface ExecutionStats {
  /** Answered by a compiled query. */
  compiled: number;
  /** Answered by graphql-js (first sights, mutations, introspection, fallbacks, reruns). */
  interpreted: number;
  /**
   * Compiled queries whose answer was dropped and the document run again on
   * graphql-js (graphql-jit refused variables graphql-js had accepted, before
   * any resolver ran). Only queries compile, so a rerun never repeats a write.
   */
  rerun: number;
}

export function compiledExecution(schema: GraphQLSchema, options: CompiledExecutionOptions = {}): { gateway: GatewayInterface; stats: ExecutionStats } {
  const compileAfter = options.compile === false ? Infinity : (options.compileAfter ?? 2);
  const documents = new LRUCache<string, Entry>({
    max: options.maxDocuments ?? 500,
    maxSize: options.maxDocumentCharacters ?? MAX_DOCUMENT_CHARACTERS,
    sizeCalculation: (entry, key) => key.length + entry.size,
  });
  const stats: ExecutionStats = { compiled: 0, interpreted: 0, rerun: 0 };

  const interpret = (document: DocumentNode, contextValue: unknown, variableValues: Record<string, unknown> | undefined, operationName: string | undefined) => {
    stats.interpreted++;
    return execute({ schema, document, contextValue, variableValues, operationName }) as Promise<ExecutionResult> | ExecutionResult;
  };

  const executor: GatewayExecutor = async (requestContext) => {
    const { document, queryHash, request, context, source } = requestContext;
    const operationName = request.operationName ?? undefined;
    const variables = request.variables ?? undefined;
    // An absent operation name and an empty one are different requests to
    // graphql-js (the empty one names no operation): keyed apart.
    const key = `${queryHash}:${operationName === undefined ? '\u0000' : operationName}`;
    let entry = documents.get(key);
    if (!entry) {
      entry = { seen: 0, size: 0 };
      documents.set(key, entry);
    }
    entry.seen++;
    if (!entry.compiled && !entry.fallback && entry.seen >= compileAfter) {
      const operation = getOperationAST(document, operationName);
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- Apollo's types say source is set by now; a length is needed either way
      const length = source?.length ?? document.loc?.end ?? 0;
      if (
        !operation ||
        length > MAX_COMPILED_DOCUMENT_CHARACTERS ||
        !mayCompile(operation) ||
        selectsIntrospection(document, operation.selectionSet) ||
        hasConditions(document)
      ) {
        entry.fallback = true;
      } else {
        const result = compileQuery(schema, document, operationName);
        if (isCompiledQuery(result)) {
          // A new entry (the cache measures an entry when it is set): its size is now the text it holds.
          entry = { ...entry, compiled: { query: result, operation }, size: length };
          documents.set(key, entry);
        } else entry.fallback = true;
      }
    }
    const compiled = entry.compiled;
    const onGraphqlJs = () => interpret(document, context, variables, operationName);
    if (!compiled) return onGraphqlJs();

    // graphql-js decides whether the variables are acceptable, with its own errors.
    const coerced = getVariableValues(schema, compiled.operation.variableDefinitions ?? [], variables ?? {});
    if (coerced.errors) return onGraphqlJs();
    const result = await inOperationSpan(document, () => compiled.query.query(undefined, context, variables ?? {}));
    // No data at all: graphql-jit refused the variables graphql-js accepted
    // (it never ran a resolver). graphql-js then decides, as everywhere else.
    if (!('data' in result) || result.data === undefined) {
      stats.rerun++;
      return onGraphqlJs();
    }
    stats.compiled++;
    return result.errors ? { ...result, errors: result.errors.map(asGraphQLJsError) } : result;
  };

  const gateway: GatewayInterface = {
    async load() {
      return { executor };
    },
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: printSchema(schema) });
      return () => {};
    },
    async stop() {},
  };
  return { gateway, stats };
}

/**
 * graphql-jit's errors are GraphQLErrors by prototype only: they lack the
 * `extensions` object every graphql-js error has, which Apollo Server's
 * formatting reads. Rebuilt as graphql-js's, with the same message,
 * locations, path and original error.
 */
function asGraphQLJsError(error: GraphQLError): GraphQLError {
  const rebuilt = new GraphQLError(error.message, {
    path: error.path,
    originalError: error.originalError,
    extensions: error.extensions,
  });
  (rebuilt as { locations?: GraphQLError['locations'] }).locations = error.locations;
  return rebuilt;
}

/** Whether the document uses @skip or @include anywhere. */
function hasConditions(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Directive(node) {
      if (node.name.value === 'skip' || node.name.value === 'include') {
        found = true;
        return BREAK;
      }
      return undefined;
    },
  });
  return found;
}

/** Root fields __schema or __type (directly, or through fragments): introspection, left to graphql-js. */
function selectsIntrospection(document: DocumentNode, selectionSet: SelectionSetNode, seen = new Set<string>()): boolean {
  return selectionSet.selections.some((s) => {
    if (s.kind === Kind.FIELD) return s.name.value === '__schema' || s.name.value === '__type';
    if (s.kind === Kind.INLINE_FRAGMENT) return selectsIntrospection(document, s.selectionSet, seen);
    if (seen.has(s.name.value)) return false;
    seen.add(s.name.value);
    const fragment = document.definitions.find((d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === s.name.value);
    return fragment?.kind === Kind.FRAGMENT_DEFINITION && selectsIntrospection(document, fragment.selectionSet, seen);
  });
}
