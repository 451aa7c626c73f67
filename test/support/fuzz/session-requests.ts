// Session requests (POST /session.json, createSession): described by what
// makes them right or wrong, signed when sent (the timestamp is relative to
// the clock then), with the answer README documents for each; and logins
// (POST /login.json, `login`).
import fc from 'fast-check';
import { MESSAGES } from '../../../src/errors';
import type { Tenant } from '../seed';
import { restForm, signedSessionRequest } from '../sessions';

/** The service's default window (SESSION_TIMESTAMP_WINDOW_S): generated offsets keep 100 s clear of it either way. */
export const TIMESTAMP_WINDOW_S = 3600;

type SeededUser = 'owner' | 'member' | 'outsider';

export interface SessionUserSpec {
  field: 'login' | 'email';
  who: SeededUser | 'nobody';
  /** The seed's password, or another one. */
  password: string /* 'right', or another */;
}

/** Parameters a session request can get wrong in form: each answered 422 naming `field` (docs/rest.md, Sessions). */
const MALFORMATIONS = {
  'application_id not a number': { field: 'application_id', set: { application_id: 'app' } },
  'application_id 0': { field: 'application_id', set: { application_id: '0' } },
  'application_id over Int': { field: 'application_id', set: { application_id: '2147483648' } },
  'application_id a boolean': { field: 'application_id', set: { application_id: true } },
  'timestamp not Unix seconds': { field: 'timestamp', set: { timestamp: '2026-11-23' } },
  'timestamp negative': { field: 'timestamp', set: { timestamp: '-1' } },
  'timestamp of 13 digits': { field: 'timestamp', set: { timestamp: '1000000000000' } },
  'timestamp a fraction': { field: 'timestamp', set: { timestamp: 1.5 } },
  'nonce empty': { field: 'nonce', set: { nonce: '' } },
  'nonce with a space': { field: 'nonce', set: { nonce: 'a b' } },
  'nonce not ASCII': { field: 'nonce', set: { nonce: 'n\u00e9' } },
  'nonce of 65 characters': { field: 'nonce', set: { nonce: 'n'.repeat(65) } },
  'nonce an object': { field: 'nonce', set: { nonce: { a: 1 } } },
  'auth_key with NUL': { field: 'auth_key', set: { auth_key: 'a\u0000b' } },
  'no application_id': { field: 'application_id', set: { application_id: undefined } },
  'no auth_key': { field: 'auth_key', set: { auth_key: undefined } },
  'no timestamp': { field: 'timestamp', set: { timestamp: undefined } },
  'no nonce': { field: 'nonce', set: { nonce: undefined } },
  'no signature': { field: 'signature', set: { signature: undefined } },
  'signature a list': { field: 'signature', set: { signature: ['a', 'b'] } },
  'an unknown parameter': { field: 'x', set: { x: '1' } },
  'a social provider': { field: 'provider', set: { provider: 'facebook' } },
  'provider keys': { field: 'keys[token]', set: { 'keys[token]': 't' } },
  // Login and email together are taken (the Android SDK's request); the email is then checked as the login is.
  'an email with NUL beside a login': {
    field: 'email',
    user: { 'user[login]': 'owner', 'user[email]': 'ow\u0000ner@example.com', 'user[password]': 'password123' },
  },
  'a login without password': { field: 'password', user: { 'user[login]': 'owner' } },
  'a password without login': { field: 'login', user: { 'user[password]': 'password123' } },
  'an empty login': { field: 'login', user: { 'user[login]': '', 'user[password]': 'password123' } },
  'a login with NUL': { field: 'login', user: { 'user[login]': 'ow\u0000ner', 'user[password]': 'password123' } },
  // One character past each maximum (docs/operation.md, Limits), in characters: code points, emoji included.
  'auth_key of 65 characters': { field: 'auth_key', set: { auth_key: 'k'.repeat(65) } },
  'signature of 65 characters': { field: 'signature', set: { signature: 'a'.repeat(65) } },
  'a login of 256 characters': { field: 'login', user: { 'user[login]': '\u{1F600}'.repeat(256), 'user[password]': 'password123' } },
  'an email of 256 characters': { field: 'email', user: { 'user[email]': `${'e'.repeat(244)}@example.com`, 'user[password]': 'password123' } },
  'a password of 256 characters': { field: 'password', user: { 'user[login]': 'owner', 'user[password]': '\u{1F600}'.repeat(256) } },
  // Parameters named like Object.prototype's members are unknown parameters like any other.
  'a parameter named __proto__': { field: '__proto__', set: { ['__proto__']: '1' } },
  'a parameter named constructor': { field: 'constructor', set: { constructor: '1' } },
  'a user parameter named __proto__': { field: 'user[__proto__]', user: { 'user[login]': 'owner', 'user[password]': 'password123', 'user[__proto__]': 'x' } },
} satisfies Record<string, { field: string; set?: Record<string, unknown>; user?: Record<string, string> }>;

