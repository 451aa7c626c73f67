// Issue 31, item 1: one reading of a /graphql request's URL. The router cut
// the query string at the first `?` or `#`, the trust check read the router's
// parameters (a repeated one as a list, which it skipped) and Apollo read the
// target cut at the `#`: `GET /graphql?query=<any document>#&query=x` ran any
// read document under enforce, and skipped the persisted-query hash check
// under off. Sent here as a client on a raw socket sends it (fetch drops
// everything after a `#`).
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';
import { slowRequest, type SlowAnswer } from '../support/slow-client';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const LOOKUP = 'query Lookup($id: Int!) { userByExternalId(externalUserId: $id) { login } }';
// Not in the manifest; the only document here that asks for fullName.
const FREE_FORM = 'query Other { userByExternalId(externalUserId: 103) { login fullName } }';

const dir = mkdtempSync(path.join(tmpdir(), 'trusted-bypass-'));
const MANIFEST = path.join(dir, 'manifest.json');
writeFileSync(MANIFEST, JSON.stringify({ [sha256(LOOKUP)]: LOOKUP }));

/** The service as main builds it from environment variables, trusted documents off. */
const offService = useService({ env: {} });
let tenant: Tenant;
let off: string;
let enforce: string;

beforeAll(async () => {
  off = offService.baseUrl;
  enforce = (await offService.start({ env: { GRAPHQL_TRUSTED_DOCUMENTS: 'enforce', GRAPHQL_TRUSTED_DOCUMENTS_MANIFEST: MANIFEST } })).baseUrl;
  tenant = await seedTenant(offService.app.provisioning);
});

/** `GET <target>` exactly as written, on a socket of its own. */
function rawGet(base: string, target: string): Promise<SlowAnswer> {
  const headers = Object.entries(tenant.as.owner).map(([name, value]) => `${name}: ${value}\r\n`);
  return slowRequest(base, { start: `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers.join('')}Connection: close\r\n\r\n`, giveUpMs: 10_000 });
}

const enc = encodeURIComponent;
const codeOf = (answer: SlowAnswer): unknown => answer.body?.errors?.[0]?.extensions?.code;

describe('GRAPHQL_TRUSTED_DOCUMENTS=enforce', () => {
  test('the document alone is refused (as before)', async () => {
    const answer = await rawGet(enforce, `/graphql?query=${enc(FREE_FORM)}`);
    expect([answer.status, codeOf(answer)]).toEqual([400, 'PERSISTED_QUERY_NOT_IN_LIST']);
  });

  test('`?query=<document>#&query=x` is refused with 400 BAD_REQUEST, the document not run', async () => {
    const answer = await rawGet(enforce, `/graphql?query=${enc(FREE_FORM)}#&query=x`);
    expect(answer.status).toBe(400);
    expect(codeOf(answer)).toBe('BAD_REQUEST');
    expect(answer.text).not.toContain('fullName');
    expect(answer.body.data).toBeUndefined();
  });

  test('a parameter sent twice is refused with 400 BAD_REQUEST, whichever comes first', async () => {
    for (const target of [
      `/graphql?query=${enc(FREE_FORM)}&query=${enc(LOOKUP)}&variables=${enc('{"id":101}')}`,
      `/graphql?query=${enc(LOOKUP)}&query=${enc(FREE_FORM)}&variables=${enc('{"id":101}')}`,
      `/graphql?query=${enc(LOOKUP)}&variables=${enc('{"id":101}')}&variables=${enc('{"id":102}')}`,
    ]) {
      const answer = await rawGet(enforce, target);
      expect([answer.status, codeOf(answer)]).toEqual([400, 'BAD_REQUEST']);
      expect(answer.body.errors[0].message).toMatch(/sent more than once/);
    }
  });

  test('a manifest document still runs by its text over GET', async () => {
    const answer = await rawGet(enforce, `/graphql?query=${enc(LOOKUP)}&variables=${enc('{"id":102}')}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { userByExternalId: { login: 'member' } } });
  });

  test('fuzzed separators around a manifest document and another never run the other one', async () => {
    const separator = fc.constantFrom('&', '#', '#&', '?', ';', '&&', '%26', '%23', '&amp;', '+', '=', '#?', '?&');
    const part = fc.constantFrom(
      `query=${enc(FREE_FORM)}`,
      `query=${enc(LOOKUP)}`,
      `query=${FREE_FORM.replace(/ /g, '+')}`,
      `variables=${enc('{"id":101}')}`,
      'query=x',
      `extensions=${enc(JSON.stringify({ persistedQuery: { version: 1, sha256Hash: sha256(LOOKUP) } }))}`,
      `documentId=${sha256(LOOKUP)}`,
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(part, separator), { minLength: 1, maxLength: 4 }), fc.constantFrom('?', '#', '?#'), async (parts, lead) => {
        const target = `/graphql${lead}${parts.map(([p, s]) => p + s).join('')}`;
        const answer = await rawGet(enforce, target);
        expect(answer.status).toBeLessThan(500);
        expect(answer.text).not.toContain('fullName');
        if (target.includes('#')) expect([answer.status, codeOf(answer)]).toEqual([400, 'BAD_REQUEST']);
      }),
      { numRuns: 60 },
    );
  });
});

describe('GRAPHQL_TRUSTED_DOCUMENTS=off', () => {
  test("a hash beside another document is refused with the service's 400 BAD_REQUEST, `#` or not", async () => {
    const extensions = enc(JSON.stringify({ persistedQuery: { version: 1, sha256Hash: sha256(LOOKUP) } }));
    for (const target of [
      `/graphql?query=${enc(FREE_FORM)}&extensions=${extensions}`,
      `/graphql?query=${enc(FREE_FORM)}&extensions=${extensions}#&extensions=x`,
      `/graphql?query=${enc(FREE_FORM)}#&extensions=${extensions}&extensions=x`,
    ]) {
      const answer = await rawGet(off, target);
      expect([answer.status, codeOf(answer)]).toEqual([400, 'BAD_REQUEST']);
    }
  });

  test('a parameter sent twice is refused with 400 BAD_REQUEST, not run with the last one', async () => {
    const answer = await rawGet(off, `/graphql?query=${enc(LOOKUP)}&query=${enc(FREE_FORM)}&variables=${enc('{"id":101}')}`);
    expect([answer.status, codeOf(answer)]).toEqual([400, 'BAD_REQUEST']);
  });

  test('free-form documents still run over GET', async () => {
    const answer = await rawGet(off, `/graphql?query=${enc(FREE_FORM)}`);
    expect(answer.body).toEqual({ data: { userByExternalId: { login: 'outsider', fullName: 'outsider Example' } } });
  });
});

describe('every path', () => {
  test.each([
    ['/users/external/102.json#x', { errors: { base: [expect.stringContaining('#')] } }],
    ['/address_book.json?udid=a#&udid=b', { errors: [expect.stringContaining('#')] }],
  ])('a request target holding `#` (%s) is refused with 400 in the path’s shape', async (target, body) => {
    const answer = await rawGet(off, target);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject(body);
  });
});
