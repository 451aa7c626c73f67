// HTTP in and out for the REST shim: path segments, query strings and bodies
// (JSON or form-encoded, as legacy clients send them) into GraphQL variables,
// and results into QuickBlox's JSON where it differs from GraphQL's. Only
// transport rules live here; every rule of the service is in src/services.
import type { FastifyRequest } from 'fastify';
import type { ContactInput, SessionRecordFragment, SessionRequestInput } from '../__generated__/graphql';
import { AppError, MESSAGES, badInput } from '../errors';
import { RouteNotFound } from '../http/failures';
import { parseJson } from '../http/parsing';
import { EXTERNAL_USER_ID_RULE, INT32_MAX } from '../services/validate';

export type Query = Record<string, string | string[] | undefined>;

/** `{name}.json` → name; a path without the suffix is not one of ours. */
export function jsonFile(file: string): string {
  if (!file.endsWith('.json')) throw new RouteNotFound();
  return file.slice(0, -'.json'.length);
}

export function single(name: string, value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) throw badInput(name, `${name} must be given once`);
  return value;
}

/**
 * The spec's 0/1 integer flags: each value accepted and what it means, as
 * JSON sends them (numbers) and as query strings and forms do (text). The
 * OpenAPI document's flag schemas are read from here.
 */
export const FLAG_VALUES: ReadonlyMap<0 | 1 | '0' | '1', boolean> = new Map<0 | 1 | '0' | '1', boolean>([
  [0, false],
  [1, true],
  ['0', false],
  ['1', true],
]);

/** A flag's meaning; null when it is absent (JSON null included). */
export function flag(name: string, value: unknown): boolean | null {
  if (value === undefined || value === null) return null;
  const meaning = FLAG_VALUES.get(value as 0 | 1 | '0' | '1');
  if (meaning === undefined) throw badInput(name, `${name} must be 0 or 1`);
  return meaning;
}

/** Path integers, within GraphQL's Int; their range rule is the service's. */
export function integer(name: string, value: string): number {
  const n = /^-?[0-9]{1,10}$/.test(value) ? Number(value) : NaN;
  if (!(Math.abs(n) <= INT32_MAX)) {
    throw badInput(name, EXTERNAL_USER_ID_RULE);
  }
  return n;
}

/**
 * An uploaded contact as GraphQL's ContactInput. Fields of another JSON type
 * than the input's are passed as missing, so that the service rejects that
 * contact (by index) rather than GraphQL the whole upload; `destroy` is one of
 * the spec's 0/1 flags. A contact that is not an object stays as it is: the
 * upload is then malformed as a whole (422).
 */
export function contactInput(contact: unknown, index: number): ContactInput {
  // graphql-js would take a list as an input object (an empty one as a contact with no fields).
  if (Array.isArray(contact)) throw badInput('contacts', `contacts[${index}] must be an object {name, phone}`);
  if (typeof contact !== 'object' || contact === null) return contact as ContactInput;
  const { name, phone, destroy } = contact as Record<string, unknown>;
  return {
    name: typeof name === 'string' ? name : null,
    phone: typeof phone === 'string' ? phone : null,
    destroy: flag('destroy', destroy),
  };
}

/** The parameters QuickBlox's session request takes (form bodies name nested ones `user[login]`). */
const SESSION_PARAMETERS = ['application_id', 'auth_key', 'timestamp', 'nonce', 'signature'] as const;
const SESSION_USER_PARAMETERS = ['login', 'email', 'password'] as const;

/**
 * POST /session.json's body (JSON, nested `user`, or form, `user[login]=…`)
 * as the GraphQL input. Numbers are taken as their text (a JSON client may
 * send `"application_id": 76730`); parameters this service does not take
 * (social `provider` logins, anything else) are refused by name.
 */
