// The two surfaces of one implementation, behind one interface, so that each
// rule table is written once and run against REST and GraphQL alike. An
// adapter only translates: the call into its surface's request, the answer
// (once it has checked the answer's shape on that surface) into a common
// result, and an expected failure into that surface's shape (REST: the status
// ERROR_STATUS gives the code and the route's error body; GraphQL: HTTP 200,
// one error at the field, its extensions.code and message).
import { ERROR_STATUS, type ErrorCode, MESSAGES } from '../../src/errors';
import { toGlobalId } from '../../src/services/global-id';
import type { Contact } from '../support/address-book';
import { sorted } from '../support/chat';
import { GRAPHQL_USER_FIELDS, USER_FIELDS, USER_RECORD, type UserRecord } from '../support/records';
import type { Tenant } from '../support/seed';
import type { HttpResult, TestService } from '../support/service';
import { restForm, type SignedRequest } from '../support/sessions';

export type Headers = Record<string, string>;

/** A surface's answer: the value, or the raw failure its adapter checks. */
export type Result<T> = { ok: true; value: T } | { ok: false; failure: HttpResult };

export interface SessionValue {
  id: number;
  applicationId: number;
  /** null for an application session. */
  userId: number | null;
  token: string;
}

export interface Credentials {
  login?: string;
  email?: string;
  password: string;
}

/** A delete's outcome; each list sorted, since neither surface promises an order. */
export interface DeleteValue {
  deleted: string[];
  notFound: string[];
}

/** An uploaded contact; `destroy` is REST's 0/1 flag and GraphQL's Boolean. */
export interface ContactInput {
  name?: string;
  phone?: string;
  destroy?: boolean;
}

export interface Upload {
  contacts: ContactInput[];
  udid?: string;
  force?: boolean;
}

/** An upload's counts; `rejected` lists the contacts not taken by index, ascending (empty when none). */
export interface UploadValue {
  created: number;
  updated: number;
  deleted: number;
  rejected: { index: number; reasons: string[] }[];
}

/** The address book's compact user: REST's compact=1, GraphQL's selection of id and phone. */
export interface CompactUser {
  id: number;
  phone: string;
}

/** A dialog in a list, as both surfaces answer it. */
export interface DialogValue {
  id: string;
  name: string | null;
  type: number;
  ownerId: number | null;
  occupantIds: number[];
  lastMessage: string | null;
  lastMessageUserId: number | null;
}

export interface DialogsValue {
  total: number;
  dialogs: DialogValue[];
}

/** A message of a history, as both surfaces answer it. */
export interface MessageValue {
  id: string;
  body: string | null;
  senderId: number | null;
}

/** A send: the message, or the refusal (GraphQL's userError code; REST's 404, or 422 naming the body's problem). */
export type SendValue = { message: MessageValue } | { refused: 'DIALOG_NOT_FOUND' | 'BODY_BLANK' | 'BODY_TOO_LONG' };

export interface Surface {
  readonly name: 'REST' | 'GraphQL';
  /** The caller's dialogs, most recent activity first: `limit` after `skip` (REST's), or GraphQL's first page of `limit`. */
  dialogs(headers: Headers, page?: { limit?: number; skip?: number }): Promise<Result<DialogsValue>>;
  /** The caller's history of a dialog, oldest first: the newest `limit` (REST's sort_desc, GraphQL's last), or all. */
  history(headers: Headers, dialogId: string, newest?: number): Promise<Result<MessageValue[]>>;
  sendMessage(headers: Headers, dialogId: string, body: string): Promise<Result<SendValue>>;
  createSession(request: SignedRequest): Promise<Result<SessionValue>>;
  session(headers: Headers): Promise<Result<SessionValue>>;
  endSession(headers: Headers): Promise<Result<true>>;
  login(headers: Headers, credentials: Credentials): Promise<Result<{ id: number; login: string }>>;
  logout(headers: Headers): Promise<Result<true>>;
  /** `force`: absent, or REST's 1/0 (null: JSON null) and GraphQL's true/false/null. */
  deleteMessages(headers: Headers, ids: readonly string[], force?: boolean | null): Promise<Result<DeleteValue>>;
  /** The user record, under the spec's (REST's) field names on both surfaces. */
  userByExternalId(headers: Headers, externalUserId: number): Promise<Result<UserRecord>>;
  /** Full records of the users the book matches (the global book without a udid). */
  registeredUsers(headers: Headers, udid?: string): Promise<Result<UserRecord[]>>;
  registeredUsersCompact(headers: Headers, udid?: string): Promise<Result<CompactUser[]>>;
  uploadAddressBook(headers: Headers, upload: Upload): Promise<Result<UploadValue>>;
  /** The contacts of the book, in upload order. */
  addressBook(headers: Headers, udid?: string): Promise<Result<Contact[]>>;
  /**
   * The failure is `code` with `message` (a string, or a pattern), in this
   * surface's shape; `field`, in GraphQL's terms, is the input a
   * BAD_USER_INPUT names (GraphQL's extensions.field, the key of REST's
   * object-style errors).
   */
  expectFailure(result: Result<unknown>, code: ErrorCode, message: string | RegExp, field?: string): void;
}