export type Malformation = keyof typeof MALFORMATIONS;

export type SessionChange =
  | { kind: 'none' }
  /** The signature's hex digit at `at` (modulo its length) replaced by one of another value. */
  | { kind: 'signature digit'; at: number; by: number }
  /** A signed parameter changed after signing (the user: another password, or a user added). */
  | { kind: 'changed after signing'; param: 'timestamp' | 'nonce' | 'user' }
  | { kind: 'another secret'; secret: string }
  | { kind: "the other application's auth key" }
  | { kind: 'an unknown application' }
  | { kind: 'malformed'; name: Malformation };

export interface SessionSpec {
  tenant: 0 | 1;
  user: SessionUserSpec | undefined;
  /** Seconds from the clock when sent. */
  offset: number;
  nonce: string;
  algorithm: 'sha1' | 'sha256';
  change: SessionChange;
}

/** The answer README documents for a session request; NONCE_REUSED is the caller's to tell (it knows the pairs used). */
export type SessionOutcome = 'created' | 'BAD_USER_INPUT' | 'UNKNOWN_APPLICATION' | 'INVALID_SIGNATURE' | 'TIMESTAMP_OUT_OF_WINDOW' | 'UNAUTHENTICATED';

export interface SessionRequestParts {
  /** Under QuickBlox's names (`user[login]`); undefined values are left out when sent. */
  parameters: Record<string, unknown>;
  expected: SessionOutcome;
  /** For BAD_USER_INPUT: the parameter the 422 names. */
  field?: string;
  applicationId: number;
  /** The user the session is for (null: the application's), when created. */
  userId: number | null;
  /** `<application>:<timestamp>:<nonce>`: what a creation uses up. */
  pair: string;
}

/** Printable ASCII, 1 to 64 characters (README): `&`, `=`, `[` and `%` included. */
export const validNonce: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 0, max: 2 ** 31 - 1 }).map(String),
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 64 }),
);

