// GET /openapi.json: a valid OpenAPI 3.1 document, and a true one. Real
// requests drive every REST path through every status a test can produce; each
// status must be documented for its operation and each body must match the
// schema the document gives for that path, method and status.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { AddressInfo } from 'node:net';
import { type App, createApp } from '../../src/app';
import { type Database, openDatabase } from '../../src/db';
import type { OpenApiDocument, Operation, Response } from '../../src/rest/openapi';
import { fetchResult, type HttpResult, type RequestOptions, startService, type TestService } from '../support/service';
import { createFullUser, seedTenant, type Tenant } from '../support/seed';

const DELETE = { path: '/chat/Message/{ids}.json', method: 'delete' } as const;
const REGISTERED = { path: '/address_book/registered_users.json', method: 'get' } as const;
const UPLOAD = { path: '/address_book.json', method: 'post' } as const;
const LOOKUP = { path: '/users/external/{external_user_id}.json', method: 'get' } as const;
type OperationRef = typeof DELETE | typeof REGISTERED | typeof UPLOAD | typeof LOOKUP;

/** Documented statuses no test can produce, and why. Everything else documented must be exercised. */
const NOT_PRODUCIBLE: Record<string, string> = {
  'get /address_book/registered_users.json 413': 'GET bodies are never read (Fastify parses no GET body)',
  'get /address_book/registered_users.json 415': 'GET bodies are never read (Fastify parses no GET body)',
  'get /users/external/{external_user_id}.json 413': 'GET bodies are never read (Fastify parses no GET body)',
  'get /users/external/{external_user_id}.json 429': 'no rate limit exists in this version (TOO_MANY_REQUESTS is reserved)',
};

let service: TestService;
let document: OpenApiDocument;
let ajv: Ajv2020;
const validators = new Map<string, ValidateFunction>();
/** "method path status" of every checked response. */
const exercised = new Set<string>();