/** Credentials a test sends (from its tenant), refused with this code and message. */
export type Refusal = [what: string, headers: (t: Tenant) => Headers, code: ErrorCode, message: string];

/**
 * Credentials every operation of the chat and the address book refuses alike,
 * before it runs (docs/errors.md, Errors): one of each kind.
 */
export const REFUSED_CREDENTIALS: Refusal[] = [
  ['no credentials', () => ({}), 'UNAUTHENTICATED', MESSAGES.noCredentials],
  ['an unknown session token', () => ({ 'SVC-Token': 'no-such-token' }), 'UNAUTHENTICATED', MESSAGES.sessionMissing],
  ['an unknown API key', () => ({ Authorization: 'ApiKey not-a-key-of-any-application' }), 'UNAUTHENTICATED', MESSAGES.unknownApiKey],
  ['an Authorization header that is not an API key', () => ({ Authorization: 'Bearer x' }), 'UNAUTHENTICATED', MESSAGES.malformedAuthorization],
  ['both SVC-Token and Authorization', (t) => ({ ...t.as.owner, ...t.as.apiKey }), 'BAD_REQUEST', MESSAGES.bothCredentials],
  ['a user session token with On-Behalf-Of', (t) => ({ ...t.as.owner, 'On-Behalf-Of': String(t.member.id) }), 'BAD_REQUEST', MESSAGES.onBehalfOfWithoutApiKey],
  // Application sessions are read-only and have no user: nothing here accepts them.
  ['an application session token', (t) => t.as.app, 'FORBIDDEN', MESSAGES.needUser],
];

const ok = <T>(value: T): Result<T> => ({ ok: true, value });
const failed = <T>(res: HttpResult): Result<T> => ({ ok: false, failure: res });

/** Expects success and gives the value. */
export function value<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`expected success, got ${result.failure.status} ${result.failure.text.slice(0, 300)}`);
  return result.value;
}

/** Error styles of the REST paths: which body a failure of each route has. */
type Style = 'list' | 'object';

/**
 * The object style's codes answered as {"errors":{"base":[…]}} (README,
 * Errors: credential, permission and session-request failures); a
 * BAD_USER_INPUT names its parameter instead of "base", and any other code is
 * {"code","message"}.
 */
const BASE_CODES: readonly ErrorCode[] = [
  'UNAUTHENTICATED',
  'BAD_REQUEST',
  'FORBIDDEN',
  'UNKNOWN_APPLICATION',
  'INVALID_SIGNATURE',
  'TIMESTAMP_OUT_OF_WINDOW',
  'NONCE_REUSED',
  'APPLICATION_DISABLED',
];

/** GraphQL's name of an input → the REST parameter's (externalUserId → external_user_id). */
const restName = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The body a REST failure of `code` must have in `style`, its message matched by `message`. */
function restErrorBody(res: HttpResult, style: Style, code: ErrorCode, message: unknown, field: string | undefined): unknown {
  if (style === 'list') return { errors: [message] };
  if (BASE_CODES.includes(code)) return { errors: { base: [message] } };
  if (code !== 'BAD_USER_INPUT') return { code, message };
  // Without a field given, whichever one parameter the body names.
  const name = field === undefined ? Object.keys((res.body as { errors?: object } | undefined)?.errors ?? {})[0] : restName(field);
  return { errors: { [name ?? 'base']: [message] } };
}

/** A Boolean as the spec's 0/1 integer flag (null stays JSON's null). */
const flag = (on: boolean | null) => (on === null ? null : on ? 1 : 0);
/** The query string of the parameters given ("" for none). */
const query = (parameters: Record<string, string | undefined>): string => {
  const given = Object.entries(parameters).filter((p): p is [string, string] => p[1] !== undefined);
  return given.length === 0 ? '' : `?${new URLSearchParams(given).toString()}`;
};

