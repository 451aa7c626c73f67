// The mainstream GraphQL clients, as a frontend team uses them: Apollo Client,
// urql and graphql-request with their default settings, and with GET for
// queries, against the real service. Each sends the credential header
// (SVC-Token), which no browser sends cross-site without a CORS preflight, so
// Apollo's CSRF prevention lets them through (src/http/security.ts,
// csrfPreflightHeaders), while simple cross-site requests stay blocked.
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { cacheExchange, Client, fetchExchange } from '@urql/core';
import { GraphQLClient } from 'graphql-request';
import { DeleteMessages, UserByExternalId } from '../../examples/frontend/src/operations';
import { seedTenant, type Tenant } from '../support/seed';
import { useService } from '../support/service';

let tenant: Tenant;
let endpoint: string;

const service = useService();
beforeAll(async () => {
  tenant = await seedTenant(service.app.provisioning);
  endpoint = `${service.baseUrl}/graphql`;
});

/** fetch as the clients call it, with the method and URL of each request noted. */
function recordingFetch(): { fetch: typeof fetch; sent: { method: string; url: string }[] } {
  const sent: { method: string; url: string }[] = [];
  return {
    sent,
    fetch: async (input, init) => {
      sent.push({ method: init?.method ?? 'GET', url: String(input instanceof Request ? input.url : input) });
      return fetch(input, init);
    },
  };
}

describe('Apollo Client', () => {
  test.each([
    ['its defaults (POST)', {}, 'POST'],
    ['GET for queries', { useGETForQueries: true }, 'GET'],
  ])('with %s runs queries and mutations', async (_how, options, queryMethod) => {
    const own = await seedTenant(service.app.provisioning);
    const recording = recordingFetch();
    const client = new ApolloClient({
      link: new HttpLink({ uri: endpoint, headers: own.as.member, fetch: recording.fetch, ...options }),
      cache: new InMemoryCache(),
    });
    const { data } = await client.query({ query: UserByExternalId, variables: { externalUserId: 101 } });
    expect(data?.userByExternalId).toMatchObject({ login: 'owner', externalUserId: 101 });
    const deleted = await client.mutate({ mutation: DeleteMessages, variables: { ids: [own.messageIds[0]!] } });
    expect(deleted.data?.deleteMessages).toMatchObject({ successfullyDeleted: [own.messageIds[0]], notFound: [] });
    expect(recording.sent.map((r) => r.method)).toEqual([queryMethod, 'POST']);
  });
});

describe('urql', () => {
  test('with its defaults sends queries as GET, and they run', async () => {
    const recording = recordingFetch();
    const client = new Client({
      url: endpoint,
      exchanges: [cacheExchange, fetchExchange],
      fetch: recording.fetch,
      fetchOptions: { headers: tenant.as.member },
    });
    const result = await client.query(UserByExternalId, { externalUserId: 103 }).toPromise();
    expect(result.error).toBeUndefined();
    expect(result.data?.userByExternalId).toMatchObject({ login: 'outsider' });
    const deleted = await client.mutation(DeleteMessages, { ids: [tenant.messageIds[1]!] }).toPromise();
    expect(deleted.data?.deleteMessages.successfullyDeleted).toEqual([tenant.messageIds[1]]);
    expect(recording.sent.map((r) => r.method)).toEqual(['GET', 'POST']);
    expect(recording.sent[0]!.url).toContain('query=');
  });
});

describe('graphql-request', () => {
  test.each([
    ['its defaults (POST)', 'POST' as const],
    ['GET for queries', 'GET' as const],
  ])('with %s runs queries', async (_how, method) => {
    const recording = recordingFetch();
    const client = new GraphQLClient(endpoint, { headers: tenant.as.owner, fetch: recording.fetch, ...(method === 'GET' ? { method } : {}) });
    const data = await client.request(UserByExternalId, { externalUserId: 102 });
    expect(data.userByExternalId).toMatchObject({ login: 'member' });
    expect(recording.sent.map((r) => r.method)).toEqual([method]);
  });

  test('runs mutations', async () => {
    const client = new GraphQLClient(endpoint, { headers: tenant.as.owner });
    const data = await client.request(DeleteMessages, { ids: [tenant.messageIds[2]!], force: true });
    expect(data.deleteMessages.successfullyDeleted).toEqual([tenant.messageIds[2]]);
  });
});

describe("Apollo's CSRF prevention", () => {
  const query = encodeURIComponent('{ userByExternalId(externalUserId: 101) { login } }');
  const CSRF = /Cross-Site Request Forgery/;

  test.each(['SVC-Token', 'QB-Token', 'Authorization', 'On-Behalf-Of'])(
    'lets a GET through when it carries %s, a header no browser sends cross-site without a preflight',
    async (header) => {
      const res = await service.rest('GET', `/graphql?query=${query}`, { headers: { [header]: 'x' } });
      expect(res.status).toBe(200);
      expect(res.text).not.toMatch(CSRF);
    },
  );

  test('still blocks simple requests: a GET or a form POST with none of those headers', async () => {
    const get = await service.rest('GET', `/graphql?query=${query}`);
    const form = await service.rest('POST', '/graphql', { body: { query: decodeURIComponent(query) }, form: true });
    // An empty credential header is no credential header.
    const empty = await service.rest('GET', `/graphql?query=${query}`, { headers: { 'SVC-Token': '' } });
    for (const res of [get, form, empty]) {
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ message: expect.stringMatching(CSRF), extensions: { code: 'BAD_REQUEST' } });
    }
  });
});