beforeAll(async () => {
  service = await startService();
  const res = await service.rest('GET', '/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  document = res.body;

  ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  // The whole document is one schema resource, so "#/components/schemas/…"
  // resolves as in OpenAPI; its top-level OpenAPI members are inert keywords.
  for (const keyword of Object.keys(document).filter((key) => key !== 'components')) ajv.addKeyword(keyword);
  ajv.addKeyword('components');
  ajv.addSchema(document as object, DOCUMENT_ID);
});

afterAll(async () => {
  await service?.close();
});

const DOCUMENT_ID = 'urn:openapi:rest';

const pointer = (...segments: string[]): string =>
  segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

const operationOf = (op: OperationRef): Operation => {
  const operation = document.paths[op.path]?.[op.method];
  if (!operation) throw new Error(`the document has no ${op.method.toUpperCase()} ${op.path}`);
  return operation;
};

/** The response object for a status, following a $ref to components.responses if there is one. */
function responseOf(op: OperationRef, status: number): { response: Response; location: string[] } | undefined {
  const entry = operationOf(op).responses[String(status)];
  if (!entry) return undefined;
  if ('$ref' in entry) {
    const location = entry.$ref.replace(/^#\//, '').split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    let target: any = document;
    for (const segment of location) target = target?.[segment];
    if (!target) throw new Error(`unresolved ${entry.$ref}`);
    return { response: target as Response, location };
  }
  return { response: entry, location: ['paths', op.path, op.method, 'responses', String(status)] };
}

function validatorFor(op: OperationRef, status: number): ValidateFunction {
  const key = `${op.method} ${op.path} ${status}`;
  let validate = validators.get(key);
  if (!validate) {
    const found = responseOf(op, status)!;
    if (!found.response.content?.['application/json']?.schema) throw new Error(`${key}: no application/json schema`);
    const ref = `${DOCUMENT_ID}#/${pointer(...found.location, 'content', 'application/json', 'schema')}`;
    validate = ajv.compile({ $ref: ref });
    validators.set(key, validate);
  }
  return validate;
}

/** The status is documented for the operation and the body matches its schema. */
function expectDocumented(op: OperationRef, res: HttpResult, expectedStatus: number): void {
  const where = `${op.method.toUpperCase()} ${op.path} → ${res.status} ${res.text.slice(0, 300)}`;
  expect([where, res.status]).toEqual([where, expectedStatus]);
  const documented = Object.keys(operationOf(op).responses);
  if (!documented.includes(String(res.status))) {
    throw new Error(`${where}: status ${res.status} is not documented (documented: ${documented.join(', ')})`);
  }
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const validate = validatorFor(op, res.status);
  if (!validate(res.body)) {
    throw new Error(`${where}: body does not match the documented schema: ${ajv.errorsText(validate.errors, { separator: '\n' })}`);
  }
  exercised.add(`${op.method} ${op.path} ${res.status}`);
}

const send = (method: string, path: string, options?: RequestOptions) => service.rest(method, path, options);

const OVERSIZED = JSON.stringify({ force: 1, padding: 'x'.repeat(2 * 1024 * 1024 + 1) });

describe('the document', () => {
  test('is a valid OpenAPI 3.1 document', async () => {
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const validator = new Validator();
    const result = await validator.validate(document as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  test('describes the four REST operations, their credentials and their parameters', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths).sort()).toEqual([REGISTERED.path, UPLOAD.path, DELETE.path, LOOKUP.path].sort());
    expect(Object.values(document.components.securitySchemes).map((s) => [s.type, s.in, s.name])).toEqual([
      ['apiKey', 'header', 'SVC-Token'],
      ['apiKey', 'header', 'Authorization'],
      ['apiKey', 'header', 'On-Behalf-Of'],
    ]);
    const params = (op: OperationRef) => (operationOf(op).parameters ?? []).map((p) => `${p.in}:${p.name}`);
    expect(params(DELETE)).toEqual(['path:ids', 'query:force']);
    expect(Object.keys(operationOf(DELETE).requestBody!.content)).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    expect(params(REGISTERED)).toEqual(['query:udid', 'query:compact', 'query:force']);
    expect(Object.keys(operationOf(UPLOAD).requestBody!.content)).toEqual(['application/json']);
    expect(params(LOOKUP)).toEqual(['path:external_user_id']);
    for (const op of [DELETE, REGISTERED, UPLOAD, LOOKUP]) {
      expect(Object.keys(operationOf(op).responses)).toEqual(
        expect.arrayContaining(['200', '400', '401', '403', '404', '413', '422', '500', '503']),
      );
    }
  });

  test('the user record has its 19 fields, all required, and no others', () => {
    const user = document.components.schemas.User!;
    expect(user.additionalProperties).toBe(false);
    expect(Object.keys(user.properties!)).toHaveLength(19);
    expect([...user.required!].sort()).toEqual(Object.keys(user.properties!).sort());
  });

  test('a body that drifts from the document is rejected', () => {
    const validate = validatorFor(LOOKUP, 200);
    const user = {
      id: 1, full_name: null, email: null, login: 'x', phone: null, website: null,
      created_at: '2024-01-01T00:00:00.000Z', updated_at: '2024-01-01T00:00:00.000Z', last_request_at: null,
      external_user_id: 1, facebook_id: null, twitter_id: null, blob_id: null, custom_data: null,
      age_over16: false, allow_statistics_analysis: false, allow_sales_activities: false, parents_contacts: '', user_tags: '',
    };
    expect(validate({ user })).toBe(true);
    expect(validate({ user: { ...user, extra: 1 } })).toBe(false);
    expect(validate({ user: { ...user, parents_contacts: null } })).toBe(false);
    const { login: _login, ...missing } = user;
    expect(validate({ user: missing })).toBe(false);
    expect(validatorFor(LOOKUP, 404)({ code: 'NOT_FOUND', message: 'x', extra: true })).toBe(false);
    expect(validatorFor(DELETE, 422)({ errors: { base: ['x'] } })).toBe(false);
  });
});

describe('DELETE /chat/Message/{ids}.json', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await seedTenant(service.app.services);
  });
  const del = (ids: string, options: RequestOptions & { query?: string } = {}) =>
    send('DELETE', `/chat/Message/${ids}.json${options.query ?? ''}`, options);

  test('200: hidden for the caller (query force=0), deleted for everyone (JSON body, form body), unknown ids', async () => {
    const [m0, m1, m2] = t.messageIds as [string, string, string];
    expectDocumented(DELETE, await del(`${m0},ffffffffffffffffffffffff`, { headers: t.as.member, query: '?force=0' }), 200);
    expectDocumented(DELETE, await del(m1, { headers: t.as.owner, body: { force: 1 } }), 200);
    expectDocumented(DELETE, await del(`${m2},nope`, { headers: t.as.owner, body: { force: '1' }, form: true }), 200);
    expectDocumented(DELETE, await del(m0, { headers: t.as.apiKey }), 200);
  });

  test('400: both credentials, On-Behalf-Of with SVC-Token, invalid JSON, a body that is not an object', async () => {
    const id = t.messageIds[0]!;
    expectDocumented(DELETE, await del(id, { headers: { ...t.as.owner, ...t.as.apiKey } }), 400);
    expectDocumented(DELETE, await del(id, { headers: { ...t.as.owner, 'On-Behalf-Of': String(t.member.id) } }), 400);
    expectDocumented(DELETE, await del(id, { headers: { ...t.as.owner, 'content-type': 'application/json' }, raw: '{"force":' }), 400);
    expectDocumented(DELETE, await del(id, { headers: t.as.owner, body: [1] }), 400);
  });

  test('401: no credentials, unknown token, malformed Authorization, unknown API key', async () => {
    const id = t.messageIds[0]!;
    for (const headers of <Record<string, string>[]>[{}, { 'SVC-Token': 'nope' }, { Authorization: 'Bearer x' }, { Authorization: 'ApiKey nope' }]) {
      expectDocumented(DELETE, await del(id, { headers }), 401);
    }
  });

  test('403: WrongPermissions, application token, unknown On-Behalf-Of', async () => {
    const other = await seedTenant(service.app.services);
    const [, , m2] = other.messageIds as [string, string, string];
    expectDocumented(DELETE, await del(m2, { headers: other.as.member, body: { force: 1 } }), 403);
    expectDocumented(DELETE, await del(m2, { headers: t.as.apiKey }), 403);
    expectDocumented(DELETE, await del(m2, { headers: other.as.app }), 403);
    expectDocumented(DELETE, await del(m2, { headers: { ...other.as.apiKey, 'On-Behalf-Of': '0' } }), 403);
  });

  test('404: the path without its .json suffix', async () => {
    expectDocumented(DELETE, await send('DELETE', `/chat/Message/${t.messageIds[0]}`, { headers: t.as.owner }), 404);
  });

  test('413: a body over 2 MiB; 415: a body of another content type', async () => {
    const id = t.messageIds[0]!;
    expectDocumented(DELETE, await del(id, { headers: { ...t.as.owner, 'content-type': 'application/json' }, raw: OVERSIZED }), 413);
    expectDocumented(DELETE, await del(id, { headers: { ...t.as.owner, 'content-type': 'application/xml' }, raw: '<force>1</force>' }), 415);
  });

  test('422: an empty id, more than 1000 ids, force not 0 or 1', async () => {
    expectDocumented(DELETE, await del('a,,b', { headers: t.as.owner }), 422);
    expectDocumented(DELETE, await del(Array.from({ length: 1001 }, (_, i) => `id${i}`).join(','), { headers: t.as.owner }), 422);
    expectDocumented(DELETE, await del('abc', { headers: t.as.owner, body: { force: 2 } }), 422);
    expectDocumented(DELETE, await del('abc', { headers: t.as.owner, query: '?force=yes' }), 422);
  });

  test('500: an unexpected failure', async () => {
    const spy = jest.spyOn(service.app.services.messages, 'delete').mockRejectedValueOnce(new Error('boom'));
    try {
      expectDocumented(DELETE, await del('abc', { headers: t.as.owner }), 500);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('GET /address_book/registered_users.json', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await seedTenant(service.app.services);
    const up = await send('POST', '/address_book.json', {
      headers: t.as.owner,
      body: { contacts: [{ name: 'Member', phone: t.member.phone }, { name: 'Outsider', phone: t.outsider.phone }] },
    });
    expect(up.status).toBe(200);
  });
  const registered = (query: string, headers: Record<string, string>) =>
    send('GET', `/address_book/registered_users.json${query}`, { headers });

  test('200: full records, compact records, an empty book, through a user token and On-Behalf-Of', async () => {
    const full = await registered('', t.as.owner);
    expectDocumented(REGISTERED, full, 200);
    expect(full.body.items).toHaveLength(2);
    const compact = await registered('?compact=1&force=0', t.as.owner);
    expectDocumented(REGISTERED, compact, 200);
    expect(compact.body.items[0].user).toEqual({ id: t.member.id, phone: t.member.phone });
    expectDocumented(REGISTERED, await registered('?compact=0&udid=nothing-here', t.as.owner), 200);
    expectDocumented(REGISTERED, await registered('', t.as.onBehalfOf(t.owner.id)), 200);
  });

  test('400: both credentials, On-Behalf-Of with SVC-Token', async () => {
    expectDocumented(REGISTERED, await registered('', { ...t.as.owner, ...t.as.apiKey }), 400);
    expectDocumented(REGISTERED, await registered('', { ...t.as.owner, 'On-Behalf-Of': String(t.member.id) }), 400);
  });

  test('401: no credentials, unknown token, unknown API key', async () => {
    for (const headers of <Record<string, string>[]>[{}, { 'SVC-Token': 'nope' }, { Authorization: 'ApiKey nope' }]) {
      expectDocumented(REGISTERED, await registered('', headers), 401);
    }
  });

  test('403: application token, API key without a user, unknown On-Behalf-Of', async () => {
    expectDocumented(REGISTERED, await registered('', t.as.app), 403);
    expectDocumented(REGISTERED, await registered('', t.as.apiKey), 403);
    expectDocumented(REGISTERED, await registered('', { ...t.as.apiKey, 'On-Behalf-Of': 'abc' }), 403);
  });

  test('404: the path without its .json suffix', async () => {
    expectDocumented(REGISTERED, await send('GET', '/address_book/registered_users', { headers: t.as.owner }), 404);
  });

  test('422: udid over 64 characters, compact or force not 0/1, a parameter given twice', async () => {
    expectDocumented(REGISTERED, await registered(`?udid=${'x'.repeat(65)}`, t.as.owner), 422);
    expectDocumented(REGISTERED, await registered('?compact=2', t.as.owner), 422);
    expectDocumented(REGISTERED, await registered('?force=true', t.as.owner), 422);
    expectDocumented(REGISTERED, await registered('?compact=1&compact=0', t.as.owner), 422);
  });

  test('500: an unexpected failure', async () => {
    const spy = jest.spyOn(service.app.services.addressBook, 'registeredUsers').mockRejectedValueOnce(new Error('boom'));
    try {
      expectDocumented(REGISTERED, await registered('', t.as.owner), 500);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('POST /address_book.json', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await seedTenant(service.app.services);
  });
  const upload = (options: RequestOptions) => send('POST', '/address_book.json', options);
  const contacts = [{ name: 'Member', phone: '+10000000102' }];

  test('200: an upload, a device upload, a forced replacement', async () => {
    expectDocumented(UPLOAD, await upload({ headers: t.as.owner, body: { contacts } }), 200);
    expectDocumented(UPLOAD, await upload({ headers: t.as.onBehalfOf(t.owner.id), body: { contacts, udid: 'phone-1', force: 0 } }), 200);
    const forced = await upload({ headers: t.as.owner, body: { contacts: [{ name: 'Outsider', phone: '+10000000103' }], force: 1 } });
    expectDocumented(UPLOAD, forced, 200);
    expect(forced.body).toEqual({ created: 1, updated: 0, deleted: 1 });
  });

  test('400: both credentials, invalid JSON, a body that is not an object', async () => {
    expectDocumented(UPLOAD, await upload({ headers: { ...t.as.owner, ...t.as.apiKey }, body: { contacts } }), 400);
    expectDocumented(UPLOAD, await upload({ headers: { ...t.as.owner, 'content-type': 'application/json' }, raw: '{' }), 400);
    expectDocumented(UPLOAD, await upload({ headers: t.as.owner, body: 'contacts' }), 400);
  });

  test('401: no credentials, unknown token', async () => {
    expectDocumented(UPLOAD, await upload({ body: { contacts } }), 401);
    expectDocumented(UPLOAD, await upload({ headers: { 'SVC-Token': 'nope' }, body: { contacts } }), 401);
  });

  test('403: application token, API key without a user', async () => {
    expectDocumented(UPLOAD, await upload({ headers: t.as.app, body: { contacts } }), 403);
    expectDocumented(UPLOAD, await upload({ headers: t.as.apiKey, body: { contacts } }), 403);
  });

  test('404: the path without its .json suffix', async () => {
    expectDocumented(UPLOAD, await send('POST', '/address_book', { headers: t.as.owner, body: { contacts } }), 404);
  });

  test('413: a body over 2 MiB; 415: a body of another content type', async () => {
    expectDocumented(UPLOAD, await upload({ headers: { ...t.as.owner, 'content-type': 'application/json' }, raw: OVERSIZED }), 413);
    expectDocumented(UPLOAD, await upload({ headers: { ...t.as.owner, 'content-type': 'application/xml' }, raw: '<contacts/>' }), 415);
  });

  test('422: an invalid phone, contacts missing or not a list, a long name, a long udid, force not 0/1', async () => {
    expectDocumented(UPLOAD, await upload({ headers: t.as.owner, body: { contacts: [{ name: 'x', phone: '12' }] } }), 422);
    expectDocumented(UPLOAD, await upload({ headers: t.as.owner, body: {} }), 422);
    expectDocumented(UPLOAD, await upload({ headers: t.as.owner, body: { contacts: contacts[0] } }), 422);
    expectDocumented(UPLOAD, await upload({ headers: t.as.owner, body: { contacts: [{ name: 'x'.repeat(256), phone: '+10000000102' }] } }), 422);
    expectDocumented(UPLOAD, await upload({ headers: t.as.owner, body: { contacts, udid: 'u'.repeat(65) } }), 422);
    expectDocumented(UPLOAD, await upload({ headers: t.as.owner, body: { contacts, force: 2 } }), 422);
  });

  test('500: an unexpected failure', async () => {
    const spy = jest.spyOn(service.app.services.addressBook, 'upload').mockRejectedValueOnce(new Error('boom'));
    try {
      expectDocumented(UPLOAD, await upload({ headers: t.as.owner, body: { contacts } }), 500);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('GET /users/external/{external_user_id}.json', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await seedTenant(service.app.services);
    // One user with every optional field set, one with none.
    await createFullUser(service.app.services, t.applicationId);
    await service.app.services.users.create({ applicationId: t.applicationId, login: 'bare', password: 'password123', externalUserId: 777 });
  });
  const lookup = (id: string | number, headers: Record<string, string>) => send('GET', `/users/external/${id}.json`, { headers });

  test('200: user token, API key, On-Behalf-Of; a full record, a bare record, the caller’s own record', async () => {
    expectDocumented(LOOKUP, await lookup(4242, t.as.owner), 200);
    expectDocumented(LOOKUP, await lookup(777, t.as.apiKey), 200);
    expectDocumented(LOOKUP, await lookup(101, t.as.owner), 200);
    expectDocumented(LOOKUP, await lookup(102, t.as.onBehalfOf(t.outsider.id)), 200);
  });

  test('400: both credentials, On-Behalf-Of with SVC-Token', async () => {
    expectDocumented(LOOKUP, await lookup(101, { ...t.as.owner, ...t.as.apiKey }), 400);
    expectDocumented(LOOKUP, await lookup(101, { ...t.as.owner, 'On-Behalf-Of': String(t.member.id) }), 400);
  });

  test('401: no credentials, unknown token, malformed Authorization, unknown API key', async () => {
    for (const headers of <Record<string, string>[]>[{}, { 'SVC-Token': 'nope' }, { Authorization: 'ApiKey' }, { Authorization: 'ApiKey nope' }]) {
      expectDocumented(LOOKUP, await lookup(101, headers), 401);
    }
  });

  test('403: application token, unknown On-Behalf-Of', async () => {
    expectDocumented(LOOKUP, await lookup(101, t.as.app), 403);
    expectDocumented(LOOKUP, await lookup(101, { ...t.as.apiKey, 'On-Behalf-Of': '0' }), 403);
  });

  test('404: an unknown external id, and the path without its .json suffix', async () => {
    expectDocumented(LOOKUP, await lookup(999, t.as.owner), 404);
    expectDocumented(LOOKUP, await lookup(2147483647, t.as.apiKey), 404);
    expectDocumented(LOOKUP, await send('GET', '/users/external/101', { headers: t.as.owner }), 404);
  });

  test('422: not an integer, or outside 1…2147483647', async () => {
    for (const id of ['abc', '1.5', '0', '-1', '2147483648']) expectDocumented(LOOKUP, await lookup(id, t.as.owner), 422);
  });

  test('500: an unexpected failure', async () => {
    const spy = jest.spyOn(service.app.services.users, 'findByExternalId').mockRejectedValueOnce(new Error('boom'));
    try {
      expectDocumented(LOOKUP, await lookup(101, t.as.owner), 500);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('503: the database cannot be reached', () => {
  // A second service whose database is a PostgreSQL address that refuses connections.
  let db: Database;
  let app: App;
  let baseUrl: string;
  beforeAll(async () => {
    db = await openDatabase({ url: 'postgres://postgres@127.0.0.1:1/unreachable', poolMax: 1, migrate: false });
    app = await createApp({ database: db, metrics: false });
    await app.fastify.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(app.fastify.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  async function down(method: string, path: string, body?: unknown): Promise<HttpResult> {
    const headers: Record<string, string> = { 'SVC-Token': 'any-token' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return fetchResult(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  }

  test('every path answers 503 in its documented shape', async () => {
    expectDocumented(DELETE, await down('DELETE', '/chat/Message/abc.json'), 503);
    expectDocumented(REGISTERED, await down('GET', '/address_book/registered_users.json'), 503);
    expectDocumented(UPLOAD, await down('POST', '/address_book.json', { contacts: [{ name: 'x', phone: '+10000000102' }] }), 503);
    expectDocumented(LOOKUP, await down('GET', '/users/external/101.json'), 503);
  });
});

test('every documented status of every operation was exercised, except the ones no request can produce', () => {
  const documented: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item) as [string, Operation][]) {
      for (const status of Object.keys(operation.responses)) documented.push(`${method} ${path} ${status}`);
    }
  }
  for (const key of Object.keys(NOT_PRODUCIBLE)) {
    expect([key, documented.includes(key)]).toEqual([key, true]);
    expect([key, exercised.has(key)]).toEqual([key, false]);
  }
  const missing = documented.filter((key) => !exercised.has(key) && !(key in NOT_PRODUCIBLE));
  expect(missing).toEqual([]);
});