/** `user` has exactly the spec's user record's fields. */
function expectUserRecord(user: unknown): asserts user is UserRecord {
  expect(Object.keys(user as object).sort()).toEqual(USER_FIELDS);
}

export function restSurface(service: TestService): Surface {
  const styleOf = new Map<HttpResult, Style>();
  const call = async (style: Style, method: string, path: string, headers: Headers, body?: unknown, form = false) => {
    const res = await service.call(method, path, { headers, ...(body === undefined ? {} : { body, form }) });
    styleOf.set(res, style);
    return res;
  };
  const session = (res: HttpResult): SessionValue => {
    const s = (res.body as { session: { id: number; application_id: number; user_id: number; token: string } }).session;
    return { id: s.id, applicationId: s.application_id, userId: s.user_id === 0 ? null : s.user_id, token: s.token };
  };
  /** The items of a registered-users answer: {"items":[{"user":…}, …]}. */
  const items = (res: HttpResult): unknown[] => {
    expect(Object.keys(res.body)).toEqual(['items']);
    return (res.body.items as unknown[]).map((item) => {
      expect(Object.keys(item as object)).toEqual(['user']);
      return (item as { user: unknown }).user;
    });
  };
  return {
    name: 'REST',
    async createSession(request) {
      // Form-encoded with bracketed names, as the SDKs send it.
      const res = await call('object', 'POST', '/session.json', {}, restForm(request), true);
      return res.status === 201 ? ok(session(res)) : failed(res);
    },
    async session(headers) {
      const res = await call('object', 'GET', '/session.json', headers);
      return res.status === 200 ? ok(session(res)) : failed(res);
    },
    async endSession(headers) {
      const res = await call('object', 'DELETE', '/session.json', headers);
      if (res.status === 200) expect(res.text).toBe('');
      return res.status === 200 ? ok(true as const) : failed(res);
    },
    async login(headers, credentials) {
      const res = await call('object', 'POST', '/login.json', headers, credentials, true);
      if (res.status !== 200) return failed(res);
      const { id, login } = (res.body as { user: { id: number; login: string } }).user;
      return ok({ id, login });
    },
    async logout(headers) {
      const res = await call('object', 'DELETE', '/login.json', headers);
      return res.status === 200 ? ok(true as const) : failed(res);
    },
    async deleteMessages(headers, ids, force) {
      // force in a JSON body, as the spec shows it (the query and form variants are REST-only tests).
      const res = await call('list', 'DELETE', `/chat/Message/${ids.join(',')}.json`, headers, force === undefined ? undefined : { force: flag(force) });
      if (res.status !== 200) return failed(res);
      expect(res.body).toEqual({ SuccessfullyDeleted: { ids: expect.any(Array) }, NotFound: { ids: expect.any(Array) } });
      return ok({ deleted: sorted(res.body.SuccessfullyDeleted.ids), notFound: sorted(res.body.NotFound.ids) });
    },
    async dialogs(headers, page = {}) {
      const res = await call('list', 'GET', `/chat/Dialog.json${query({ limit: page.limit?.toString(), skip: page.skip?.toString() })}`, headers);
      if (res.status !== 200) return failed(res);
      expect(Object.keys(res.body)).toEqual(['total_entries', 'skip', 'limit', 'items']);
      const items = res.body.items as Record<string, unknown>[];
      for (const item of items) expect(Object.keys(item).sort()).toEqual(REST_DIALOG_FIELDS);
      return ok({
        total: res.body.total_entries as number,
        dialogs: items.map((d) => ({
          id: d._id as string,
          name: d.name as string | null,
          type: d.type as number,
          ownerId: d.user_id as number,
          occupantIds: d.occupants_ids as number[],
          lastMessage: d.last_message as string | null,
          lastMessageUserId: d.last_message_user_id as number | null,
        })),
      });
    },
    async history(headers, dialogId, newest) {
      const params = newest === undefined ? { chat_dialog_id: dialogId } : { chat_dialog_id: dialogId, sort_desc: 'date_sent', limit: String(newest) };
      const res = await call('list', 'GET', `/chat/Message.json${query(params)}`, headers);
      if (res.status !== 200) return failed(res);
      expect(Object.keys(res.body)).toEqual(['skip', 'limit', 'items']);
      const items = (res.body.items as Record<string, unknown>[]).map((m) => {
        expect(Object.keys(m).sort()).toEqual(REST_MESSAGE_FIELDS);
        expect(m.chat_dialog_id).toBe(dialogId);
        return { id: m._id as string, body: m.message as string | null, senderId: m.sender_id as number | null };
      });
      return ok(newest === undefined ? items : items.reverse());
    },
    async sendMessage(headers, dialogId, body) {
      const res = await call('list', 'POST', '/chat/Message.json', headers, { chat_dialog_id: dialogId, message: body });
      if (res.status === 404) return ok({ refused: 'DIALOG_NOT_FOUND' as const });
      if (res.status === 422 && /^message must (not be empty|be at most)/.test((res.body as { errors: string[] }).errors[0] ?? '')) {
        return ok({ refused: /empty/.test((res.body as { errors: string[] }).errors[0]!) ? ('BODY_BLANK' as const) : ('BODY_TOO_LONG' as const) });
      }
      if (res.status !== 201) return failed(res);
      expect(Object.keys(res.body).sort()).toEqual(REST_MESSAGE_FIELDS);
      return ok({ message: { id: res.body._id, body: res.body.message, senderId: res.body.sender_id } });
    },
    async userByExternalId(headers, externalUserId) {
      const res = await call('object', 'GET', `/users/external/${externalUserId}.json`, headers);
      if (res.status !== 200) return failed(res);
      expect(Object.keys(res.body)).toEqual(['user']);
      expectUserRecord(res.body.user);
      return ok(res.body.user);
    },
    async registeredUsers(headers, udid) {
      const res = await call('list', 'GET', `/address_book/registered_users.json${query({ udid })}`, headers);
      if (res.status !== 200) return failed(res);
      const users = items(res);
      users.forEach(expectUserRecord);
      return ok(users as UserRecord[]);
    },
    async registeredUsersCompact(headers, udid) {
      const res = await call('list', 'GET', `/address_book/registered_users.json${query({ udid, compact: '1' })}`, headers);
      if (res.status !== 200) return failed(res);
      const users = items(res);
      for (const user of users) expect(Object.keys(user as object)).toEqual(['id', 'phone']);
      return ok(users as CompactUser[]);
    },
    async uploadAddressBook(headers, { contacts, udid, force }) {
      const body = {
        contacts: contacts.map(({ destroy, ...contact }) => (destroy === undefined ? contact : { ...contact, destroy: flag(destroy) })),
        ...(udid === undefined ? {} : { udid }),
        ...(force === undefined ? {} : { force: flag(force) }),
      };
      const res = await call('list', 'POST', '/address_book.json', headers, body);
      if (res.status !== 200) return failed(res);
      const { rejected, ...counts } = res.body as Omit<UploadValue, 'rejected'> & { rejected?: Record<string, string[]> };
      expect(counts).toEqual({ created: expect.any(Number), updated: expect.any(Number), deleted: expect.any(Number) });
      // QuickBlox's shape: {"rejected": {"<index>": [reasons]}}, present only when a contact was rejected.
      if (rejected !== undefined) expect(Object.keys(rejected).length).toBeGreaterThan(0);
      const byIndex = Object.entries(rejected ?? {}).map(([index, reasons]) => ({ index: Number(index), reasons }));
      return ok({ ...counts, rejected: byIndex.sort((a, b) => a.index - b.index) });
    },
    async addressBook(headers, udid) {
      const res = await call('list', 'GET', `/address_book.json${query({ udid })}`, headers);
      if (res.status !== 200) return failed(res);
      // QuickBlox's shape: a bare list.
      expect(res.body).toEqual(expect.any(Array));
      return ok(res.body as Contact[]);
    },
    expectFailure(result, code, message, field) {
      if (result.ok) throw new Error(`expected ${code}, got success ${JSON.stringify(result.value)}`);
      const res = result.failure;
      const matches = typeof message === 'string' ? message : expect.stringMatching(message);
      expect({ status: res.status, body: res.body }).toEqual({
        status: ERROR_STATUS[code],
        body: restErrorBody(res, styleOf.get(res) ?? 'list', code, matches, field),
      });
    },
  };
}

