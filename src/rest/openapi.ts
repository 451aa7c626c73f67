// The OpenAPI 3.1 description of the legacy REST paths, served at
// GET /openapi.json, built from the routes (src/rest/routes/) and the error
// table (src/errors.ts): the paths, methods, parameters, bodies and success
// bodies are the schemas the routes declare, and each route's error statuses
// are the codes it can answer, described and shaped as the error table says.
// test/rest/openapi.test.ts drives every documented status of every route and
// validates the bodies. (@fastify/swagger would build the paths from Fastify's
// route schemas; it is not a dependency: docs/rest.md, "Schemas and validation".)
import type { FastifyInstance } from 'fastify';
import { credentialHeaders, DEFAULT_SESSION_TOKEN_HEADERS } from '../context';
import { ERRORS, type ErrorCode, MESSAGES } from '../errors';
import { PRIVATE_NO_STORE, type PublicDocument, publicDocument, sendDocument } from '../http/caching';
import {
  componentSchemas,
  type Header,
  json,
  type OpenApiDocument,
  type Operation,
  type Parameter,
  type Response,
  ref,
  type Schema,
  type SecurityRequirement,
  type SecurityScheme,
} from './openapi-schema';
import { type Callers, type ParameterSchemas, REST_ROUTES, type RestRoute } from './routes';
import { qbTime, SESSION_EXPIRY_HEADER } from './headers';

export type { OpenApiDocument, Operation, Response } from './openapi-schema';

/** Codes every route can answer: a bad path, the request budgets, a bug, the database. */
const EVERY_ROUTE: ErrorCode[] = ['BAD_REQUEST', 'TOO_MANY_REQUESTS', 'INTERNAL_SERVER_ERROR', 'SERVICE_UNAVAILABLE', 'DATABASE_BUSY', 'DATABASE_TIMEOUT'];

/** What checking the credentials of each kind of route can answer. */
const CREDENTIAL_ERRORS: Record<Callers, ErrorCode[]> = {
  any: ['BAD_REQUEST', 'UNAUTHENTICATED', 'FORBIDDEN', 'APPLICATION_DISABLED'],
  user: ['BAD_REQUEST', 'UNAUTHENTICATED', 'FORBIDDEN', 'APPLICATION_DISABLED'],
  session: ['BAD_REQUEST', 'UNAUTHENTICATED', 'FORBIDDEN', 'APPLICATION_DISABLED'],
  none: [],
};

/** Every code a route can answer, in the error table's order. */
export function errorsOf(route: RestRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>([...EVERY_ROUTE, ...CREDENTIAL_ERRORS[route.callers], ...route.errors]);
  // A body is read (and can be unreadable, too large, of another type, or too
  // slow to arrive) on every method but GET.
  if (route.method !== 'GET') ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'REQUEST_TIMEOUT'].forEach((c) => codes.add(c as ErrorCode));
  // `{name}.json` paths: without the suffix the path is not one of ours.
  if (route.url.endsWith(':file')) codes.add('NOT_FOUND');
  return (Object.keys(ERRORS) as ErrorCode[]).filter((code) => codes.has(code));
}

const SECURITY: Record<Callers, SecurityRequirement[]> = {
  any: [{ SvcToken: [] }, { QbToken: [] }, { ApiKey: [] }, { ApiKey: [], OnBehalfOf: [] }],
  user: [{ SvcToken: [] }, { QbToken: [] }, { ApiKey: [], OnBehalfOf: [] }],
  session: [{ SvcToken: [] }, { QbToken: [] }],
  none: [{}],
};

const securitySchemes: Record<string, SecurityScheme> = {
  SvcToken: {
    type: 'apiKey',
    in: 'header',
    name: 'SVC-Token',
    description: 'A session token: a user session, or an application session (read-only, and refused where a user is needed).',
  },
  QbToken: {
    type: 'apiKey',
    in: 'header',
    name: 'QB-Token',
    description: "The same session token under QuickBlox SDKs' header name (SESSION_TOKEN_HEADERS). One session-token header per request.",
  },
  ApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'An application API key, sent as `Authorization: ApiKey <key>`. Never together with a session token.',
  },
  OnBehalfOf: {
    type: 'apiKey',
    in: 'header',
    name: 'On-Behalf-Of',
    description: "A user id of the API key's application: the request runs as that user. Accepted only with Authorization: ApiKey (with a session token: 400).",
  },
};

