// The GraphQL lookup the benchmark's peers serve (bench/peers/mercurius.ts,
// bench/peers/apollo-lookup.ts): the service's `userByExternalId` with its 19
// fields and one resolver running the baseline's statement (bench/baseline.ts):
// the SVC-Token's SHA-256 and the lookup in ONE named prepared statement, the
// session check fused in as a CTE. One definition, so that the peers differ
// only in the GraphQL server around it.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { GraphQLScalarType } from 'graphql';
import { Pool } from 'pg';
import { SCHEMA_DIR } from '../../src/paths';

/**
 * The service's own User type and `userByExternalId` (schema/user.graphql),
 * over the two names it uses from the rest of the service's schema: the peers
 * answer the same document with the same fields and types.
 */
export const LOOKUP_SCHEMA = `scalar DateTime\ntype Query\n${readFileSync(path.join(SCHEMA_DIR, 'user.graphql'), 'utf8')}`;

// The baseline's statement (read-only session check), columns under the GraphQL field names.
const LOOKUP = `
  WITH s AS (
    SELECT application_id, user_id FROM sessions WHERE token_hash = $1 AND expires_at > now()
  )
  SELECT s.user_id AS caller, u.id, u.full_name AS "fullName", u.email, u.login, u.phone, u.website,
         u.created_at AS "createdAt", u.updated_at AS "updatedAt", u.last_request_at AS "lastRequestAt",
         u.external_user_id AS "externalUserId", u.facebook_id AS "facebookId", u.twitter_id AS "twitterId",
         u.blob_id AS "blobId", u.custom_data AS "customData", u.age_over16 AS "ageOver16",
         u.allow_statistics_analysis AS "allowStatisticsAnalysis", u.allow_sales_activities AS "allowSalesActivities",
         u.parents_contacts AS "parentsContacts", u.user_tags AS "userTags"
    FROM s
    LEFT JOIN users u
      ON s.user_id IS NOT NULL AND u.application_id = s.application_id AND u.external_user_id = $2`;

/** What a peer's resolver reads of the request: its headers. */
export type Headers = Record<string, string | string[] | undefined>;

/**
 * The resolvers over a pool of DATABASE_URL (DB_POOL_MAX connections), and
 * the count of statements run; `headersOf` finds the request's headers in
 * the server's context value.
 */
export function lookupResolvers<TContext>(headersOf: (context: TContext) => Headers) {
  const env = process.env;
  if (!env.DATABASE_URL) {
    process.stderr.write('peer: DATABASE_URL is required\n');
    process.exit(1);
  }
  const pool = new Pool({ connectionString: env.DATABASE_URL, max: Number(env.DB_POOL_MAX || 10) });
  pool.on('error', () => {});
  const counter = { statements: 0 };
  const DateTime = new GraphQLScalarType<Date, string>({
    name: 'DateTime',
    serialize: (value) => (value as Date).toISOString(),
  });
  const resolvers = {
    DateTime,
    Query: {
      async userByExternalId(_root: unknown, args: { externalUserId: number }, context: TContext) {
        const sent = headersOf(context)['svc-token'];
        const token = Array.isArray(sent) ? sent[0] : sent;
        if (!token) throw new Error('Token is required');
        if (!(args.externalUserId >= 1)) throw new Error('externalUserId must be an integer between 1 and 2147483647');
        counter.statements++;
        const { rows } = await pool.query({
          name: 'lookup',
          text: LOOKUP,
          values: [createHash('sha256').update(token).digest('hex'), args.externalUserId],
        });
        const row = rows[0] as Record<string, unknown> | undefined;
        if (!row) throw new Error('Required session does not exist');
        if (row.caller === null) throw new Error('Forbidden. Need user.');
        if (row.id === null) throw new Error('User not found');
        return row;
      },
    },
  };
  return { resolvers, pool, counter };
}

/**
 * Listens on PORT (0) and HOST (127.0.0.1), prints {"msg":"listening",…} for
 * the harness, and stops on SIGTERM or SIGINT (the server, then the pool).
 */
export async function serve(app: FastifyInstance, pool: Pool, counter: { statements: number }): Promise<void> {
  const env = process.env;
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/__statements', async () => ({ statements: counter.statements }));
  await app.listen({ port: Number(env.PORT || 0), host: env.HOST || '127.0.0.1' });
  const { address, port } = app.server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', address: `http://${address}:${port}` })}\n`);
  const stop = () => {
    app.close().then(
      () => pool.end().then(() => process.exit(0)),
      () => process.exit(1),
    );
    setTimeout(() => process.exit(1), 5_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
