// The pieces the OpenAPI document of the REST paths is made of: the subset of
// OpenAPI 3.1 it uses, helpers to write JSON Schemas, and the component
// schemas. Records (the user, the session) are derived from the GraphQL
// fragments the REST paths select them with and from the SDL's field types,
// so a field added, renamed or made nullable there shows here too.
import {
  buildSchema as buildSdl,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  getNullableType,
  isNonNullType,
  isScalarType,
  type DocumentNode,
} from 'graphql';
import { UserRecordFragmentDoc } from '../__generated__/graphql';
import { loadTypeDefs } from '../graphql/schema';
import { INT32_MAX, LIMITS, PHONE_PATTERN } from '../services/validate';
import { FLAG_VALUES } from './parse';

// ---------------------------------------------------------------------------
// The subset of OpenAPI 3.1 the document uses.

/** A JSON Schema (draft 2020-12, OpenAPI 3.1's dialect). */
export interface Schema {
  $ref?: string;
  type?: JsonType | JsonType[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  propertyNames?: Schema;
  minProperties?: number;
  maxProperties?: number;
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

export type JsonType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  description?: string;
  required?: boolean;
  schema: Schema;
}

export interface MediaType {
  schema: Schema;
}

export interface RequestBody {
  description?: string;
  required?: boolean;
  content: Record<string, MediaType>;
}

export interface Header {
  description: string;
  schema: Schema;
}

export interface Response {
  description: string;
  headers?: Record<string, Header>;
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
  responses: Record<string, Response>;
  security: SecurityRequirement[];
}

export type PathItem = Partial<Record<'get' | 'post' | 'delete', Operation>>;

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
// Helpers.

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** An object with exactly these properties, all required. */
export const object = (properties: Record<string, Schema>, description?: string): Schema => ({
  type: 'object',
  ...(description === undefined ? {} : { description }),
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

export const json = (schema: Schema): Record<string, MediaType> => ({ 'application/json': { schema } });

/** The spec's 0/1 flags, as JSON numbers or strings, or form and query text. */
export const FLAG: Schema = { type: 'integer', enum: [...FLAG_VALUES.keys()].filter((v) => typeof v === 'number') };
export const JSON_FLAG: Schema = { enum: [...FLAG_VALUES.keys(), null] };
export const FORM_FLAG: Schema = { type: 'string', enum: [...FLAG_VALUES.keys()].filter((v) => typeof v === 'string') };
export const PHONE: Schema = { type: 'string', pattern: PHONE_PATTERN.source };
/** toISOString(): always milliseconds and Z. */
const TIMESTAMP = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$';

// ---------------------------------------------------------------------------
// Records, from their GraphQL fragments.

/** Constraints the SDL's types do not carry, by GraphQL field. */
const REFINEMENTS: Record<string, Record<string, Schema>> = {
  User: {
    id: { minimum: 1 },
    login: { minLength: 1 },
    phone: { pattern: PHONE_PATTERN.source },
    externalUserId: { minimum: 1, maximum: INT32_MAX },
  },
};

function scalarSchema(name: string): Schema {
  switch (name) {
    case 'Int':
      return { type: 'integer' };
    case 'Boolean':
      return { type: 'boolean' };
    case 'DateTime':
      return { type: 'string', format: 'date-time', pattern: TIMESTAMP };
    default:
      return { type: 'string' };
  }
}

/**
 * A JSON Schema of the record a fragment selects: its aliases (the spec's
 * names) as properties, each typed by its GraphQL field, null allowed where
 * the field is nullable, described by the SDL. `overrides` replace the
 * schema of properties the REST path reshapes (QuickBlox's session).
 */
function recordSchema(fragmentDocument: DocumentNode, description: string): Schema {
  const fragment = fragmentDocument.definitions[0] as FragmentDefinitionNode;
  const type = sdl().getType(fragment.typeCondition.name.value) as GraphQLObjectType;
  const properties: Record<string, Schema> = {};
  for (const selection of fragment.selectionSet.selections as FieldNode[]) {
    const name = selection.alias?.value ?? selection.name.value;
    const field = type.getFields()[selection.name.value]!;
    const named = getNullableType(field.type);
    const base = isScalarType(named) ? scalarSchema(named.name) : {};
    const nullable = !isNonNullType(field.type);
    properties[name] = {
      ...base,
      ...(nullable ? { type: [base.type as JsonType, 'null'] } : {}),
      ...(field.description ? { description: field.description } : {}),
      ...REFINEMENTS[type.name]?.[field.name],
    };
  }
  return object(properties, description);
}

let sdlSchema: ReturnType<typeof buildSdl> | undefined;
const sdl = () => (sdlSchema ??= buildSdl(loadTypeDefs().join('\n')));

/** A list of error messages, at least one. */
const messages: Schema = { type: 'array', items: { type: 'string' }, minItems: 1 };

export function componentSchemas(): Record<string, Schema> {
  return {
    User: recordSchema(
      UserRecordFragmentDoc,
      'The spec\'s user record: every field always present; unset text fields are null, except parents_contacts and user_tags, which are "".',
    ),
    CompactUser: object(
      { id: { type: 'integer', minimum: 1 }, phone: { ...PHONE, description: 'The phone that matched a contact.' } },
      'The compact form of a user (compact=1).',
    ),
    // QuickBlox's shape (src/rest/parse.ts qbSession), not GraphQL's: written
    // out, and checked against real answers by test/rest/openapi.test.ts.
    Session: object(
      {
        application_id: { type: 'integer', minimum: 1 },
        created_at: { type: 'string', format: 'date-time', pattern: TIMESTAMP },
        id: { type: 'integer', minimum: 1 },
        nonce: {
          type: ['integer', 'string', 'null'],
          description: "The signed request's nonce (a number when it is one); null for sessions the admin CLI made.",
        },
        token: { type: 'string', minLength: 1, description: 'Send it as QB-Token (or SVC-Token).' },
        ts: { type: ['integer', 'null'], description: 'The signed timestamp, Unix seconds.' },
        updated_at: { type: 'string', format: 'date-time', pattern: TIMESTAMP },
        user_id: { type: 'integer', minimum: 0, description: 'The logged-in user; 0 for an application session.' },
        _id: { type: 'string', description: 'id as text.' },
      },
      "QuickBlox's session object.",
    ),
    Contact: object({
      name: { type: 'string', minLength: 1, maxLength: LIMITS.contactNameLength },
      phone: { ...PHONE, description: 'Compared with user phones as an exact string.' },
    }),
    ErrorList: object({ errors: messages }, 'The error body of the delete and address-book paths (and of unknown paths).'),
    BaseError: object({ errors: object({ base: messages }) }, 'A credential, permission or session-request failure of the lookup, session and login paths.'),
    FieldError: {
      type: 'object',
      description: 'An invalid input of the lookup, session and login paths: {"errors":{"<input>":["…"]}}.',
      properties: { errors: { type: 'object', minProperties: 1, maxProperties: 1, additionalProperties: messages } },
      required: ['errors'],
      additionalProperties: false,
    },
    CodeMessageError: object({ code: { type: 'string' }, message: { type: 'string' } }, 'The other failures of the lookup, session and login paths.'),
  };
}