/** Messages the table's codes answer with, where they are fixed: they make the descriptions concrete. */
const EXAMPLES: Partial<Record<ErrorCode, string[]>> = {
  BAD_REQUEST: [
    MESSAGES.bothCredentials,
    MESSAGES.severalTokens,
    MESSAGES.onBehalfOfWithoutApiKey,
    `${MESSAGES.malformedBody}: invalid JSON`,
    'Malformed request path',
  ],
  UNAUTHENTICATED: [MESSAGES.noCredentials, MESSAGES.sessionMissing, MESSAGES.malformedAuthorization, MESSAGES.unknownApiKey, MESSAGES.badLogin],
  FORBIDDEN: [MESSAGES.needUser, MESSAGES.onBehalfOfUnknown, MESSAGES.sessionRequired],
  APPLICATION_DISABLED: [MESSAGES.applicationDisabled],
  WRONG_PERMISSIONS: [MESSAGES.wrongPermissions],
  UNKNOWN_APPLICATION: [MESSAGES.unknownApplication],
  INVALID_SIGNATURE: [MESSAGES.invalidSignature],
  NONCE_REUSED: [MESSAGES.nonceReused],
  REQUEST_TIMEOUT: [MESSAGES.requestTimeout],
  INTERNAL_SERVER_ERROR: [MESSAGES.internal],
  SERVICE_UNAVAILABLE: [MESSAGES.databaseUnavailable, MESSAGES.shuttingDown],
  DATABASE_BUSY: [MESSAGES.conflict],
  DATABASE_TIMEOUT: [MESSAGES.databaseTimeout],
  WRITE_OUTCOME_UNKNOWN: [MESSAGES.writeOutcomeUnknown],
};

const describe = (code: ErrorCode): string =>
  `${code}: ${ERRORS[code].meaning}${EXAMPLES[code] ? ` (${EXAMPLES[code].map((m) => JSON.stringify(m)).join(', ')})` : ''}.`;

/** The body of a status in the route's family: the list, or the object shapes its codes take. */
function errorSchema(route: RestRoute, codes: ErrorCode[]): Schema {
  if (route.style === 'list') return ref('ErrorList');
  const shapes: Schema[] = [];
  if (codes.some((c) => ERRORS[c].objectShape === 'base')) shapes.push(ref('BaseError'));
  if (codes.some((c) => ERRORS[c].objectShape === 'field')) shapes.push(ref('FieldError'));
  const coded = codes.filter((c) => ERRORS[c].objectShape === 'code');
  if (coded.length > 0) shapes.push({ allOf: [ref('CodeMessageError'), { type: 'object', properties: { code: { enum: coded } } }] });
  // anyOf: {"errors":{"base":[…]}} is also a FieldError's shape.
  return shapes.length === 1 ? shapes[0]! : { anyOf: shapes };
}

/** Answers to session-token requests carry the session's new expiry (POST /session.json: the new session's). */
const expiryHeader = {
  [SESSION_EXPIRY_HEADER]: {
    description: `When the session of the request's token now expires, in QuickBlox's form (e.g. "${qbTime(new Date(Date.UTC(2026, 10, 23, 20)))}"); present when the request used a session token, or created a session.`,
    schema: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} UTC$' },
  },
} as const;

/**
 * Every answer of a REST path depends on the caller (src/http/caching.ts): no
 * shared cache may keep it. Only a successful GET may sit in the caller's own
 * cache, and only when CACHE_PRIVATE_MAX_AGE_S allows it.
 */