export function sessionSpecArbitrary(): fc.Arbitrary<SessionSpec> {
  const user: fc.Arbitrary<SessionUserSpec | undefined> = fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 3,
      arbitrary: fc.record({
        field: fc.constantFrom('login' as const, 'email' as const),
        who: fc.constantFrom<SeededUser | 'nobody'>('owner', 'member', 'outsider', 'nobody'),
        password: fc.oneof(
          { weight: 2, arbitrary: fc.constant('right') },
          { weight: 1, arbitrary: fc.constantFrom('password124', 'a&b=c[d]%20\u00e9\u{1F600}', ' password123') },
        ),
      }),
    },
  );
  const offset = fc.oneof(
    { weight: 2, arbitrary: fc.integer({ min: -(TIMESTAMP_WINDOW_S - 100), max: TIMESTAMP_WINDOW_S - 100 }) },
    { weight: 1, arbitrary: fc.integer({ min: TIMESTAMP_WINDOW_S + 100, max: 10_000_000 }).chain((o) => fc.constantFrom(o, -o)) },
  );
  const change: fc.Arbitrary<SessionChange> = fc.oneof(
    // Weighed so that a default run meets each documented answer a dozen times or more.
    { weight: 8, arbitrary: fc.constant({ kind: 'none' as const }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('signature digit' as const), at: fc.nat(63), by: fc.nat(14) }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('changed after signing' as const),
        param: fc.constantFrom('timestamp' as const, 'nonce' as const, 'user' as const),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('another secret' as const), secret: fc.string({ maxLength: 44 }) }) },
    { weight: 3, arbitrary: fc.constantFrom({ kind: "the other application's auth key" as const }, { kind: 'an unknown application' as const }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('malformed' as const), name: fc.constantFrom(...(Object.keys(MALFORMATIONS) as Malformation[])) }) },
  );
  return fc.record({
    tenant: fc.constantFrom(0 as const, 1 as const),
    user,
    offset,
    nonce: validNonce,
    algorithm: fc.constantFrom('sha1' as const, 'sha256' as const),
    change,
  });
}

/** The request a spec describes, signed now (as QuickBlox SDKs sign: test/support/sessions.ts), and its documented answer. */
export function sessionRequestParts(spec: SessionSpec, ts: [Tenant, Tenant], nowSeconds = Math.floor(Date.now() / 1000)): SessionRequestParts {
  const t = ts[spec.tenant];
  const { change } = spec;
  const user = spec.user && {
    [spec.user.field]: spec.user.field === 'login' ? spec.user.who : `${spec.user.who}@example.com`,
    password: spec.user.password === 'right' ? 'password123' : spec.user.password,
  };
  const timestamp = nowSeconds + spec.offset;
  const signed = signedSessionRequest(t, user, {
    timestamp,
    nonce: spec.nonce,
    algorithm: spec.algorithm,
    ...(change.kind === 'another secret' ? { secret: change.secret === t.authSecret ? `${change.secret}x` : change.secret } : {}),
    ...(change.kind === "the other application's auth key" ? { authKey: ts[1 - spec.tenant]!.authKey } : {}),
    ...(change.kind === 'an unknown application' ? { applicationId: '2000000000' } : {}),
  });
  const parameters: Record<string, unknown> = restForm(signed);
  let field: string | undefined;
  switch (change.kind) {
    case 'signature digit': {
      const at = change.at % signed.signature.length;
      const digit = (parseInt(signed.signature[at]!, 16) + 1 + change.by) % 16;
      parameters.signature = `${signed.signature.slice(0, at)}${digit.toString(16)}${signed.signature.slice(at + 1)}`;
      break;
    }
    case 'changed after signing':
      if (change.param === 'timestamp') parameters.timestamp = String(timestamp + 1);
      else if (change.param === 'nonce')
        parameters.nonce = spec.nonce.length < 64 ? `${spec.nonce}0` : `${spec.nonce.slice(0, -1)}${spec.nonce.endsWith('0') ? '1' : '0'}`;
      else if (user) parameters['user[password]'] = `${user.password}x`;
      else Object.assign(parameters, { 'user[login]': 'owner', 'user[password]': 'password123' });
      break;
    case 'malformed': {
      const malformation: { field: string; set?: Record<string, unknown>; user?: Record<string, string> } = MALFORMATIONS[change.name];
      if (malformation.user) {
        for (const key of Object.keys(parameters)) if (key.startsWith('user[')) delete parameters[key];
        ownAssign(parameters, malformation.user);
      }
      ownAssign(parameters, malformation.set ?? {});
      field = malformation.field;
      break;
    }
  }
  const seeded = spec.user && spec.user.who !== 'nobody' ? t[spec.user.who] : undefined;
  const expected: SessionOutcome =
    change.kind === 'malformed'
      ? 'BAD_USER_INPUT'
      : change.kind === "the other application's auth key" || change.kind === 'an unknown application'
        ? 'UNKNOWN_APPLICATION'
        : change.kind !== 'none'
          ? 'INVALID_SIGNATURE'
          : Math.abs(spec.offset) > TIMESTAMP_WINDOW_S
            ? 'TIMESTAMP_OUT_OF_WINDOW'
            : spec.user && (!seeded || spec.user.password !== 'right')
              ? 'UNAUTHENTICATED'
              : 'created';
  return {
    parameters,
    expected,
    ...(field === undefined ? {} : { field }),
    applicationId: t.applicationId,
    userId: seeded?.id ?? null,
    pair: `${t.applicationId}:${signed.timestamp}:${signed.nonce}`,
  };
}