const SESSION_FIELDS = 'id applicationId userId token';

/** QuickBlox's dialog and message items, as the chat paths answer them. */
const REST_DIALOG_FIELDS = [
  '_id',
  'created_at',
  'last_message',
  'last_message_date_sent',
  'last_message_user_id',
  'name',
  'occupants_ids',
  'type',
  'updated_at',
  'user_id',
];
const REST_MESSAGE_FIELDS = ['_id', 'attachments', 'chat_dialog_id', 'created_at', 'date_sent', 'message', 'sender_id', 'updated_at'];

const DIALOGS = `query ($first: Int) { viewer { dialogs(first: $first) { totalCount edges { node {
  databaseId name type owner { databaseId } occupants { databaseId } lastMessage { body sender { databaseId } } } } } } }`;
const HISTORY = `query ($id: ID!, $first: Int, $last: Int) { node(id: $id) { ... on Dialog { messages(first: $first, last: $last) {
  edges { node { databaseId body sender { databaseId } } } } } } }`;
const SEND = `mutation ($input: MessageSendInput!) { messageSend(input: $input) { message { databaseId body sender { databaseId } } userErrors { code } } }`;
type GqlMessage = { databaseId: string; body: string | null; sender: { databaseId: number } | null };
const messageValue = (m: GqlMessage): MessageValue => ({ id: m.databaseId, body: m.body, senderId: m.sender?.databaseId ?? null });