function cachingHeaders(sessionTokenHeaders: readonly string[], browserMayKeep: boolean): Record<string, Header> {
  const vary = credentialHeaders(sessionTokenHeaders).join(', ');
  return {
    'Cache-Control': browserMayKeep
      ? {
          description: `\`${PRIVATE_NO_STORE}\`, or \`private, max-age=N\` when CACHE_PRIVATE_MAX_AGE_S is N: the caller's own cache may keep it that long, no shared cache may.`,
          schema: { type: 'string', pattern: '^private, (no-store|max-age=[0-9]+)$' },
        }
      : { description: 'The answer depends on the credentials: no cache may keep it.', schema: { type: 'string', const: PRIVATE_NO_STORE } },
    Vary: {
      description: `Names the credential headers (\`${vary}\`; with CORS on, \`Origin\` too): a cache must not reuse the answer for a request with other credentials.`,
      schema: { type: 'string' },
    },
  };
}

/** The parameters of one kind: each property of the schema, its description lifted to the parameter. */
function parametersOf(schemas: ParameterSchemas | undefined, where: 'path' | 'query'): Parameter[] {
  return Object.entries(schemas?.properties ?? {}).map(([name, { description, ...schema }]) => ({
    name,
    in: where,
    required: where === 'path' || (schemas?.required?.includes(name) ?? false),
    ...(description === undefined ? {} : { description }),
    schema,
  }));
}

function operationOf(route: RestRoute, sessionTokenHeaders: readonly string[]): Operation {
  const { params, querystring, body, success: declared } = route.schema;
  const responses: Record<string, Response> = {};
  const errorHeaders = cachingHeaders(sessionTokenHeaders, false);
  // Every route either takes a session token or creates a session.
  const success: Response = {
    description: declared.description,
    headers: { ...expiryHeader, ...cachingHeaders(sessionTokenHeaders, route.method === 'GET') },
  };
  if (declared.schema) success.content = json(declared.schema);
  responses[String(declared.status)] = success;
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorsOf(route)) byStatus.set(ERRORS[code].status, [...(byStatus.get(ERRORS[code].status) ?? []), code]);
  for (const [status, codes] of byStatus) {
    responses[String(status)] = {
      description: codes.map(describe).join(' '),
      headers: {
        ...(status === 429 ? { 'Retry-After': { description: 'Seconds until the budget allows the request.', schema: { type: 'integer', minimum: 1 } } } : {}),
        ...(status === 503 ? { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } } } : {}),
        ...errorHeaders,
      },
      content: json(errorSchema(route, codes)),
    };
  }
  const parameters = [...parametersOf(params, 'path'), ...parametersOf(querystring, 'query')];
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    tags: route.tags,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses,
    security: SECURITY[route.callers],
  };
}

export function buildOpenApiDocument(
  routes: readonly RestRoute[] = REST_ROUTES,
  sessionTokenHeaders: readonly string[] = DEFAULT_SESSION_TOKEN_HEADERS,
): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const method = route.method.toLowerCase() as 'get' | 'post' | 'delete';
    paths[route.path] = { ...paths[route.path], [method]: operationOf(route, sessionTokenHeaders) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Chat/user service: legacy REST paths',
      version: '0.2.0',
      description:
        'Message deletion, address-book matching and user lookup by external id, and the session API QuickBlox SDK apps use. Each path executes a GraphQL operation of /graphql (see the README). Credentials: a session token (SVC-Token or QB-Token), or Authorization: ApiKey <key> (optionally with On-Behalf-Of); exactly one.',
    },
    tags: [{ name: 'chat' }, { name: 'address book' }, { name: 'users' }, { name: 'sessions' }],
    paths,
    components: { schemas: componentSchemas(), securitySchemes },
  };
}

export function registerOpenApi(fastify: FastifyInstance, sessionTokenHeaders: readonly string[] = DEFAULT_SESSION_TOKEN_HEADERS): void {
  // Built on its first request, then kept: few instances are ever asked for
  // it, and building it at start (the SDL's types walked into JSON Schema,
  // then serialised and hashed) was garbage that start-up left in V8's young
  // generation, resident until a collection that an idle service may never run.
  // It depends on nothing but the code and the header names, which
  // loadConfig has checked: nothing that could fail at start fails later.
  let document: PublicDocument | undefined;
  fastify.get('/openapi.json', async (request, reply) =>
    sendDocument(
      request,
      reply,
      (document ??= publicDocument(JSON.stringify(buildOpenApiDocument(REST_ROUTES, sessionTokenHeaders)), 'application/json; charset=utf-8')),
    ),
  );
}
