// GET /openapi.json: a valid OpenAPI 3.1 document, and a true one. The
// document is built from the routes' schemas and the error table; here real
// requests drive every route through every status the document gives it —
// each status must be produced by a request (no exemptions), every answer's
// status must be documented for its route, and every body must match the
// schema the document gives for that route and status.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { OpenApiDocument, Operation } from '../../src/rest/openapi';
import { REST_ROUTES, type RestRoute } from '../../src/rest/routes';
import { fetchResult, type HttpResult, type RequestOptions, startService, useService } from '../support/service';
import { createFullUser, seedTenant, type Tenant } from '../support/seed';
import { restForm, signedSessionRequest } from '../support/sessions';
import { requestHead, slowRequest } from '../support/slow-client';

const service = useService();
/** A service whose body bound is short, for the 408s (a body that goes silent). */
const stalling = useService({ timeouts: { headersMs: 1_000, bodyIdleMs: 500, requestMs: 3_000, keepAliveMs: 1_000 } });
let document: OpenApiDocument;
let ajv: Ajv2020;
const validators = new Map<string, ValidateFunction>();
const DOCUMENT_ID = 'urn:openapi:rest';

beforeAll(async () => {
  const res = await service.rest('GET', '/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  document = res.body;
  // Union types (["integer", "string"]) are plain JSON Schema; strict mode would ask to allow them.
  ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats(ajv);
  // The whole document is one schema resource, so "#/components/schemas/…"
  // resolves as in OpenAPI; its top-level OpenAPI members are inert keywords.
  for (const keyword of Object.keys(document).filter((key) => key !== 'components')) ajv.addKeyword(keyword);
  ajv.addKeyword('components');
  ajv.addSchema(document, DOCUMENT_ID);
});

const key = (route: RestRoute) => `${route.method} ${route.path}`;
const operationOf = (route: RestRoute): Operation => document.paths[route.path]![route.method.toLowerCase() as 'get']!;
const documentedStatuses = (route: RestRoute): number[] => Object.keys(operationOf(route).responses).map(Number);

const pointer = (...segments: string[]): string => segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

function validatorFor(route: RestRoute, status: number): ValidateFunction | undefined {
  const id = `${key(route)} ${status}`;
  if (!validators.has(id)) {
    const response = operationOf(route).responses[String(status)]!;
    if (!response.content) return undefined;
    const method = route.method.toLowerCase();
    validators.set(
      id,
      ajv.compile({ $ref: `${DOCUMENT_ID}#/${pointer('paths', route.path, method, 'responses', String(status), 'content', 'application/json', 'schema')}` }),
    );
  }
  return validators.get(id);
}

/** The answer's status is documented for the route and its body is what the document says. */
function expectDocumented(route: RestRoute, res: HttpResult, expected: number): void {
  const where = `${key(route)} → ${res.status} ${res.text.slice(0, 300)}`;
  expect([where, res.status]).toEqual([where, expected]);
  expect([where, documentedStatuses(route)]).toEqual([where, expect.arrayContaining([res.status])]);
  const validate = validatorFor(route, res.status);
  if (!validate) {
    expect([where, res.text]).toEqual([where, '']);
    return;
  }
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  if (!validate(res.body)) throw new Error(`${where}: the body does not match the document: ${ajv.errorsText(validate.errors, { separator: '\n' })}`);
}

// ---------------------------------------------------------------------------
// How to produce each status of each route. Every documented status must have
// a producer, and every producer's answer must be documented.

interface Request {
  method: string;
  path: string;
  options?: RequestOptions;
  /** Send the headers and the start of a body, then nothing (to the stalling service). */
  stall?: boolean;
}

type Producer = (t: Tenant) => Promise<Request> | Request;

const route = (operationId: string): RestRoute => REST_ROUTES.find((r) => r.operationId === operationId)!;
const req = (r: RestRoute, path: string, options: RequestOptions = {}): Request => ({ method: r.method, path, options });
const newSession = async (t: Tenant, userId?: number) => ({
  'SVC-Token': (await service.app.provisioning.applications.createSession(t.applicationId, userId)).token,
});

/** A request of each route that succeeds (also the base of the 429, 500 and 503 cases). */
const OK: Record<string, Producer> = {
  listDialogs: (t) => req(route('listDialogs'), '/chat/Dialog.json?limit=10&skip=0', { headers: t.as.owner }),
  listMessages: (t) => req(route('listMessages'), `/chat/Message.json?chat_dialog_id=${t.dialogId}&sort_desc=date_sent&limit=2`, { headers: t.as.member }),
  createMessage: (t) => req(route('createMessage'), '/chat/Message.json', { headers: t.as.member, body: { chat_dialog_id: t.dialogId, message: 'hi' } }),
  deleteMessages: (t) => req(route('deleteMessages'), `/chat/Message/${t.messageIds[0]},ffffffffffffffffffffffff.json`, { headers: t.as.member }),
  registeredUsers: (t) => req(route('registeredUsers'), '/address_book/registered_users.json?compact=1', { headers: t.as.owner }),
  uploadAddressBook: (t) =>
    req(route('uploadAddressBook'), '/address_book.json', { headers: t.as.owner, body: { contacts: [{ name: 'M', phone: t.member.phone }] } }),
  addressBook: (t) => req(route('addressBook'), '/address_book.json', { headers: t.as.owner }),
  userByExternalId: (t) => req(route('userByExternalId'), '/users/external/102.json', { headers: t.as.owner }),
  createSession: (t) =>
    req(route('createSession'), '/session.json', { body: restForm(signedSessionRequest(t, { login: 'owner', password: 'password123' })), form: true }),
  session: (t) => req(route('session'), '/session.json', { headers: t.as.owner }),
  endSession: async (t) => req(route('endSession'), '/session.json', { headers: await newSession(t, t.owner.id) }),
  login: async (t) => req(route('login'), '/login.json', { headers: await newSession(t), body: { login: 'member', password: 'password123' } }),
  logout: async (t) => req(route('logout'), '/login.json', { headers: await newSession(t, t.member.id) }),
};

/** The request's path, with what a status needs changed. */
const okWith = async (operationId: string, t: Tenant, change: (r: Request) => Request): Promise<Request> => change(await OK[operationId]!(t));
const withHeaders =
  (headers: Record<string, string>) =>
  (r: Request): Request => ({ ...r, options: { ...r.options, headers } });
const withBody =
  (options: RequestOptions) =>
  (r: Request): Request => ({ ...r, options: { ...options, headers: { ...r.options?.headers, ...options.headers } } });

/** The route's OK request, made for an application of its own that is then disabled (403 APPLICATION_DISABLED). */
const ofDisabledApplication = (id: string) => async (): Promise<Request> => {
  const d = await seedTenant(service.app.provisioning);
  const q = await OK[id]!(d);
  await service.app.provisioning.applications.setDisabled(d.applicationId, true);
  return q;
};

const OVERSIZED = JSON.stringify({ padding: 'x'.repeat(2 * 1024 * 1024 + 1) });

/** Statuses every route of a kind answers the same way. */
function common(r: RestRoute, status: number): Producer[] {
  const id = r.operationId;
  switch (status) {
    case 400:
      return r.callers === 'none'
        ? [(t) => okWith(id, t, withBody({ raw: '{"application_id":', headers: { 'content-type': 'application/json' } }))]
        : [
            (t) => okWith(id, t, withHeaders({ 'SVC-Token': t.ownerToken, 'QB-Token': t.ownerToken })),
            (t) => okWith(id, t, withHeaders({ ...t.as.owner, ...t.as.apiKey })),
          ];
    case 401:
      return r.callers === 'none' ? [] : [(t) => okWith(id, t, withHeaders({})), (t) => okWith(id, t, withHeaders({ 'QB-Token': 'nope' }))];
    case 403:
      if (r.callers === 'session') return [(t) => okWith(id, t, withHeaders(t.as.apiKey)), ofDisabledApplication(id)];
      if (r.callers === 'user')
        return [
          (t) => okWith(id, t, withHeaders(t.as.app)),
          (t) => okWith(id, t, withHeaders({ ...t.as.apiKey, 'On-Behalf-Of': '999999' })),
          ofDisabledApplication(id),
        ];
      if (r.callers === 'any') return [(t) => okWith(id, t, withHeaders({ ...t.as.apiKey, 'On-Behalf-Of': '999999' })), ofDisabledApplication(id)];
      return r.errors.includes('APPLICATION_DISABLED') ? [ofDisabledApplication(id)] : [];
    case 404:
      return r.url.endsWith(':file') ? [(t) => okWith(id, t, (q) => ({ ...q, path: q.path.replace(/\.json(\?|,|$)/, '$1') }))] : [];
    case 413:
      return [
        async (t) => {
          const q = await OK[id]!(t);
          return { ...q, options: { headers: { ...q.options?.headers, 'content-type': 'application/json' }, raw: OVERSIZED } };
        },
      ];
    case 408:
      return [async (t) => ({ ...(await OK[id]!(t)), stall: true })];
    case 415:
      return [
        async (t) => {
          const q = await OK[id]!(t);
          return { ...q, options: { headers: { ...q.options?.headers, 'content-type': 'text/plain' }, raw: 'force=1' } };
        },
      ];
    default:
      return [];
  }
}

/** Statuses particular to a route. */
const SPECIFIC: Record<string, Partial<Record<number, Producer[]>>> = {
  listDialogs: {
    200: [(t) => req(route('listDialogs'), '/chat/Dialog.json', { headers: t.as.onBehalfOf(t.member.id) })],
    422: [
      (t) => req(route('listDialogs'), '/chat/Dialog.json?limit=0', { headers: t.as.owner }),
      (t) => req(route('listDialogs'), '/chat/Dialog.json?skip=10001', { headers: t.as.owner }),
    ],
  },
  listMessages: {
    200: [(t) => req(route('listMessages'), `/chat/Message.json?chat_dialog_id=${t.dialogId}&skip=1`, { headers: t.as.owner })],
    404: [(t) => req(route('listMessages'), `/chat/Message.json?chat_dialog_id=${t.dialogId}`, { headers: t.as.outsider })],
    422: [
      (t) => req(route('listMessages'), '/chat/Message.json', { headers: t.as.owner }),
      (t) => req(route('listMessages'), `/chat/Message.json?chat_dialog_id=${t.dialogId}&sort_desc=name`, { headers: t.as.owner }),
      (t) => req(route('listMessages'), `/chat/Message.json?chat_dialog_id=${t.dialogId}&limit=101`, { headers: t.as.owner }),
    ],
  },
  createMessage: {
    201: [(t) => req(route('createMessage'), '/chat/Message.json', { headers: t.as.owner, body: { chat_dialog_id: t.dialogId, message: 'form' }, form: true })],
    404: [(t) => req(route('createMessage'), '/chat/Message.json', { headers: t.as.outsider, body: { chat_dialog_id: t.dialogId, message: 'hi' } })],
    422: [
      (t) => req(route('createMessage'), '/chat/Message.json', { headers: t.as.owner, body: { chat_dialog_id: t.dialogId, message: ' ' } }),
      (t) => req(route('createMessage'), '/chat/Message.json', { headers: t.as.owner, body: { chat_dialog_id: 'x', message: 'hi' } }),
      (t) => req(route('createMessage'), '/chat/Message.json', { headers: t.as.owner, body: { chat_dialog_id: t.dialogId, message: 'x'.repeat(10_001) } }),
    ],
  },
  deleteMessages: {
    200: [
      (t) => req(route('deleteMessages'), `/chat/Message/${t.messageIds[1]}.json`, { headers: t.as.owner, body: { force: 1 } }),
      (t) => req(route('deleteMessages'), `/chat/Message/${t.messageIds[2]},nope.json?force=0`, { headers: t.as.owner, body: { force: '1' }, form: true }),
    ],
    400: [(t) => req(route('deleteMessages'), `/chat/Message/${t.messageIds[0]}.json`, { headers: t.as.owner, body: [1] })],
    403: [(t) => req(route('deleteMessages'), `/chat/Message/${t.messageIds[0]}.json`, { headers: t.as.member, body: { force: 1 } })],
    422: [
      (t) => req(route('deleteMessages'), '/chat/Message/a,,b.json', { headers: t.as.owner }),
      (t) => req(route('deleteMessages'), `/chat/Message/${Array.from({ length: 1001 }, (_, i) => String(i)).join(',')}.json`, { headers: t.as.owner }),
      (t) => req(route('deleteMessages'), '/chat/Message/x.json?force=2', { headers: t.as.owner }),
    ],
  },
  registeredUsers: {
    200: [
      (t) => req(route('registeredUsers'), '/address_book/registered_users.json', { headers: t.as.owner }),
      (t) => req(route('registeredUsers'), '/address_book/registered_users.json?udid=A&compact=0', { headers: t.as.onBehalfOf(t.owner.id) }),
    ],
    422: [
      (t) => req(route('registeredUsers'), `/address_book/registered_users.json?udid=${'u'.repeat(65)}`, { headers: t.as.owner }),
      (t) => req(route('registeredUsers'), '/address_book/registered_users.json?compact=2', { headers: t.as.owner }),
    ],
  },
  uploadAddressBook: {
    200: [
      (t) =>
        req(route('uploadAddressBook'), '/address_book.json', {
          headers: t.as.owner,
          body: {
            contacts: [
              { name: 'x', phone: '1' },
              { phone: t.member.phone, destroy: 1 },
            ],
            udid: 'B',
            force: 1,
          },
        }),
    ],
    422: [
      (t) => req(route('uploadAddressBook'), '/address_book.json', { headers: t.as.owner, body: { contacts: 'x' } }),
      (t) => req(route('uploadAddressBook'), '/address_book.json', { headers: t.as.owner, body: { contacts: [], force: 2 } }),
    ],
  },
  addressBook: {
    200: [(t) => req(route('addressBook'), `/address_book.json?${encodeURIComponent('{"udid":"A"}')}`, { headers: t.as.owner })],
    400: [(t) => req(route('addressBook'), '/address_book.json?%7B%22udid', { headers: t.as.owner })],
    422: [(t) => req(route('addressBook'), `/address_book.json?udid=${'u'.repeat(65)}`, { headers: t.as.owner })],
  },
  userByExternalId: {
    200: [(t) => req(route('userByExternalId'), '/users/external/4242.json', { headers: t.as.apiKey })],
    404: [
      (t) => req(route('userByExternalId'), '/users/external/999.json', { headers: t.as.owner }),
      (t) => req(route('userByExternalId'), '/users/external/2147483647.json', { headers: t.as.apiKey }),
    ],
    422: [
      (t) => req(route('userByExternalId'), '/users/external/abc.json', { headers: t.as.owner }),
      (t) => req(route('userByExternalId'), '/users/external/0.json', { headers: t.as.owner }),
    ],
  },
  createSession: {
    201: [(t) => req(route('createSession'), '/session.json', { body: restForm(signedSessionRequest(t)), form: true })],
    401: [
      (t) => req(route('createSession'), '/session.json', { body: restForm(signedSessionRequest(t, { login: 'owner', password: 'wrong-one' })), form: true }),
    ],
    422: [
      (t) => req(route('createSession'), '/session.json', { body: restForm(signedSessionRequest(t, undefined, { secret: 'x' })), form: true }),
      (t) => req(route('createSession'), '/session.json', { body: restForm(signedSessionRequest(t, undefined, { authKey: 'x' })), form: true }),
      (t) => req(route('createSession'), '/session.json', { body: restForm(signedSessionRequest(t, undefined, { timestamp: 1 })), form: true }),
      (t) => req(route('createSession'), '/session.json', { body: { ...restForm(signedSessionRequest(t)), provider: 'facebook' }, form: true }),
      (t) => {
        const request = restForm(signedSessionRequest(t, undefined, { nonce: 'twice' }));
        return { method: 'POST', path: '/session.json', options: { body: request, form: true }, before: request } as Request;
      },
    ],
  },
  login: {
    401: [async (t) => req(route('login'), '/login.json', { headers: await newSession(t), body: { login: 'member', password: 'wrong-one' } })],
    422: [async (t) => req(route('login'), '/login.json', { headers: await newSession(t), body: { login: 'member' } })],
  },
};

/** The status a route's OK request answers with. */
const okStatus = (r: RestRoute) => r.schema.success.status;

function producersOf(r: RestRoute, status: number): Producer[] {
  const id = r.operationId;
  const own = SPECIFIC[id]?.[status] ?? [];
  const ok = status === okStatus(r) ? [OK[id]!] : [];
  return [...ok, ...own, ...common(r, status)];
}

/** Sends a request; a session request whose nonce must be used twice is sent twice (the second is the replay). */
async function send(r: Request & { before?: Record<string, string> }): Promise<HttpResult> {
  if (r.stall) {
    const head = requestHead(r.method, r.path, { ...r.options?.headers, 'Content-Type': 'application/json' }, 100);
    const answer = await slowRequest(stalling.baseUrl, { start: `${head}{"a":`, giveUpMs: 10_000 });
    return { status: answer.status ?? 0, headers: new Headers(answer.headers), text: answer.text, body: answer.body };
  }
  if (r.before) await service.rest('POST', '/session.json', { body: r.before, form: true });
  return service.rest(r.method, r.path, r.options);
}

describe('the document', () => {
  test('is a valid OpenAPI 3.1 document', async () => {
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const validator = new Validator();
    const result = await validator.validate(document as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  test('has one operation for each route, and the credential headers of the README', () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations.sort()).toEqual(REST_ROUTES.map(key).sort());
    expect(Object.values(document.components.securitySchemes).map((s) => s.name)).toEqual(['SVC-Token', 'QB-Token', 'Authorization', 'On-Behalf-Of']);
  });

  test('every route documents the request budgets (429), bugs (500) and the database (503: unreachable, busy, too slow)', () => {
    for (const r of REST_ROUTES) {
      const responses = operationOf(r).responses;
      expect([key(r), Object.keys(responses)]).toEqual([key(r), expect.arrayContaining(['429', '500', '503'])]);
      expect(responses['503']!.description).toEqual(expect.stringContaining('DATABASE_BUSY'));
      expect(responses['503']!.description).toEqual(expect.stringContaining('DATABASE_TIMEOUT'));
      expect(responses['429']!.headers).toHaveProperty('Retry-After');
    }
  });

  test('the user record has the 19 fields of the spec, all required, and no others', () => {
    const user = document.components.schemas.User!;
    expect(user.additionalProperties).toBe(false);
    expect(Object.keys(user.properties!)).toHaveLength(19);
    expect([...user.required!].sort()).toEqual(Object.keys(user.properties!).sort());
    expect(user.properties!.last_request_at!.type).toEqual(['string', 'null']);
    expect(user.properties!.login!.type).toBe('string');
  });

  test('a body that drifts from the document is rejected', () => {
    const lookup = route('userByExternalId');
    const validate = validatorFor(lookup, 200)!;
    const user = {
      id: 1,
      full_name: null,
      email: null,
      login: 'x',
      phone: null,
      website: null,
      created_at: '2024-01-01T00:00:00.000Z',
      updated_at: '2024-01-01T00:00:00.000Z',
      last_request_at: null,
      external_user_id: 1,
      facebook_id: null,
      twitter_id: null,
      blob_id: null,
      custom_data: null,
      age_over16: false,
      allow_statistics_analysis: false,
      allow_sales_activities: false,
      parents_contacts: '',
      user_tags: '',
    };
    expect(validate({ user })).toBe(true);
    expect(validate({ user: { ...user, extra: 1 } })).toBe(false);
    expect(validate({ user: { ...user, parents_contacts: null } })).toBe(false);
    const { login: _login, ...missing } = user;
    expect(validate({ user: missing })).toBe(false);
    expect(validatorFor(lookup, 404)!({ code: 'NOT_FOUND', message: 'x', extra: true })).toBe(false);
    expect(validatorFor(route('deleteMessages'), 422)!({ errors: { base: ['x'] } })).toBe(false);
  });
});

describe.each(REST_ROUTES.map((r) => [key(r), r] as const))('%s', (_name, r) => {
  let t: Tenant;
  beforeAll(async () => {
    t = await seedTenant(service.app.provisioning);
    await createFullUser(service.app.provisioning, t.applicationId);
  });

  const statuses = () => documentedStatuses(r).filter((s) => ![429, 500, 503].includes(s));

  test('every documented status but 429, 500 and 503 (below) is produced by a request, in its documented shape', async () => {
    for (const status of statuses()) {
      const producers = producersOf(r, status);
      expect([`${key(r)} ${status}`, producers.length]).toEqual([`${key(r)} ${status}`, expect.any(Number)]);
      if (producers.length === 0) throw new Error(`${key(r)} documents ${status}, and no request here produces it`);
      for (const produce of producers) expectDocumented(r, await send(await produce(t)), status);
    }
  });

  test('its successful request with the leading slash doubled (an SDK base URL ending in "/", as Android builds them) succeeds in the documented shape', async () => {
    const ok = await OK[r.operationId]!(t);
    const res = await send({ ...ok, path: `/${ok.path}` });
    expect([`${key(r)} //`, res.status < 300]).toEqual([`${key(r)} //`, true]);
    expectDocumented(r, res, res.status);
  });
});

describe('429, 500 and 503 on every route', () => {
  /** A second service over the same database, with budgets of one request. */
  const limited = useService({ rateLimit: { windowMs: 60_000, perCredential: 1, perAddress: 1_000 } });
  let t: Tenant;
  beforeAll(async () => {
    t = await seedTenant(service.app.provisioning);
  });

  test.each(REST_ROUTES.map((r) => [key(r), r] as const))('%s: the second request with one credential is 429 in the documented shape', async (_name, r) => {
    if (r.callers === 'none') {
      // No credential: the address budget, in a service of its own.
      const byAddress = await startService({ rateLimit: { windowMs: 60_000, perCredential: 1_000, perAddress: 1 } });
      try {
        const first = await OK[r.operationId]!(t);
        await byAddress.rest(first.method, first.path, first.options);
        const second = await OK[r.operationId]!(t);
        expectDocumented(r, await byAddress.rest(second.method, second.path, second.options), 429);
      } finally {
        await byAddress.close();
      }
      return;
    }
    const headers = { 'QB-Token': (await service.app.provisioning.applications.createSession(t.applicationId, t.owner.id)).token };
    const first = await OK[r.operationId]!(t);
    await limited.rest(first.method, first.path, { ...first.options, headers });
    const res = await limited.rest(first.method, first.path, { ...first.options, headers });
    expectDocumented(r, res, 429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  test.each(REST_ROUTES.map((r) => [key(r), r] as const))('%s: an unexpected failure is 500 in the documented shape, revealing nothing', async (_name, r) => {
    // The first service call of the route fails as a bug would.
    const spy =
      r.callers === 'none'
        ? jest.spyOn(service.app.services.sessions, 'create').mockRejectedValueOnce(new Error('boom'))
        : jest.spyOn(service.app.services.auth, 'authenticate').mockRejectedValueOnce(new Error('boom'));
    try {
      const res = await send(await OK[r.operationId]!(t));
      expectDocumented(r, res, 500);
      expect(res.text).not.toContain('boom');
    } finally {
      spy.mockRestore();
    }
  });

  describe('503: the database cannot be reached', () => {
    // A service whose database is a PostgreSQL address that refuses connections.
    const unreachable = useService({ database: { url: 'postgres://postgres@127.0.0.1:1/unreachable', poolMax: 1, migrate: false }, metrics: false });

    test.each(REST_ROUTES.map((r) => [key(r), r] as const))('%s answers 503 in its documented shape', async (_name, r) => {
      const ok = await OK[r.operationId]!(t);
      const headers: Record<string, string> = r.callers === 'none' ? {} : { 'QB-Token': 'any-token' };
      const { body, form } = ok.options ?? {};
      if (body !== undefined) headers['content-type'] = form ? 'application/x-www-form-urlencoded' : 'application/json';
      const payload = body === undefined ? undefined : form ? new URLSearchParams(body as Record<string, string>).toString() : JSON.stringify(body);
      expectDocumented(r, await fetchResult(`${unreachable.baseUrl}${ok.path}`, { method: r.method, headers, body: payload }), 503);
    });
  });
});
