// Trusted documents and persisted queries on /graphql (src/graphql/trusted-documents.ts),
// configured as main configures them (appOptionsFromConfig(loadConfig(...))):
// GRAPHQL_TRUSTED_DOCUMENTS off (automatic persisted queries), allow (hashes
// of the manifest accepted, free-form documents too) and enforce (manifest
// only, the explorer in development excepted); bad manifests stop the service.
//
// The generated frontend example's own manifest is exercised by its clients in
// test/examples/frontend.test.ts.
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getIntrospectionQuery } from 'graphql';
import { type App, appOptionsFromConfig } from '../../src/app';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/errors';
import { EXPLORER_KEY_HEADER, loadManifest } from '../../src/graphql/trusted-documents';
import { fetchResult, type HttpResult, type TestService, useService } from '../support/service';
import { seedTenant, type Tenant } from '../support/seed';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const LOOKUP = 'query Lookup($id: Int!) { userByExternalId(externalUserId: $id) { login } }';
const UPLOAD = 'mutation Upload($phone: String!) { uploadAddressBook(contacts: [{name: "x", phone: $phone}]) { created } }';
const FREE_FORM = 'query Other { userByExternalId(externalUserId: 103) { login fullName } }';

const dir = mkdtempSync(path.join(tmpdir(), 'trusted-documents-'));
function manifestFile(name: string, content: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}
const MANIFEST = manifestFile('manifest.json', { [sha256(LOOKUP)]: LOOKUP, [sha256(UPLOAD)]: UPLOAD });

/** The service as main builds it from environment variables, trusted documents off; start() builds others from theirs, over its database. */
const offService = useService({ env: {} });
let tenant: Tenant;

interface Service {
  base: string;
  provisioning: App['provisioning'];
  post(body: unknown, headers?: Record<string, string>): Promise<HttpResult>;
  get(params: Record<string, unknown>, headers?: Record<string, string>): Promise<HttpResult>;
}

/** The service as main builds it from these variables, over this file's database. */
async function serviceWith(env: Record<string, string>): Promise<Service> {
  return over(await offService.start({ env }));
}

function over({ baseUrl: base, app }: TestService): Service {
  return {
    base,
    provisioning: app.provisioning,
    post: (body, headers = tenant.as.owner) =>
      fetchResult(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }),
    get: (params, headers = tenant.as.owner) => {
      const search = new URLSearchParams(Object.entries(params).map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)]));
      return fetchResult(`${base}/graphql?${search}`, { headers });
    },
  };
}

const persisted = (document: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(document) } });
const codeOf = (res: HttpResult): string | undefined => res.body?.errors?.[0]?.extensions?.code;

let off: Service;
let allow: Service;
let enforce: Service;

beforeAll(async () => {
  off = over(offService);
  allow = await serviceWith({ GRAPHQL_TRUSTED_DOCUMENTS: 'allow', GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST: MANIFEST });
  enforce = await serviceWith({ GRAPHQL_TRUSTED_DOCUMENTS: 'enforce', GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST: MANIFEST });
  tenant = await seedTenant(off.provisioning);
});

describe('configuration', () => {
  test.each(['allow', 'enforce'])('%s without a manifest stops the configuration, naming GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST', (mode) => {
    expect(() => loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: mode })).toThrow(/GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST: required/);
    expect(() => loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: 'sometimes' })).toThrow(/GRAPHQL_TRUSTED_DOCUMENTS:/);
  });

  test.each([
    ['a missing file', path.join(dir, 'nowhere.json'), /cannot read/],
    ['a file that is not JSON', manifestFile('bad.json', '{"a":'), /is not JSON/],
    ['a list', manifestFile('list.json', [LOOKUP]), /neither a persisted-documents manifest/],
    ['a document that is not text', manifestFile('number.json', { [sha256(LOOKUP)]: 5 }), /neither a persisted-documents manifest/],
    ['a key that is not the SHA-256 of its document', manifestFile('sha1.json', { abc: LOOKUP }), /"abc" is not the SHA-256 hash of its document/],
    ['a document that does not parse', manifestFile('parse.json', { [sha256('query {')]: 'query {' }), /does not parse/],
  ])('a manifest that cannot be used (%s) stops the service, naming the variable and why', (_what, file, reason) => {
    const config = loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: 'enforce', GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST: file });
    let thrown: unknown;
    try {
      appOptionsFromConfig(config);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as Error).message).toMatch(/^Invalid configuration:\n {2}GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST: /);
    expect((thrown as Error).message).toMatch(reason);
  });

  test("Apollo's persisted query manifest is read as well as the client preset's", () => {
    const file = manifestFile('apollo.json', {
      format: 'apollo-persisted-query-manifest',
      version: 1,
      operations: [{ id: sha256(LOOKUP), name: 'Lookup', type: 'query', body: LOOKUP }],
    });
    expect(loadManifest(file)).toEqual(new Map([[sha256(LOOKUP), LOOKUP]]));
  });
});

