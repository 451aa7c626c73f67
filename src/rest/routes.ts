// The legacy REST paths. Each executes one GraphQL operation from
// src/rest/operations against the same schema, resolvers and per-request
// context as /graphql: this file only translates HTTP in (path, query, body →
// variables) and out (result → the spec's JSON, errors → status and shape).
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type DocumentNode, GraphQLError, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import {
  RestDeleteMessagesDocument,
  RestRegisteredUsersCompactDocument,
  RestRegisteredUsersDocument,
  RestUploadAddressBookDocument,
  RestUserByExternalIdDocument,
} from '../__generated__/graphql';
import { createContext, credentialsFromHeaders, type Context } from '../context';
import { AppError, MESSAGES, badInput, toAppError } from '../errors';
import { operationLabel } from '../http/observability';
import type { Services } from '../services';
import { EXTERNAL_USER_ID_RULE, LIMITS } from '../services/validate';
import type { ErrorStyle } from './respond';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which of the spec's error shapes the route answers with. */
    errorStyle?: ErrorStyle;
  }
}

type Params = { file: string };
type Query = Record<string, string | string[] | undefined>;

export function registerRestRoutes(app: FastifyInstance, schema: GraphQLSchema, services: Services): void {
  // Each operation is compiled once (graphql-jit) against the same schema and
  // resolvers as /graphql: the same execution, without re-walking the
  // document on every request.
  const compiled = new Map<DocumentNode, CompiledQuery>();
  function compiledOf(document: DocumentNode): CompiledQuery {
    let query = compiled.get(document);
    if (!query) {
      const result = compileQuery(schema, document);
      if (!isCompiledQuery(result)) throw new Error(`REST operation does not compile: ${result.errors?.[0]?.message}`);
      query = result;
      compiled.set(document, query);
    }
    return query;
  }

  // Compiled at start: a document that does not fit the schema stops the service.
  for (const document of [
    RestDeleteMessagesDocument,
    RestRegisteredUsersDocument,
    RestRegisteredUsersCompactDocument,
    RestUploadAddressBookDocument,
    RestUserByExternalIdDocument,
  ]) {
    compiledOf(document);
  }

  async function run<TData, TVariables>(
    request: FastifyRequest,
    document: TypedDocumentNode<TData, TVariables>,
    variables: TVariables,
  ): Promise<TData> {
    request.operation = labelOf(document);
    const context: Context = createContext(services, credentialsFromHeaders(request.headers), request.id);
    const result = await compiledOf(document).query(undefined, context, variables as Record<string, unknown>);
    if (result.errors?.length) throw fromGraphQLError(result.errors[0]!);
    return result.data as TData;
  }

  app.delete<{ Params: Params; Querystring: Query }>(
    '/chat/Message/:file',
    { config: { errorStyle: 'list' } },
    async (request, reply) => {
      const ids = jsonFile(request.params.file).split(',');
      const body = bodyObject(request.body);
      const force = flag('force', body.force ?? single('force', request.query.force));
      const { result } = await run(request, RestDeleteMessagesDocument, { ids, force });
      return reply.send({
        SuccessfullyDeleted: { ids: result.successfullyDeleted },
        NotFound: { ids: result.notFound },
      });
    },
  );

  app.get<{ Querystring: Query }>(
    '/address_book/registered_users.json',
    { config: { errorStyle: 'list' } },
    async (request, reply) => {
      const udid = single('udid', request.query.udid) ?? null;
      const compact = flag('compact', single('compact', request.query.compact));
      // force is the upload's replace flag; on this read it is checked and has no effect.
      flag('force', single('force', request.query.force));
      const document = compact ? RestRegisteredUsersCompactDocument : RestRegisteredUsersDocument;
      const { users } = await run(request, document, { udid });
      return reply.send({ items: users.map((user) => ({ user })) });
    },
  );

  app.post<{ Querystring: Query }>('/address_book.json', { config: { errorStyle: 'list' } }, async (request, reply) => {
    const body = bodyObject(request.body);
    // GraphQL would take a lone object for a one-item list; JSON clients mean a list.
    if (!Array.isArray(body.contacts)) throw badInput('contacts', 'contacts must be a list of {name, phone}');
    const { result } = await run(request, RestUploadAddressBookDocument, {
      contacts: body.contacts as never,
      udid: (body.udid ?? null) as string | null,
      force: flag('force', body.force),
    });
    return reply.send(result);
  });

  app.get<{ Params: Params }>('/users/external/:file', { config: { errorStyle: 'object' } }, async (request, reply) => {
    const externalUserId = integer('externalUserId', jsonFile(request.params.file));
    const { user } = await run(request, RestUserByExternalIdDocument, { externalUserId });
    return reply.send({ user });
  });
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

/**
 * A resolver's error as thrown. graphql-js's own errors (which may wrap
 * further GraphQLErrors) can only be variables of the wrong type here: the
 * documents are fixed and valid.
 */
function fromGraphQLError(error: GraphQLError): AppError {
  const original = error.originalError;
  if (original && !(original instanceof GraphQLError)) return toAppError(original);
  const variable = /^Variable "\$(\w+)"/.exec(error.message)?.[1];
  return badInput(variable ?? 'base', error.message);
}

class RouteNotFound extends AppError {
  constructor() {
    super('NOT_FOUND', 'Not found');
  }
}

/** `{name}.json` → name; a path without the suffix is not one of ours. */
function jsonFile(file: string): string {
  if (!file.endsWith('.json')) throw new RouteNotFound();
  return file.slice(0, -'.json'.length);
}

function single(name: string, value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) throw badInput(name, `${name} must be given once`);
  return value;
}

/** The spec's 0/1 integer flags, from JSON (numbers) or query and form strings. */
function flag(name: string, value: unknown): boolean | null {
  if (value === undefined || value === null) return null;
  if (value === 1 || value === '1') return true;
  if (value === 0 || value === '0') return false;
  throw badInput(name, `${name} must be 0 or 1`);
}

/** Path integers, within GraphQL's Int; their range rule is the service's. */
function integer(name: string, value: string): number {
  const n = /^-?[0-9]{1,10}$/.test(value) ? Number(value) : NaN;
  if (!(Math.abs(n) <= LIMITS.externalUserIdMax)) {
    throw badInput(name, EXTERNAL_USER_ID_RULE);
  }
  return n;
}

function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('BAD_REQUEST', `${MESSAGES.malformedBody}: expected a JSON object`);
  return body as Record<string, unknown>;
}

export function isRouteNotFound(error: unknown): boolean {
  return error instanceof RouteNotFound;
}

