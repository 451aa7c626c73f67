// The OpenAPI 3.1 description of the legacy REST paths, served at
// GET /openapi.json. Response objects use `additionalProperties: false` so that
// test/rest/openapi.test.ts, which validates real responses against this
// document, catches any drift between the two.
import type { FastifyInstance } from 'fastify';
import { MESSAGES } from '../errors';
import { LIMITS } from '../services/validate';

// ---------------------------------------------------------------------------
// The subset of OpenAPI 3.1 this document uses.

/** A JSON Schema (draft 2020-12, OpenAPI 3.1's dialect). */
export interface Schema {
  $ref?: string;
  type?: JsonType | JsonType[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  examples?: unknown[];
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
}

type JsonType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null';

export interface Reference {
  $ref: string;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  description?: string;
  required?: boolean;
  schema: Schema;
}

export interface MediaType {
  schema: Schema;
  examples?: Record<string, { summary?: string; value: unknown }>;
}

export interface RequestBody {
  description?: string;
  required?: boolean;
  content: Record<string, MediaType>;
}

export interface Response {
  description: string;
  content?: Record<string, MediaType>;
}

export type SecurityRequirement = Record<string, string[]>;

export interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: RequestBody;
  responses: Record<string, Response | Reference>;
  security: SecurityRequirement[];
}

export interface PathItem {
  get?: Operation;
  post?: Operation;
  delete?: Operation;
}

export interface SecurityScheme {
  type: 'apiKey';
  in: 'header';
  name: string;
  description: string;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description?: string };
  tags?: { name: string; description?: string }[];
  paths: Record<string, PathItem>;
  components: {
    schemas: Record<string, Schema>;
    securitySchemes: Record<string, SecurityScheme>;
  };
}

// ---------------------------------------------------------------------------
// Building blocks.

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

const nullable = (type: JsonType, extra: Omit<Schema, 'type'> = {}): Schema => ({ type: [type, 'null'], ...extra });

const object = (properties: Record<string, Schema>, description?: string): Schema => ({
  type: 'object',
  ...(description === undefined ? {} : { description }),
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

const json = (schema: Schema): Record<string, MediaType> => ({ 'application/json': { schema } });

/** toISOString(): always milliseconds and Z. */
const TIMESTAMP = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$';
const PHONE = '^\\+?[0-9]{10,15}$';
const FLAG: Schema = { type: 'integer', enum: [0, 1] };

/** The conditions of the README's error table, per status. */
const WHEN = {
  400: `Malformed request: both SVC-Token and Authorization ("${MESSAGES.bothCredentials}"), On-Behalf-Of with SVC-Token ("${MESSAGES.onBehalfOfWithoutApiKey}"), or an unreadable body ("${MESSAGES.malformedBody}: invalid JSON").`,
  401: `Missing or invalid credentials: none sent ("${MESSAGES.noCredentials}"), an unknown or expired session token ("${MESSAGES.sessionMissing}"), an Authorization header that is not "ApiKey <key>" ("${MESSAGES.malformedAuthorization}"), or an unknown API key ("${MESSAGES.unknownApiKey}").`,
  403: `Valid credentials that may not do this: an application session token where a user is needed ("${MESSAGES.needUser}"), an On-Behalf-Of naming no user of the key's application ("${MESSAGES.onBehalfOfUnknown}").`,
  404: 'No route for this path and method (e.g. the path without its ".json" suffix).',
  413: `Request body over 2 MiB ("Request body too large").`,
  415: 'Request body of a content type other than application/json or application/x-www-form-urlencoded ("Unsupported Content-Type: …").',
  422: 'A path, query or body value fails validation; the message names the input.',
  429: 'Too many requests (reserved: this version applies no rate limit).',
  500: `Anything unexpected ("${MESSAGES.internal}"); details only in the service's log.`,
  503: `The database cannot be reached ("${MESSAGES.databaseUnavailable}").`,
} as const;

type ErrorStatus = keyof typeof WHEN;

/** The `{"errors": ["message"]}` family (delete and address book). */
function listErrors(statuses: ErrorStatus[], extra: Partial<Record<ErrorStatus, string>> = {}): Record<string, Response> {
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      { description: `${WHEN[status]}${extra[status] ? ` ${extra[status]}` : ''}`, content: json(ref('ErrorList')) },
    ]),
  );
}

/** 413 and 415 are the table's body errors; GET requests never have their body read. */
const GET_BODY = 'Reserved on this path: the body of a GET request is not read.';

const codeMessage = (code: string): Schema => ({
  allOf: [ref('CodeMessageError'), { type: 'object', properties: { code: { const: code } } }],
});

// ---------------------------------------------------------------------------
// Components.