describe('GRAPHQL_TRUSTED_DOCUMENTS=allow', () => {
  test('a manifest document runs by its hash alone, over POST and over GET (credential header, no preflight header)', async () => {
    const post = await allow.post({ extensions: persisted(LOOKUP), variables: { id: 102 } });
    expect(post.body).toEqual({ data: { userByExternalId: { login: 'member' } } });
    const get = await allow.get({ extensions: persisted(LOOKUP), variables: { id: 101 } });
    expect(get.status).toBe(200);
    expect(get.body).toEqual({ data: { userByExternalId: { login: 'owner' } } });
  });

  test('documentId names a manifest document too, bare or prefixed with sha256:', async () => {
    const get = await allow.get({ documentId: `sha256:${sha256(LOOKUP)}`, variables: { id: 103 } });
    expect(get.body).toEqual({ data: { userByExternalId: { login: 'outsider' } } });
    const post = await allow.post({ documentId: sha256(UPLOAD), variables: { phone: '+15550001111' } });
    expect(post.body).toEqual({ data: { uploadAddressBook: { created: 1 } } });
  });

  test('free-form documents still run', async () => {
    expect((await allow.post({ query: FREE_FORM })).body).toEqual({ data: { userByExternalId: { login: 'outsider', fullName: 'outsider Example' } } });
  });

  test('a mutation named by its hash over GET answers 405, as any mutation over GET', async () => {
    const res = await allow.get({ extensions: persisted(UPLOAD), variables: { phone: '+15550001111' } });
    expect(res.status).toBe(405);
  });
});

describe.each([
  ['off', () => off],
  ['allow', () => allow],
])('automatic persisted queries with GRAPHQL_TRUSTED_DOCUMENTS=%s', (_mode, service) => {
  test('an unknown hash answers PERSISTED_QUERY_NOT_FOUND; the hash with its query registers it; then the hash alone runs', async () => {
    const document = `query Apq${_mode} { userByExternalId(externalUserId: 101) { id login } }`;
    const first = await service().get({ extensions: persisted(document) });
    expect(first.status).toBe(200);
    expect(codeOf(first)).toBe('PERSISTED_QUERY_NOT_FOUND');
    const register = await service().post({ query: document, extensions: persisted(document) });
    expect(register.body.data.userByExternalId.login).toBe('owner');
    const again = await service().get({ extensions: persisted(document) });
    expect(again.body).toEqual(register.body);
  });

  test('a hash that is not the SHA-256 of the query sent with it, or another protocol version, answers 400 BAD_REQUEST', async () => {
    for (const extensions of [
      { persistedQuery: { version: 1, sha256Hash: sha256(LOOKUP) } },
      { persistedQuery: { version: 2, sha256Hash: sha256(FREE_FORM) } },
      { persistedQuery: { version: 1, sha256Hash: 'not-a-hash' } },
      { persistedQuery: 'yes' },
    ]) {
      const res = await service().post({ query: FREE_FORM, extensions });
      expect([res.status, codeOf(res)]).toEqual([400, 'BAD_REQUEST']);
    }
  });
});

