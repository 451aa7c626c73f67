// The schema as an artifact: src/__generated__/schema.graphql (GraphQL Code
// Generator's schema-ast output, checked for drift by `npm run codegen:check`)
// is the schema of schema/*.graphql, describes what the service executes, and
// is served at GET /schema.graphql — in production too, unless
// GRAPHQL_SCHEMA_ENDPOINT=false.
import { readFileSync } from 'node:fs';
import { diff } from '@graphql-inspector/core';
import { buildSchema as buildSdlSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { buildSchema } from '../../src/graphql/schema';
import { SCHEMA_ARTIFACT } from '../../src/paths';
import { currentSchema } from '../../scripts/schema-check';
import { fetchResult, useService } from '../support/service';

const artifact = readFileSync(SCHEMA_ARTIFACT, 'utf8');
/** The service as main builds it from environment variables (the defaults); start() builds others from theirs, over its database. */
const service = useService({ env: {} });

test('the artifact is the schema of schema/*.graphql, printed in one file', () => {
  expect(artifact).toBe(printSchema(lexicographicSortSchema(currentSchema())));
  expect(artifact).toContain('type Query {');
  expect(artifact).toContain('userByExternalId(externalUserId: Int!): User');
});

test('the artifact describes every type, field and argument the service executes', async () => {
  const changes = await diff(buildSdlSchema(artifact), buildSchema());
  // Descriptions aside: the executable DateTime scalar (a resolver) carries none of its own.
  expect(changes.filter((change) => !/DESCRIPTION/.test(change.type))).toEqual([]);
});

test('GET /schema.graphql serves the artifact as text', async () => {
  const { baseUrl } = service;
  const res = await fetchResult(`${baseUrl}/schema.graphql`, {});
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  // The same for every caller until the next deploy (src/http/caching.ts).
  expect(res.headers.get('cache-control')).toBe('public, max-age=300');
  expect(res.headers.get('etag')).toMatch(/^"[\w-]+"$/);
  expect(res.text).toBe(artifact);
});

test('it stays on in production, where introspection is off', async () => {
  const { baseUrl } = await service.start({ env: { NODE_ENV: 'production' } });
  expect((await fetchResult(`${baseUrl}/schema.graphql`, {})).text).toBe(artifact);
  const introspection = await fetchResult(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
  });
  expect(introspection.status).toBe(400);
});

test('GRAPHQL_SCHEMA_ENDPOINT=false turns it off: 404, as any unknown path', async () => {
  const { baseUrl } = await service.start({ env: { GRAPHQL_SCHEMA_ENDPOINT: 'false' } });
  const res = await fetchResult(`${baseUrl}/schema.graphql`, {});
  expect(res.status).toBe(404);
  expect(res.body).toEqual({ errors: ['No route for GET /schema.graphql'] });
});