export function sessionRequest(body: unknown): SessionRequestInput {
  // Without a prototype: a parameter named `__proto__` is a key like any other (and unknown).
  const flat = Object.create(null) as Record<string, unknown>;
  for (const [key, value] of Object.entries(bodyObject(body))) {
    if (key === 'user' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const [field, inner] of Object.entries(value)) flat[`user[${field}]`] = inner;
    } else flat[key] = value;
  }
  const known = new Set<string>([...SESSION_PARAMETERS, ...SESSION_USER_PARAMETERS.map((f) => `user[${f}]`)]);
  for (const key of Object.keys(flat)) {
    if (key === 'provider' || key.startsWith('keys[')) throw badInput(key, 'sessions through social providers are not supported');
    if (!known.has(key)) throw badInput(key, `unknown parameter ${key}`);
  }
  const value = (key: string): string | null => {
    const given = flat[key];
    if (given === undefined || given === null) return null;
    if (typeof given === 'string') return given;
    if (typeof given === 'number' && Number.isSafeInteger(given)) return String(given);
    throw badInput(key, `${key} must be a string`);
  };
  const required = (key: (typeof SESSION_PARAMETERS)[number]): string => {
    const given = value(key);
    if (given === null) throw badInput(key, `${key} is required`);
    return given;
  };
  const user = Object.fromEntries(SESSION_USER_PARAMETERS.map((field) => [field, value(`user[${field}]`)]));
  const hasUser = Object.values(user).some((v) => v !== null);
  return {
    applicationId: required('application_id'),
    authKey: required('auth_key'),
    timestamp: required('timestamp'),
    nonce: required('nonce'),
    signature: required('signature'),
    user: hasUser ? { login: user.login, email: user.email, password: user.password } : null,
  };
}

/** QuickBlox's session object: its field order, user_id 0 for none, ts in seconds, a numeric nonce as a number. */
export function qbSession(session: SessionRecordFragment) {
  const nonce = session.nonce !== null && /^-?[0-9]{1,15}$/.test(session.nonce) ? Number(session.nonce) : session.nonce;
  return {
    application_id: session.application_id,
    created_at: session.created_at,
    id: session.id,
    nonce,
    token: session.token,
    ts: session.signedAt === null ? null : Math.floor(new Date(session.signedAt).getTime() / 1000),
    updated_at: session.updated_at,
    user_id: session.user_id ?? 0,
    _id: String(session.id),
  };
}

/** An optional text parameter of a body. */
export function text(name: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw badInput(name, `${name} must be a string`);
  return value;
}

/**
 * The query parameters. QuickBlox's JavaScript SDK sends those of
 * `addressbook.get(udid)` as a JSON object in place of a query string
 * (`?{"udid":"…"}`); such a query is read as that object.
 */
export function queryObject(request: FastifyRequest<{ Querystring: Query }>): Query {
  const at = request.url.indexOf('?');
  if (at < 0) return request.query;
  // Everything after the first '?' (a udid may hold another), its escapes
  // decoded where they are escapes: the SDK leaves a '%' inside a udid as it is.
  const decoded = request.url.slice(at + 1).replace(/(?:%[0-9A-Fa-f]{2})+/g, (escapes) => {
    try {
      return decodeURIComponent(escapes);
    } catch {
      return escapes;
    }
  });
  if (!decoded.startsWith('{')) return request.query;
  let parsed: unknown;
  try {
    parsed = parseJson(decoded);
  } catch {
    throw new AppError('BAD_REQUEST', 'Malformed query: invalid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new AppError('BAD_REQUEST', 'Malformed query: expected a JSON object');
  // null is an absent parameter; numbers keep their text; anything else is no query value.
  const query = Object.create(null) as Query;
  for (const [key, value] of Object.entries(parsed)) {
    if (value === null) continue;
    if (typeof value === 'string') query[key] = value;
    else if (typeof value === 'number') query[key] = String(value);
    else throw badInput(key, `${key} must be a string`);
  }
  return query;
}

export function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('BAD_REQUEST', `${MESSAGES.malformedBody}: expected a JSON object`);
  return body as Record<string, unknown>;
}

/** A count in a query string (limit, skip): decimal digits from `min` to `max`; absent: `fallback`. */
export function count(name: string, value: string | string[] | undefined, min: number, max: number, fallback: number): number {
  const text = single(name, value);
  if (text === undefined || text === '') return fallback;
  const n = /^[0-9]{1,10}$/.test(text) ? Number(text) : NaN;
  if (!(n >= min && n <= max)) throw badInput(name, `${name} must be an integer between ${min} and ${max}`);
  return n;
}

// A DateTime of an operation's result is its serialized text (the typed
// documents say Date: the scalar's server-side type), read here as either.

/** A time as QuickBlox's date_sent: Unix seconds. */
export const unixSeconds = (at: Date | string): number => Math.floor(new Date(at).getTime() / 1000);

/** A time as QuickBlox's created_at: ISO 8601 in UTC. */
export const isoTime = (at: Date | string): string => (typeof at === 'string' ? at : at.toISOString());