const schemas: Record<string, Schema> = {
  User: object(
    {
      id: { type: 'integer', minimum: 1 },
      full_name: nullable('string'),
      email: nullable('string'),
      login: { type: 'string', minLength: 1 },
      phone: nullable('string', { pattern: PHONE }),
      website: nullable('string'),
      created_at: { type: 'string', format: 'date-time', pattern: TIMESTAMP, description: 'ISO 8601, UTC.' },
      updated_at: { type: 'string', format: 'date-time', pattern: TIMESTAMP, description: 'ISO 8601, UTC.' },
      last_request_at: nullable('string', {
        format: 'date-time',
        pattern: TIMESTAMP,
        description: 'ISO 8601, UTC; null when the user has made no request.',
      }),
      external_user_id: nullable('integer', { minimum: 1, maximum: LIMITS.externalUserIdMax }),
      facebook_id: nullable('string'),
      twitter_id: nullable('string'),
      blob_id: nullable('integer'),
      custom_data: nullable('string'),
      age_over16: { type: 'boolean' },
      allow_statistics_analysis: { type: 'boolean' },
      allow_sales_activities: { type: 'boolean' },
      parents_contacts: { type: 'string', description: 'Empty string when unset.' },
      user_tags: { type: 'string', description: 'Comma-separated tag list; empty string when unset.' },
    },
    'The user record: all 19 fields are always present. Unset text fields are null, except parents_contacts and user_tags, which are "".',
  ),
  CompactUser: object(
    {
      id: { type: 'integer', minimum: 1 },
      phone: { type: 'string', pattern: PHONE, description: 'The phone that matched a contact.' },
    },
    'The compact form of a user (compact=1).',
  ),
  RegisteredUsers: object(
    { items: { type: 'array', items: object({ user: ref('User') }) } },
    'Full records (compact=0 or absent), ordered by user id, each user once.',
  ),
  RegisteredUsersCompact: object(
    { items: { type: 'array', items: object({ user: ref('CompactUser') }) } },
    'Compact records (compact=1), ordered by user id, each user once.',
  ),
  DeleteResult: object({
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
  UploadResult: object({
    created: { type: 'integer', minimum: 0, description: 'Contacts added.' },
    updated: { type: 'integer', minimum: 0, description: 'Contacts whose name changed.' },
    deleted: { type: 'integer', minimum: 0, description: 'Contacts removed (force=1 only).' },
  }),
  Contact: object({
    name: { type: 'string', maxLength: LIMITS.contactNameLength },
    phone: { type: 'string', pattern: PHONE, description: 'Compared with user phones as an exact string.' },
  }),
  ErrorList: object(
    { errors: { type: 'array', items: { type: 'string' }, minItems: 1 } },
    'Error body of the delete and address-book paths.',
  ),
  LookupBaseError: object(
    { errors: object({ base: { type: 'array', items: { type: 'string' }, minItems: 1 } }) },
    'Credential and permission errors of the user lookup.',
  ),
  LookupExternalIdError: object(
    { errors: object({ external_user_id: { type: 'array', items: { type: 'string' }, minItems: 1 } }) },
    'An external id that is not an integer between 1 and 2147483647.',
  ),
  CodeMessageError: object(
    { code: { type: 'string' }, message: { type: 'string' } },
    'Other errors of the user lookup.',
  ),
};

const securitySchemes: Record<string, SecurityScheme> = {
  SvcToken: {
    type: 'apiKey',
    in: 'header',
    name: 'SVC-Token',
    description: 'A session token: a user session, or an application session (read-only, and refused where a user is needed).',
  },
  ApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'An application API key, sent as `Authorization: ApiKey <key>`. Never together with SVC-Token.',
  },
  OnBehalfOf: {
    type: 'apiKey',
    in: 'header',
    name: 'On-Behalf-Of',
    description: 'A user id of the API key\'s application: the request runs as that user. Accepted only with Authorization: ApiKey (with SVC-Token: 400).',
  },
};

const ANY_CALLER: SecurityRequirement[] = [{ SvcToken: [] }, { ApiKey: [] }, { ApiKey: [], OnBehalfOf: [] }];
const USER_CALLER: SecurityRequirement[] = [{ SvcToken: [] }, { ApiKey: [], OnBehalfOf: [] }];

// ---------------------------------------------------------------------------
// Paths.

const deleteMessages: Operation = {
  operationId: 'deleteMessages',
  summary: 'Delete chat messages for the caller, or for everyone',
  tags: ['chat'],
  description: [
    'Without force the messages are hidden from the caller\'s history only; with force=1 they are deleted for everyone,',
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
      'application/json': {
        schema: {
          type: 'object',
          properties: { force: { enum: [0, 1, '0', '1', null], description: '1: delete for everyone.' } },
        },
      },
      'application/x-www-form-urlencoded': {
        schema: { type: 'object', properties: { force: { type: 'string', enum: ['0', '1'] } } },
      },
    },
  },
  responses: {
    '200': { description: 'Deleted ids and ids not found.', content: json(ref('DeleteResult')) },
    ...listErrors([400, 401, 403, 404, 413, 415, 422, 500, 503], {
      403: 'For this path also "WrongPermissions": force=1 by a user who does not own every dialog, or an API key and messages of another application.',
      422: 'E.g. "ids must not be empty", "at most 1000 ids per call (got N)", "force must be 0 or 1".',
    }),
  },
  security: ANY_CALLER,
};

