// GET /schema.graphql: the whole schema as SDL, for frontend teams to generate
// their types from. It is the checked-in artifact src/__generated__/schema.graphql
// (GraphQL Code Generator's schema-ast output, kept current by CI), so a team
// reads the same bytes from the repository and from a running service.
//
// On in production too, unlike introspection: the operations a frontend ships
// reveal the schema anyway, and without it a team has nothing to build against.
// GRAPHQL_SCHEMA_ENDPOINT=false turns it off (404, like any unknown path).
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { SCHEMA_ARTIFACT } from '../paths';
import { publicDocument, sendDocument } from './caching';

export const SCHEMA_PATH = '/schema.graphql';

export function registerSchemaEndpoint(fastify: FastifyInstance, enabled: boolean): void {
  if (!enabled) return;
  // Read at start: a missing artifact stops the service rather than failing a client later.
  // The same for every caller until the next deploy: caches keep it, then revalidate it by its ETag.
  const document = publicDocument(readFileSync(SCHEMA_ARTIFACT, 'utf8'), 'text/plain; charset=utf-8');
  fastify.get(SCHEMA_PATH, async (request, reply) => sendDocument(request, reply, document));
}