/** Object.assign as own data properties: a `__proto__` key is copied as a key, not set as the prototype. */
function ownAssign(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(source)) Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** What POST /session.json answered, in the terms of SessionOutcome (BAD_USER_INPUT with the parameter named). */
export function sessionAnswer(status: number, json: unknown): string {
  if (status === 201) return 'created';
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 429) return 'TOO_MANY_REQUESTS';
  const errors = (json as { errors?: Record<string, string[]> } | undefined)?.errors;
  const [field, [message] = []] = (status === 422 && errors && !Array.isArray(errors) ? Object.entries(errors)[0] : undefined) ?? [];
  if (field === undefined || message === undefined) return String(status);
  if (field !== 'base') return `BAD_USER_INPUT ${field}`;
  const refusals: Record<string, string> = {
    [MESSAGES.unknownApplication]: 'UNKNOWN_APPLICATION',
    [MESSAGES.invalidSignature]: 'INVALID_SIGNATURE',
    [MESSAGES.nonceReused]: 'NONCE_REUSED',
  };
  return refusals[message] ?? (message.startsWith('Unexpected timestamp: ') ? 'TIMESTAMP_OUT_OF_WINDOW' : `422 ${message}`);
}

/** How a session request's body is written: JSON with `user` nested or flat (`"user[login]"`), JSON numbers where the text is an integer's, or a form. */
export type SessionEncoding = 'json nested' | 'json flat' | 'json numbers' | 'form';

/** A numeric text whose JSON number reads back as the same text (what an SDK signing numbers signs). */
const asNumber = (value: unknown): unknown => (typeof value === 'string' && /^(?:0|[1-9][0-9]{0,14})$/.test(value) ? Number(value) : value);

/** POST /session.json's body and Content-Type. */
export function sessionBody(parameters: Record<string, unknown>, encoding: SessionEncoding): { body: string; contentType: string } {
  const present = Object.entries(parameters).filter(([, v]) => v !== undefined);
  if (encoding === 'form') {
    // A list is its key repeated, as form encoders write one.
    return {
      body: new URLSearchParams(present.flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((item): [string, string] => [k, String(item)]))).toString(),
      contentType: 'application/x-www-form-urlencoded; charset=UTF-8',
    };
  }
  if (encoding === 'json flat') return { body: JSON.stringify(Object.fromEntries(present)), contentType: 'application/json' };
  // Without a prototype, so that a `__proto__` parameter is written as one.
  const json: Record<string, unknown> = Object.create(null);
  for (const [key, value] of present) {
    const field = /^user\[(login|email|password)\]$/.exec(key)?.[1];
    const v = encoding === 'json numbers' && ['application_id', 'timestamp', 'nonce'].includes(key) ? asNumber(value) : value;
    if (field) ((json.user ??= {}) as Record<string, unknown>)[field] = v;
    else json[key] = v;
  }
  return { body: JSON.stringify(json), contentType: 'application/json; charset=utf-8' };
}

/** GraphQL names of the parameters (createSession's SessionRequestInput); others keep theirs (GraphQL refuses them). */
const INPUT_NAMES = new Map([
  ['application_id', 'applicationId'],
  ['auth_key', 'authKey'],
  ['timestamp', 'timestamp'],
  ['nonce', 'nonce'],
  ['signature', 'signature'],
]);

