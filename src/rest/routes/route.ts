// What a legacy REST route is. Each route executes GraphQL operations from
// src/rest/operations against the same schema, resolvers and per-request
// context as /graphql: it only translates HTTP in (path, query, body →
// variables, src/rest/parse.ts) and out (result → the spec's JSON). It
// declares its inputs and its success once, as JSON Schema, beside its
// callers and its own failures: the OpenAPI document (src/rest/openapi.ts) is
// built from these declarations and the error table, so a path, a method, a
// parameter, an error a route can answer or its shape cannot drift from what
// is served. The services stay the one validator of values (docs/rest.md,
// "Schemas and validation"): a schema's bounds are read from theirs.
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DocumentNode } from 'graphql';
import type { ErrorCode } from '../../errors';
import type { MediaType, RequestBody, Schema } from '../openapi-schema';
import type { Query } from '../parse';

/** Runs one of the route's operations for the request; rejects with the operation's first error. */
export type Run = <TData, TVariables>(document: TypedDocumentNode<TData, TVariables>, variables: TVariables) => Promise<TData>;

/** Who may call a route: what its credential failures are, and its OpenAPI security. */
export type Callers =
  /** A session token or an API key (with or without On-Behalf-Of). */
  | 'any'
  /** A user: a user session token, or an API key with On-Behalf-Of. */
  | 'user'
  /** A session token of either kind (the operation is on the session itself). */
  | 'session'
  /** Nobody needs credentials (the request creates a session). */
  | 'none';

/** Parameters of one kind (path or query): each property is one, its `description` the parameter's. */
export interface ParameterSchemas {
  type: 'object';
  properties: Record<string, Schema>;
  required?: string[];
}

/** A route's inputs and its success, as JSON Schema (the names of Fastify's route `schema`). */
export interface RouteSchema {
  /** By their names in the OpenAPI path; Fastify's pattern captures each as `:file`, the name with its `.json`. */
  params?: ParameterSchemas;
  querystring?: ParameterSchemas;
  /** By media type: JSON, and the form encoding where legacy clients send one. */
  body?: RequestBody;
  success: { status: 200 | 201; description: string; schema?: Schema };
}

export interface RestRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** Fastify's pattern. A `:file` parameter is `{name}.json`: without the suffix the path is not found. */
  url: string;
  /** The OpenAPI path template. */
  path: string;
  /** Which of the spec's error families the route answers with. */
  style: 'list' | 'object';
  /** The operations it may run (each compiled at start: one that does not fit the schema stops the service). */
  documents: DocumentNode[];
  handle(request: FastifyRequest, reply: FastifyReply, run: Run): Promise<unknown>;
  operationId: string;
  summary: string;
  /** What the schemas cannot say: the behaviour. */
  description: string;
  tags: string[];
  schema: RouteSchema;
  callers: Callers;
  /** Failures of the operation itself; those of credentials, bodies, limits and the database are added by the callers and the route. */
  errors: ErrorCode[];
}

/** A request of a route: its `:file` path segment and its query. */
export type Req = FastifyRequest<{ Params: { file: string }; Querystring: Query }>;

/** Parameters of one kind, none of them required unless named. */
export const parameters = (properties: Record<string, Schema>, required?: string[]): ParameterSchemas => ({
  type: 'object',
  properties,
  ...(required ? { required } : {}),
});

/** A body sent as JSON or as a form (`form`: where the form's values differ, form text being strings). */
export const jsonOrForm = (json: Schema, form: Schema = json, required = true): RequestBody => {
  const content: Record<string, MediaType> = { 'application/json': { schema: json }, 'application/x-www-form-urlencoded': { schema: form } };
  return { required, content };
};
