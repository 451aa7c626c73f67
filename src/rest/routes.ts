// The legacy REST paths, as one table. Each route executes GraphQL operations
// from src/rest/operations against the same schema, resolvers and per-request
// context as /graphql: a route only translates HTTP in (path, query, body →
// variables, src/rest/parse.ts) and out (result → the spec's JSON). Each also
// describes itself for the OpenAPI document (src/rest/openapi.ts), which is
// built from this table and the error table: a path, a method, a parameter, an
// error a route can answer or its shape cannot drift from what is served.
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type DocumentNode, type ExecutionResult, execute, getOperationAST, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import {
  RestAddressBookDocument,
  RestCreateSessionDocument,
  RestDeleteMessagesDocument,
  RestEndSessionDocument,
  RestLoginDocument,
  RestLogoutDocument,
  RestRegisteredUsersCompactDocument,
  RestRegisteredUsersDocument,
  RestSessionDocument,
  RestUploadAddressBookDocument,
  RestUserByExternalIdDocument,
} from '../__generated__/graphql';
import type { Context } from '../context';
import { badInput, type ErrorCode } from '../errors';
import { fromExecutionError } from '../http/failures';
import { mayCompile } from '../graphql/execute';
import { operationLabel } from '../http/observability';
import { LIMITS } from '../services/validate';
import { qbTime, SESSION_EXPIRY_HEADER } from './headers';
import { FLAG, JSON_FLAG, json, object, type Parameter, ref, type RequestBody, type Schema } from './openapi-schema';
import { bodyObject, contactInput, flag, integer, jsonFile, type Query, qbSession, queryObject, sessionRequest, single, text } from './parse';
import { inOperationSpan } from '../tracing/spans';

/** Runs one of the route's operations for the request; rejects with the operation's first error. */
type Run = <TData, TVariables>(document: TypedDocumentNode<TData, TVariables>, variables: TVariables) => Promise<TData>;

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

export interface RouteDoc {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  parameters?: Parameter[];
  requestBody?: RequestBody;
  success: { status: 200 | 201; description: string; schema?: Schema };
  callers: Callers;
  /** Failures of the operation itself; those of credentials, bodies, limits and the database are added by the callers and the route. */
  errors: ErrorCode[];
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
  doc: RouteDoc;
}

type Params = { file: string };
type Req = FastifyRequest<{ Params: Params; Querystring: Query }>;

const udidParameter: Parameter = {
  name: 'udid',
  in: 'query',
  required: false,
  description: `Device id (at most ${LIMITS.udidLength} characters); absent or empty: the global book.`,
  schema: { type: 'string', maxLength: LIMITS.udidLength },
};

/** A user's credentials; past a maximum (in characters: code points), 422 naming the parameter before any check. */
const credentialProperties = {
  login: { type: 'string', maxLength: LIMITS.loginLength },
  email: { type: 'string', maxLength: LIMITS.emailLength },
  password: { type: 'string', maxLength: LIMITS.passwordLength },
} as const satisfies Record<string, Schema>;

const credentialsBody = (properties: Record<string, Schema>, required: string[]): RequestBody => {
  const schema: Schema = { type: 'object', properties, required };
  return { required: true, content: { 'application/json': { schema }, 'application/x-www-form-urlencoded': { schema } } };
};