test('with GRAPHQL_TRUSTED_DOCUMENTS=off the manifest is not loaded: its hashes are unknown', async () => {
  expect(codeOf(await off.get({ extensions: persisted(LOOKUP), variables: { id: 102 } }))).toBe('PERSISTED_QUERY_NOT_FOUND');
});

describe('GRAPHQL_TRUSTED_DOCUMENTS=enforce', () => {
  test('manifest documents run, by hash (GET or POST, extensions or documentId) or by their exact text', async () => {
    expect((await enforce.get({ extensions: persisted(LOOKUP), variables: { id: 102 } })).body).toEqual({ data: { userByExternalId: { login: 'member' } } });
    expect((await enforce.get({ documentId: sha256(LOOKUP), variables: { id: 101 } })).body.data.userByExternalId.login).toBe('owner');
    expect((await enforce.post({ extensions: persisted(UPLOAD), variables: { phone: '+15550002222' } })).body).toEqual({
      data: { uploadAddressBook: { created: 1 } },
    });
    expect((await enforce.post({ query: LOOKUP, variables: { id: 103 } })).body.data.userByExternalId.login).toBe('outsider');
  });

  test('any other document is refused with 400 PERSISTED_QUERY_NOT_IN_LIST, before it is parsed or validated', async () => {
    for (const query of [FREE_FORM, LOOKUP.replace('login', 'login '), '{ not graphql', 'query { noSuchField }', getIntrospectionQuery()]) {
      for (const res of [await enforce.post({ query }), await enforce.get({ query })]) {
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          errors: [{ message: expect.stringContaining('Only trusted documents run here'), extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST' } }],
        });
      }
    }
  });

  test('an unknown hash answers PERSISTED_QUERY_NOT_FOUND, and a document sent with its hash is not registered', async () => {
    expect(codeOf(await enforce.post({ extensions: persisted(FREE_FORM) }))).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(codeOf(await enforce.post({ query: FREE_FORM, extensions: persisted(FREE_FORM) }))).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    expect(codeOf(await enforce.post({ extensions: persisted(FREE_FORM) }))).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  test('the REST paths run their own operations as always', async () => {
    const res = await fetchResult(`${enforce.base}/users/external/102.json`, { headers: tenant.as.owner });
    expect(res.status).toBe(200);
    expect(res.body.user.login).toBe('member');
  });

  test('the explorer page, in development, runs any document with its per-process key; another key is refused', async () => {
    const page = await fetchResult(`${enforce.base}/playground`, {});
    const key = new RegExp(`"${EXPLORER_KEY_HEADER}":"([0-9a-f]{32})"`).exec(page.text)?.[1];
    expect(key).toBeDefined();
    const introspection = await enforce.post({ query: getIntrospectionQuery() }, { [EXPLORER_KEY_HEADER]: key! });
    expect(introspection.body.data.__schema.queryType).toMatchObject({ name: 'Query' });
    expect((await enforce.post({ query: FREE_FORM }, { ...tenant.as.owner, [EXPLORER_KEY_HEADER]: key! })).body.data.userByExternalId.login).toBe('outsider');
    const other = await enforce.post({ query: FREE_FORM }, { ...tenant.as.owner, [EXPLORER_KEY_HEADER]: '0'.repeat(32) });
    expect(codeOf(other)).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    // Without enforce the page needs no key and gets none.
    expect((await fetchResult(`${allow.base}/playground`, {})).text).not.toContain(EXPLORER_KEY_HEADER);
  });

  test('in production the explorer gets no exception, even when turned on', async () => {
    const production = await serviceWith({
      NODE_ENV: 'production',
      GRAPHQL_EXPLORER: 'true',
      GRAPHQL_INTROSPECTION: 'true',
      GRAPHQL_TRUSTED_DOCUMENTS: 'enforce',
      GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST: MANIFEST,
    });
    const page = await fetchResult(`${production.base}/playground`, {});
    expect(page.status).toBe(200);
    expect(page.text).not.toContain(EXPLORER_KEY_HEADER);
    expect(codeOf(await production.post({ query: getIntrospectionQuery() }))).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    expect((await production.get({ extensions: persisted(LOOKUP), variables: { id: 102 } })).body.data.userByExternalId.login).toBe('member');
  });
});