/** The same request as createSession's input (JSON numbers where `numbers`, as SignedText takes them). */
export function sessionInput(parameters: Record<string, unknown>, numbers = false): Record<string, unknown> {
  const input: Record<string, unknown> = Object.create(null);
  for (const [key, value] of Object.entries(parameters)) {
    if (value === undefined) continue;
    const field = /^user\[(login|email|password)\]$/.exec(key)?.[1];
    if (field) ((input.user ??= {}) as Record<string, unknown>)[field] = value;
    else input[INPUT_NAMES.get(key) ?? key] = numbers && ['application_id', 'timestamp', 'nonce'].includes(key) ? asNumber(value) : value;
  }
  return input;
}

/** POST /login.json and `login`: who, by which field, with which password. */
export interface LoginSpec {
  /** 'both': login and email (of the same user: taken, as the Android SDK sends them); 'neither': only a password. */
  field: 'login' | 'email' | 'both' | 'neither';
  who: SeededUser | 'nobody';
  password: 'right' | 'wrong' | 'empty' | 'missing';
  /** The login or email, or the password, at its maximum length (a name no one has, a wrong password) or one character past it (255 / 256 characters). */
  length?: { of: 'name' | 'password'; past: boolean };
}

/** 255 (or 256) characters, emoji among them: the limits count code points. */
const lengthy = (characters: number, tail = ''): string => `${'\u{1F600}'.repeat(characters - 1 - tail.length)}x${tail}`;

export const loginSpecArbitrary = (): fc.Arbitrary<LoginSpec> =>
  fc.record({
    field: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('login' as const, 'email' as const) },
      { weight: 1, arbitrary: fc.constantFrom('both' as const, 'neither' as const) },
    ),
    who: fc.constantFrom<SeededUser | 'nobody'>('owner', 'member', 'outsider', 'owner', 'member', 'outsider', 'nobody'),
    password: fc.oneof(
      { weight: 3, arbitrary: fc.constant('right' as const) },
      { weight: 1, arbitrary: fc.constantFrom('wrong' as const, 'empty' as const, 'missing' as const) },
    ),
    length: fc.oneof(
      { weight: 6, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.record({ of: fc.constantFrom('name' as const, 'password' as const), past: fc.boolean() }) },
    ),
  });

/** The input a login is refused for (422) by its length, if one is past its maximum and nothing is refused before it. */
export function oversizedLoginInput(spec: LoginSpec): 'login' | 'email' | 'password' | undefined {
  if (!spec.length?.past || spec.field === 'neither' || spec.password === 'empty' || spec.password === 'missing') return undefined;
  // Both: the login is measured first.
  return spec.length.of === 'name' ? (spec.field === 'both' ? 'login' : spec.field) : 'password';
}

/** The login's arguments (undefined: left out), and the user it logs in as in the caller's application `t` (undefined: refused, or no `t`). */
export function loginParts(spec: LoginSpec, t?: Tenant): { args: Record<string, string | undefined>; userId: number | undefined } {
  const characters = spec.length && (spec.length.past ? 256 : 255);
  const long = (of: 'name' | 'password') => characters !== undefined && spec.length?.of === of;
  const login = spec.field === 'login' || spec.field === 'both' ? (long('name') ? lengthy(characters!) : spec.who) : undefined;
  const email = spec.field === 'email' || spec.field === 'both' ? (long('name') ? lengthy(characters!, '@example.com') : `${spec.who}@example.com`) : undefined;
  const given = { right: 'password123', wrong: 'password124', empty: '', missing: undefined }[spec.password];
  const password = given && long('password') ? lengthy(characters!) : given;
  const ok = spec.who !== 'nobody' && !spec.length && spec.field !== 'neither' && spec.password === 'right';
  return { args: { login, email, password }, userId: ok && t ? t[spec.who as SeededUser].id : undefined };
}