const DELETE_MESSAGES = 'mutation ($ids: [ID!]!, $force: Boolean) { deleteMessages(ids: $ids, force: $force) { successfullyDeleted notFound } }';
const USER_BY_EXTERNAL_ID = `query ($externalUserId: Int!) { userByExternalId(externalUserId: $externalUserId) { ${GRAPHQL_USER_FIELDS} } }`;
const REGISTERED_USERS = `query ($udid: String) { registeredUsers(udid: $udid) { ${GRAPHQL_USER_FIELDS} } }`;
const REGISTERED_USERS_COMPACT = 'query ($udid: String) { registeredUsers(udid: $udid) { id phone } }';
const UPLOAD_ADDRESS_BOOK = `mutation ($contacts: [ContactInput!]!, $udid: String, $force: Boolean) {
  uploadAddressBook(contacts: $contacts, udid: $udid, force: $force) { created updated deleted rejected { index reasons } }
}`;
const ADDRESS_BOOK = 'query ($udid: String) { addressBook(udid: $udid) { name phone } }';

/** A GraphQL User (camelCase) as the spec's record. */
function specRecord(user: Record<string, unknown>): UserRecord {
  expect(Object.keys(user).sort()).toEqual(Object.values(USER_RECORD).sort());
  return Object.fromEntries(Object.entries(USER_RECORD).map(([name, graphqlName]) => [name, user[graphqlName]])) as UserRecord;
}

/** Variables without the undefined ones (absent, as opposed to an explicit null). */
const given = (variables: Record<string, unknown>) => Object.fromEntries(Object.entries(variables).filter(([, v]) => v !== undefined));

