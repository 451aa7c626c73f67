// The session paths: creating, reading and ending a session, and logging its
// user in and out (src/rest/operations/session.graphql).
import { RestCreateSessionDocument, RestEndSessionDocument, RestLoginDocument, RestLogoutDocument, RestSessionDocument } from '../../__generated__/graphql';
import { SIGNATURE_PATTERN } from '../../services/secrets';
import { NONCE_PATTERN, TIMESTAMP_PATTERN } from '../../services/sessions';
import { LIMITS } from '../../services/validate';
import { qbTime, SESSION_EXPIRY_HEADER } from '../headers';
import { object, ref, type Schema } from '../openapi-schema';
import { bodyObject, qbSession, sessionRequest, text } from '../parse';
import { jsonOrForm, type RestRoute } from './route';

/** A user's credentials; past a maximum (in characters: code points), 422 naming the parameter before any check. */
const credentials = {
  login: { type: 'string', maxLength: LIMITS.loginLength },
  email: { type: 'string', maxLength: LIMITS.emailLength },
  password: { type: 'string', maxLength: LIMITS.passwordLength },
} as const satisfies Record<string, Schema>;

/** QuickBlox's signed session request: JSON with a nested `user`, or a form naming its fields `user[login]`. */
function sessionRequestBody() {
  const properties: Record<string, Schema> = {
    application_id: { type: ['integer', 'string'] },
    auth_key: { type: 'string', maxLength: LIMITS.authKeyLength },
    timestamp: {
      type: ['integer', 'string'],
      pattern: TIMESTAMP_PATTERN.source,
      description: "Unix seconds, within SESSION_TIMESTAMP_WINDOW_S (an hour) of the server's clock.",
    },
    nonce: { type: ['integer', 'string'], pattern: NONCE_PATTERN.source, description: 'Never the same twice with the same timestamp.' },
    signature: {
      type: 'string',
      pattern: SIGNATURE_PATTERN.source,
      description: `Over ${LIMITS.signatureLength} characters: 422 naming it; any other wrong one: 422 "Unexpected signature".`,
    },
  };
  const required = Object.keys(properties);
  const userFields = Object.fromEntries(Object.entries(credentials).map(([k, v]) => [`user[${k}]`, v]));
  return jsonOrForm(
    { type: 'object', properties: { ...properties, user: { type: 'object', properties: credentials } }, required, additionalProperties: false },
    { type: 'object', properties: { ...properties, ...userFields }, required, additionalProperties: false },
  );
}

const credentialsBody = { type: 'object', properties: credentials, required: ['password'] } satisfies Schema;

export const SESSION_ROUTES: RestRoute[] = [
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
    operationId: 'createSession',
    summary: "Create a session from a request signed with the application's auth secret",
    tags: ['sessions'],
    description:
      "QuickBlox's session request. `signature` is the hex HMAC-SHA1 (or HMAC-SHA256) under the application's auth secret of every other parameter as `key=value` (nested ones as `user[login]=…`), sorted and joined with `&`. With `user[login]` or `user[email]` (or both, as the Android SDK sends them: found by login, the email must be that user's) and `user[password]` the session is that user's. A refused request stores nothing.",
    schema: {
      body: sessionRequestBody(),
      success: { status: 201, description: 'The new session, its token included.', schema: object({ session: ref('Session') }) },
    },
    callers: 'none',
    errors: [
      'BAD_USER_INPUT',
      'UNKNOWN_APPLICATION',
      'INVALID_SIGNATURE',
      'TIMESTAMP_OUT_OF_WINDOW',
      'NONCE_REUSED',
      'APPLICATION_DISABLED',
      'UNAUTHENTICATED',
      'WRITE_OUTCOME_UNKNOWN',
    ],
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
    operationId: 'session',
    summary: "The request's session",
    tags: ['sessions'],
    description: 'In the shape POST /session.json answers, its token included.',
    schema: { success: { status: 200, description: 'The session.', schema: object({ session: ref('Session') }) } },
    callers: 'session',
    errors: [],
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
    operationId: 'endSession',
    summary: "End the request's session",
    tags: ['sessions'],
    description: 'Its token is refused from then on.',
    schema: { success: { status: 200, description: 'Ended; an empty body.' } },
    callers: 'session',
    errors: ['WRITE_OUTCOME_UNKNOWN'],
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
    operationId: 'login',
    summary: "Make the request's session the session of a user",
    tags: ['sessions'],
    description: "Login (or email) and password; the answer is that user's record. Wrong credentials and too many failures answer as for POST /session.json.",
    schema: {
      body: jsonOrForm(credentialsBody),
      success: { status: 200, description: 'The user the session now belongs to.', schema: object({ user: ref('User') }) },
    },
    callers: 'session',
    errors: ['BAD_USER_INPUT', 'UNAUTHENTICATED', 'WRITE_OUTCOME_UNKNOWN'],
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
    operationId: 'logout',
    summary: "Make the request's session an application session again",
    tags: ['sessions'],
    description: 'A no-op for an application session.',
    schema: { success: { status: 200, description: 'Done; an empty body.' } },
    callers: 'session',
    errors: ['WRITE_OUTCOME_UNKNOWN'],
  },
];