export const REST_ROUTES: RestRoute[] = [
  {
    method: 'DELETE',
    url: '/chat/Message/:file',
    path: '/chat/Message/{ids}.json',
    style: 'list',
    documents: [RestDeleteMessagesDocument],
    async handle(request: Req, reply, run) {
      const ids = jsonFile(request.params.file).split(',');
      const body = bodyObject(request.body);
      const force = flag('force', body.force ?? single('force', request.query.force));
      const { result } = await run(RestDeleteMessagesDocument, { ids, force });
      return reply.send({ SuccessfullyDeleted: { ids: result.successfullyDeleted }, NotFound: { ids: result.notFound } });
    },
    doc: {
      operationId: 'deleteMessages',
      summary: 'Delete chat messages for the caller, or for everyone',
      tags: ['chat'],
      description: [
        "Without force the messages are hidden from the caller's history only; with force=1 they are deleted for everyone,",
        'which a user may do only as the owner of every dialog involved (else 403 WrongPermissions). An API key without',
        'On-Behalf-Of deletes for everyone within its application; an application session token is refused.',
        'A request that fails a permission check deletes nothing. force is read from the body (JSON or form) or the',
        'query string; the body wins when both are given.',
      ].join(' '),
      parameters: [
        {
          name: 'ids',
          in: 'path',
          required: true,
          description: `1 to ${LIMITS.idsPerDelete} message ids separated by commas. Ids that name no visible message land in NotFound.`,
          schema: { type: 'string', examples: ['6b01a6fd65149db1d1ea789c,ffffffffffffffffffffffff'] },
        },
        { name: 'force', in: 'query', required: false, description: '1: delete for everyone.', schema: FLAG },
      ],
      requestBody: {
        required: false,
        content: {
          'application/json': { schema: { type: 'object', properties: { force: { ...JSON_FLAG, description: '1: delete for everyone.' } } } },
          'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { force: { type: 'string', enum: ['0', '1'] } } } },
        },
      },
      success: {
        status: 200,
        description: 'Deleted ids and ids not found.',
        schema: object({
          SuccessfullyDeleted: object({ ids: { type: 'array', items: { type: 'string' }, uniqueItems: true } }),
          NotFound: object({
            ids: {
              type: 'array',
              items: { type: 'string' },
              uniqueItems: true,
              description: 'Ids that do not exist, are not visible to the caller, are already deleted or hidden, or are not message ids at all.',
            },
          }),
        }),
      },
      callers: 'any',
      errors: ['WRONG_PERMISSIONS', 'BAD_USER_INPUT', 'WRITE_OUTCOME_UNKNOWN'],
    },
  },
  {
    method: 'GET',
    url: '/address_book/registered_users.json',
    path: '/address_book/registered_users.json',
    style: 'list',
    documents: [RestRegisteredUsersDocument, RestRegisteredUsersCompactDocument],
    async handle(request: Req, reply, run) {
      const udid = single('udid', request.query.udid) ?? null;
      const compact = flag('compact', single('compact', request.query.compact));
      // force is the upload's replace flag; on this read it is checked and has no effect.
      flag('force', single('force', request.query.force));
      const { users } = await run(compact ? RestRegisteredUsersCompactDocument : RestRegisteredUsersDocument, { udid });
      return reply.send({ items: users.map((user) => ({ user })) });
    },
    doc: {
      operationId: 'registeredUsers',
      summary: "Registered users whose phone is in the caller's address book",
      tags: ['address book'],
      description:
        "The users of the caller's application whose phone equals the phone of a contact in the caller's global address book, or in the book of device `udid`, ordered by user id, each once.",
      parameters: [
        udidParameter,
        { name: 'compact', in: 'query', required: false, description: '1: {id, phone} only.', schema: { ...FLAG, default: 0 } },
        { name: 'force', in: 'query', required: false, description: 'Validated; no effect on this read.', schema: FLAG },
      ],
      success: {
        status: 200,
        description: 'Full records (compact=0 or absent) or compact ones (compact=1).',
        schema: {
          anyOf: [
            object({ items: { type: 'array', items: object({ user: ref('User') }) } }),
            object({ items: { type: 'array', items: object({ user: ref('CompactUser') }) } }),
          ],
        },
      },
      callers: 'user',
      errors: ['BAD_USER_INPUT'],
    },
  },
  {
    method: 'POST',
    url: '/address_book.json',
    path: '/address_book.json',
    style: 'list',
    documents: [RestUploadAddressBookDocument],
    async handle(request: Req, reply, run) {
      const body = bodyObject(request.body);
      const { contacts } = body;
      // GraphQL would take a lone object for a one-item list; JSON clients mean a list.
      if (!Array.isArray(contacts)) throw badInput('contacts', 'contacts must be a list of {name, phone}');
      const { result } = await run(RestUploadAddressBookDocument, {
        contacts: contacts.map(contactInput),
        udid: (body.udid ?? null) as string | null,
        force: flag('force', body.force),
      });
      const { rejected, ...counts } = result;
      // QuickBlox's shape: {"rejected": {"<index>": ["reason", …]}}, only when something was.
      if (rejected.length === 0) return reply.send(counts);
      return reply.send({ ...counts, rejected: Object.fromEntries(rejected.map((r) => [String(r.index), r.reasons])) });
    },
    doc: {
      operationId: 'uploadAddressBook',
      summary: "Upload contacts into the caller's address book",
      tags: ['address book'],
      description:
        "Without force contacts are added, or renamed when their phone is already in the book, and those with destroy=1 removed; with force=1 the book becomes exactly the contacts taken. A phone listed twice counts once, as its last entry says. Contacts that fail validation are reported in `rejected` by their index and the others are stored (QuickBlox's behaviour).",
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['contacts'],
          properties: {
            contacts: {
              type: 'array',
              maxItems: LIMITS.contactsPerUpload,
              items: {
                type: 'object',
                description: 'A contact; one failing the rules of Contact is rejected, not the upload. Other keys are ignored.',
                properties: { name: { type: 'string' }, phone: { type: 'string' }, destroy: { ...JSON_FLAG, description: '1: remove this phone.' } },
              },
            },
            udid: { type: ['string', 'null'], maxLength: LIMITS.udidLength, description: 'Device id; absent, null or empty: the global book.' },
            force: { ...JSON_FLAG, description: '1: replace the book.' },
          },
        }),
      },
      success: {
        status: 200,
        description: 'Counts of the upload, and the contacts not taken (only when there are some).',
        schema: {
          type: 'object',
          properties: {
            created: { type: 'integer', minimum: 0, description: 'Contacts added.' },
            updated: { type: 'integer', minimum: 0, description: 'Contacts whose name changed.' },
            deleted: { type: 'integer', minimum: 0, description: 'Contacts removed (destroy, or force=1).' },
            rejected: {
              type: 'object',
              description: 'Index in the upload → why that contact was not taken.',
              propertyNames: { pattern: '^(0|[1-9][0-9]*)$' },
              minProperties: 1,
              additionalProperties: { type: 'array', items: { type: 'string' }, minItems: 1 },
            },
          },
          required: ['created', 'updated', 'deleted'],
          additionalProperties: false,
        },
      },
      callers: 'user',
      errors: ['BAD_USER_INPUT', 'WRITE_OUTCOME_UNKNOWN'],
    },
  },
  {
    method: 'GET',
    url: '/address_book.json',
    path: '/address_book.json',
    style: 'list',
    documents: [RestAddressBookDocument],
    async handle(request: Req, reply, run) {
      const udid = single('udid', queryObject(request).udid) ?? null;
      const { contacts } = await run(RestAddressBookDocument, { udid });
      return reply.send(contacts);
    },
    doc: {
      operationId: 'addressBook',
      summary: "The contacts of the caller's address book",
      tags: ['address book'],
      description:
        'In upload order, as QuickBlox answers them: a bare list. QuickBlox\'s JavaScript SDK sends the query as a JSON object in place of a query string (`?{"udid":"…"}`); that form is read too.',
      parameters: [udidParameter],
      success: { status: 200, description: 'The contacts ([] for an empty book).', schema: { type: 'array', items: ref('Contact') } },
      callers: 'user',
      errors: ['BAD_USER_INPUT'],
    },
  },
  {
    method: 'GET',
    url: '/users/external/:file',
    path: '/users/external/{external_user_id}.json',
    style: 'object',
    documents: [RestUserByExternalIdDocument],
    async handle(request: Req, reply, run) {
      const externalUserId = integer('externalUserId', jsonFile(request.params.file));
      const { user } = await run(RestUserByExternalIdDocument, { externalUserId });
      return reply.send({ user });
    },
    doc: {
      operationId: 'userByExternalId',
      summary: "The user of the caller's application with this external id",
      tags: ['users'],
      description: 'A user of another application answers exactly like an unknown id.',
      parameters: [
        {
          name: 'external_user_id',
          in: 'path',
          required: true,
          description: 'Any text is accepted in the path; only integers 1…2147483647 are valid (else 422).',
          schema: { type: 'integer', minimum: 1, maximum: LIMITS.externalUserIdMax },
        },
      ],
      success: { status: 200, description: 'The user record.', schema: object({ user: ref('User') }) },
      callers: 'any',
      errors: ['BAD_USER_INPUT', 'NOT_FOUND'],
    },
  },
  {
    method: 'POST',
    url: '/session.json',
    path: '/session.json',
    style: 'object',
    documents: [RestCreateSessionDocument],
    async handle(request, reply, run) {
      const { session } = await run(RestCreateSessionDocument, { input: sessionRequest(request.body) });
      reply.header(SESSION_EXPIRY_HEADER, qbTime(new Date(session.expiresAt)));
      return reply.code(201).send({ session: qbSession(session) });
    },
    doc: {
      operationId: 'createSession',
      summary: "Create a session from a request signed with the application's auth secret",
      tags: ['sessions'],
      description:
        "QuickBlox's session request. `signature` is the hex HMAC-SHA1 (or HMAC-SHA256) under the application's auth secret of every other parameter as `key=value` (nested ones as `user[login]=…`), sorted and joined with `&`. With `user[login]` or `user[email]` (or both, as the Android SDK sends them: found by login, the email must be that user's) and `user[password]` the session is that user's. A refused request stores nothing.",
      requestBody: (() => {
        const properties: Record<string, Schema> = {
          application_id: { type: ['integer', 'string'] },
          auth_key: { type: 'string', maxLength: LIMITS.authKeyLength },
          timestamp: { type: ['integer', 'string'], description: "Unix seconds, within SESSION_TIMESTAMP_WINDOW_S (an hour) of the server's clock." },
          nonce: {
            type: ['integer', 'string'],
            maxLength: LIMITS.nonceLength,
            description: `Never the same twice with the same timestamp; 1 to ${LIMITS.nonceLength} printable characters.`,
          },
          signature: {
            type: 'string',
            pattern: '^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$',
            description: `Over ${LIMITS.signatureLength} characters: 422 naming it; any other wrong one: 422 "Unexpected signature".`,
          },
        };
        const required = Object.keys(properties);
        const user = credentialProperties;
        const form: Schema = {
          type: 'object',
          properties: { ...properties, ...Object.fromEntries(Object.entries(user).map(([k, v]) => [`user[${k}]`, v])) },
          required,
          additionalProperties: false,
        };
        return {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', properties: { ...properties, user: { type: 'object', properties: user } }, required, additionalProperties: false },
            },
            'application/x-www-form-urlencoded': { schema: form },
          },
        };
      })(),
      success: { status: 201, description: 'The new session, its token included.', schema: object({ session: ref('Session') }) },
      callers: 'none',
      errors: [
        'BAD_USER_INPUT',
        'UNKNOWN_APPLICATION',
        'INVALID_SIGNATURE',
        'TIMESTAMP_OUT_OF_WINDOW',
        'NONCE_REUSED',
        'UNAUTHENTICATED',
        'WRITE_OUTCOME_UNKNOWN',
      ],
    },
  },
  {
    method: 'GET',
    url: '/session.json',
    path: '/session.json',
    style: 'object',
    documents: [RestSessionDocument],
    async handle(_request, reply, run) {
      const { session } = await run(RestSessionDocument, {});
      return reply.send({ session: qbSession(session) });
    },
    doc: {
      operationId: 'session',
      summary: "The request's session",
      tags: ['sessions'],
      description: 'In the shape POST /session.json answers, its token included.',
      success: { status: 200, description: 'The session.', schema: object({ session: ref('Session') }) },
      callers: 'session',
      errors: [],
    },
  },
  {
    method: 'DELETE',
    url: '/session.json',
    path: '/session.json',
    style: 'object',
    documents: [RestEndSessionDocument],
    async handle(_request, reply, run) {
      await run(RestEndSessionDocument, {});
      // QuickBlox answers with an empty 200: its SDKs read it as text and accept no 204.
      return reply.send();
    },
    doc: {
      operationId: 'endSession',
      summary: "End the request's session",
      tags: ['sessions'],
      description: 'Its token is refused from then on.',
      success: { status: 200, description: 'Ended; an empty body.' },
      callers: 'session',
      errors: ['WRITE_OUTCOME_UNKNOWN'],
    },
  },
  {
    method: 'POST',
    url: '/login.json',
    path: '/login.json',
    style: 'object',
    documents: [RestLoginDocument],
    async handle(request, reply, run) {
      const body = bodyObject(request.body);
      const { user } = await run(RestLoginDocument, {
        login: text('login', body.login),
        email: text('email', body.email),
        password: text('password', body.password),
      });
      return reply.send({ user });
    },
    doc: {
      operationId: 'login',
      summary: "Make the request's session the session of a user",
      tags: ['sessions'],
      description: "Login (or email) and password; the answer is that user's record. Wrong credentials and too many failures answer as for POST /session.json.",
      requestBody: credentialsBody(credentialProperties, ['password']),
      success: { status: 200, description: 'The user the session now belongs to.', schema: object({ user: ref('User') }) },
      callers: 'session',
      errors: ['BAD_USER_INPUT', 'UNAUTHENTICATED', 'WRITE_OUTCOME_UNKNOWN'],
    },
  },
  {
    method: 'DELETE',
    url: '/login.json',
    path: '/login.json',
    style: 'object',
    documents: [RestLogoutDocument],
    async handle(_request, reply, run) {
      await run(RestLogoutDocument, {});
      return reply.send();
    },
    doc: {
      operationId: 'logout',
      summary: "Make the request's session an application session again",
      tags: ['sessions'],
      description: 'A no-op for an application session.',
      success: { status: 200, description: 'Done; an empty body.' },
      callers: 'session',
      errors: ['WRITE_OUTCOME_UNKNOWN'],
    },
  },
];

/** The error family of a path, whatever the method (for paths no route took, or took for another method). */
export function styleOfPath(path: string): 'list' | 'object' {
  const route = REST_ROUTES.find((r) => (r.url.endsWith(':file') ? path.startsWith(r.url.slice(0, -':file'.length)) : r.url === path));
  return route?.style ?? 'list';
}

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