export function graphqlSurface(service: TestService): Surface {
  const fieldOf = new Map<HttpResult, string>();
  const run = async <T>(query: string, variables: Record<string, unknown>, headers: Headers, field: string): Promise<Result<T>> => {
    const res = await service.graphql(query, given(variables), headers);
    expect(res.status).toBeLessThan(500);
    fieldOf.set(res, field);
    const data = res.body.data as Record<string, T> | null | undefined;
    return res.body.errors === undefined && data ? ok(data[field]!) : failed(res);
  };
  const map = async <T, U>(result: Promise<Result<T>>, f: (value: T) => U): Promise<Result<U>> => {
    const r = await result;
    return r.ok ? ok(f(r.value)) : r;
  };
  return {
    name: 'GraphQL',
    createSession: (request) =>
      run(`mutation ($input: SessionRequestInput!) { createSession(input: $input) { ${SESSION_FIELDS} } }`, { input: request }, {}, 'createSession'),
    session: (headers) => run(`{ session { ${SESSION_FIELDS} } }`, {}, headers, 'session'),
    endSession: (headers) => run<true>('mutation { endSession }', {}, headers, 'endSession'),
    login: (headers, credentials) =>
      run(
        'mutation ($login: String, $email: String, $password: String!) { login(login: $login, email: $email, password: $password) { id login } }',
        { ...credentials },
        headers,
        'login',
      ),
    logout: async (headers) => {
      const result = await run<{ userId: number | null }>('mutation { logout { userId } }', {}, headers, 'logout');
      if (result.ok) expect(result.value.userId).toBeNull();
      return result.ok ? ok(true as const) : result;
    },
    deleteMessages: (headers, ids, force) =>
      map(run<{ successfullyDeleted: string[]; notFound: string[] }>(DELETE_MESSAGES, { ids, force }, headers, 'deleteMessages'), (r) => ({
        deleted: sorted(r.successfullyDeleted),
        notFound: sorted(r.notFound),
      })),
    dialogs: (headers, page = {}) => {
      // GraphQL pages by cursor: the adapter reads the first skip + limit and drops the skipped.
      const skip = page.skip ?? 0;
      return map(
        run<{ dialogs: { totalCount: number; edges: { node: Record<string, any> }[] } }>(DIALOGS, { first: skip + (page.limit ?? 100) }, headers, 'viewer'),
        (v) => ({
          total: v.dialogs.totalCount,
          dialogs: v.dialogs.edges.slice(skip).map(({ node: d }) => ({
            id: d.databaseId,
            name: d.name,
            type: d.type,
            ownerId: d.owner?.databaseId ?? null,
            occupantIds: d.occupants.map((u: { databaseId: number }) => u.databaseId),
            lastMessage: d.lastMessage?.body ?? null,
            lastMessageUserId: d.lastMessage?.sender?.databaseId ?? null,
          })),
        }),
      );
    },
    history: async (headers, dialogId, newest) => {
      const result = await run<{ messages: { edges: { node: GqlMessage }[] } } | null>(
        HISTORY,
        { id: toGlobalId('Dialog', dialogId), ...(newest === undefined ? { first: 1000 } : { last: newest }) },
        headers,
        'node',
      );
      if (!result.ok) return result;
      // A dialog the caller cannot see is null, as an absent one: REST's 404.
      if (result.value === null) return failed({ status: 404, headers: new Headers(), text: '', body: null });
      return ok(result.value.messages.edges.map((e) => messageValue(e.node)));
    },
    sendMessage: (headers, dialogId, body) =>
      map(
        run<{ message: GqlMessage | null; userErrors: { code: 'DIALOG_NOT_FOUND' | 'BODY_BLANK' | 'BODY_TOO_LONG' }[] }>(
          SEND,
          { input: { dialogId, body } },
          headers,
          'messageSend',
        ),
        (r) => (r.message ? { message: messageValue(r.message) } : { refused: r.userErrors[0]!.code }),
      ),
    userByExternalId: (headers, externalUserId) =>
      // The field is nullable, but a lookup without an error always finds the user.
      map(run<Record<string, unknown>>(USER_BY_EXTERNAL_ID, { externalUserId }, headers, 'userByExternalId'), specRecord),
    registeredUsers: (headers, udid) =>
      map(run<Record<string, unknown>[]>(REGISTERED_USERS, { udid }, headers, 'registeredUsers'), (users) => users.map(specRecord)),
    registeredUsersCompact: (headers, udid) => run(REGISTERED_USERS_COMPACT, { udid }, headers, 'registeredUsers'),
    uploadAddressBook: (headers, { contacts, udid, force }) => run(UPLOAD_ADDRESS_BOOK, { contacts, udid, force }, headers, 'uploadAddressBook'),
    addressBook: (headers, udid) => run(ADDRESS_BOOK, { udid }, headers, 'addressBook'),
    expectFailure(result, code, message, field) {
      if (result.ok) throw new Error(`expected ${code}, got success ${JSON.stringify(result.value)}`);
      const res = result.failure;
      const name = fieldOf.get(res);
      // A resolver's error: HTTP 200, one error at the field, and the field
      // null (a non-null field nulls data instead: the surface-only files pin which).
      expect(res.status).toBe(200);
      expect(res.body.errors).toEqual([
        expect.objectContaining({
          message: typeof message === 'string' ? message : expect.stringMatching(message),
          path: [name],
          extensions: expect.objectContaining({ code, ...(field === undefined ? {} : { field }) }),
        }),
      ]);
      expect([null, { [name!]: null }]).toContainEqual(res.body.data);
    },
  };
}

export const SURFACES = ['REST', 'GraphQL'] as const;

/** The adapter of a surface over a service (one that has started, or a useService() handle). */
export const surfaceOf = (name: (typeof SURFACES)[number], service: TestService): Surface => (name === 'REST' ? restSurface(service) : graphqlSurface(service));