const registeredUsers: Operation = {
  operationId: 'registeredUsers',
  summary: 'Registered users whose phone is in the caller\'s address book',
  tags: ['address book'],
  description:
    'The users of the caller\'s application whose phone equals the phone of a contact in the caller\'s global address book, or in the book of device `udid`. Needs a user: a user session token, or an API key with On-Behalf-Of.',
  parameters: [
    {
      name: 'udid',
      in: 'query',
      required: false,
      description: 'Device id; absent or empty: the global book.',
      schema: { type: 'string', maxLength: LIMITS.udidLength },
    },
    { name: 'compact', in: 'query', required: false, description: '1: {id, phone} only.', schema: { ...FLAG, default: 0 } },
    { name: 'force', in: 'query', required: false, description: 'Validated; no effect on this read.', schema: FLAG },
  ],
  responses: {
    '200': {
      description: 'Full records (compact=0 or absent) or compact ones (compact=1).',
      content: json({ anyOf: [ref('RegisteredUsers'), ref('RegisteredUsersCompact')] }),
    },
    ...listErrors([400, 401, 403, 404, 413, 415, 422, 500, 503], {
      413: GET_BODY,
      415: GET_BODY,
      422: 'E.g. "udid must be at most 64 characters", "compact must be 0 or 1".',
    }),
  },
  security: USER_CALLER,
};

const uploadAddressBook: Operation = {
  operationId: 'uploadAddressBook',
  summary: 'Upload contacts into the caller\'s address book',
  tags: ['address book'],
  description:
    'Without force contacts are added, or renamed when their phone is already in the book; with force=1 the book becomes exactly the uploaded list. A phone listed twice counts once with its last name. Needs a user: a user session token, or an API key with On-Behalf-Of.',
  requestBody: {
    required: true,
    content: json({
      type: 'object',
      required: ['contacts'],
      properties: {
        contacts: { type: 'array', items: ref('Contact'), maxItems: LIMITS.contactsPerUpload },
        udid: { type: ['string', 'null'], maxLength: LIMITS.udidLength, description: 'Device id; absent, null or empty: the global book.' },
        force: { enum: [0, 1, '0', '1', null], description: '1: replace the book.' },
      },
    }),
  },
  responses: {
    '200': { description: 'Counts of the upload.', content: json(ref('UploadResult')) },
    ...listErrors([400, 401, 403, 404, 413, 415, 422, 500, 503], {
      422: 'E.g. `contacts[0].phone must be 10 to 15 digits with an optional leading "+"`, "contacts must be a list of {name, phone}".',
    }),
  },
  security: USER_CALLER,
};

const userByExternalId: Operation = {
  operationId: 'userByExternalId',
  summary: 'The user of the caller\'s application with this external id',
  tags: ['users'],
  description: 'Needs a user session token or an API key. A user of another application answers exactly like an unknown id.',
  parameters: [
    {
      name: 'external_user_id',
      in: 'path',
      required: true,
      description: 'Any text is accepted in the path; only integers 1…2147483647 are valid (else 422).',
      schema: { type: 'integer', minimum: 1, maximum: LIMITS.externalUserIdMax },
    },
  ],
  responses: {
    '200': { description: 'The user record.', content: json(object({ user: ref('User') })) },
    '400': { description: WHEN[400], content: json(ref('LookupBaseError')) },
    '401': { description: WHEN[401], content: json(ref('LookupBaseError')) },
    '403': { description: WHEN[403], content: json(ref('LookupBaseError')) },
    '404': {
      description: `No user with this external id in the caller's application ("${MESSAGES.userNotFound}"), or no route.`,
      content: json(codeMessage('NOT_FOUND')),
    },
    '413': { description: `${WHEN[413]} ${GET_BODY}`, content: json(codeMessage('PAYLOAD_TOO_LARGE')) },
    '422': { description: WHEN[422], content: json(ref('LookupExternalIdError')) },
    '429': { description: WHEN[429], content: json(codeMessage('TOO_MANY_REQUESTS')) },
    '500': { description: WHEN[500], content: json(codeMessage('INTERNAL_SERVER_ERROR')) },
    '503': { description: WHEN[503], content: json(codeMessage('SERVICE_UNAVAILABLE')) },
  },
  security: ANY_CALLER,
};

export const openApiDocument: OpenApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Chat/user service: legacy REST paths',
    version: '0.1.0',
    description:
      'Message deletion, address-book matching and user lookup by external id. Each path executes a GraphQL operation of /graphql (see the README). Credentials: SVC-Token, or Authorization: ApiKey <key> (optionally with On-Behalf-Of); exactly one of the two.',
  },
  tags: [{ name: 'chat' }, { name: 'address book' }, { name: 'users' }],
  paths: {
    '/chat/Message/{ids}.json': { delete: deleteMessages },
    '/address_book/registered_users.json': { get: registeredUsers },
    '/address_book.json': { post: uploadAddressBook },
    '/users/external/{external_user_id}.json': { get: userByExternalId },
  },
  components: { schemas, securitySchemes },
};

export function registerOpenApi(fastify: FastifyInstance): void {
  const body = JSON.stringify(openApiDocument);
  fastify.get('/openapi.json', async (_request, reply) => reply.type('application/json; charset=utf-8').send(body));
}
