// A peer of the benchmark: Mercurius (Fastify's GraphQL server) with
// graphql-jit, answering the GraphQL lookup the benchmark sends the service
// (`userByExternalId`, all 19 fields) over the same database, with the same
// credential check as the baseline (bench/baseline.ts): the SVC-Token's
// SHA-256 and the lookup in ONE named prepared statement, the session check
// fused in as a CTE. What the fastest Node GraphQL server makes of the same
// work (issue 18's reference: the service's GraphQL lookup ≥ 0.85 of it).
//
// Not a second implementation: only this one query, only SVC-Token session
// tokens; credential failures are GraphQL errors without the service's codes.
//
// Environment: DATABASE_URL (required), PORT (0), HOST (127.0.0.1),
// DB_POOL_MAX (10). Prints {"msg":"listening","address":…}; GET /healthz.
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { GraphQLScalarType } from 'graphql';
import mercurius from 'mercurius';
import { Pool } from 'pg';

const env = process.env;
if (!env.DATABASE_URL) {
  process.stderr.write('mercurius peer: DATABASE_URL is required\n');
  process.exit(1);
}
const pool = new Pool({ connectionString: env.DATABASE_URL, max: Number(env.DB_POOL_MAX || 10) });
pool.on('error', () => {});

const schema = `
  scalar DateTime
  type User {
    id: Int!
    fullName: String
    email: String
    login: String!
    phone: String
    website: String
    createdAt: DateTime!
    updatedAt: DateTime!
    lastRequestAt: DateTime
    externalUserId: Int
    facebookId: String
    twitterId: String
    blobId: Int
    customData: String
    ageOver16: Boolean!
    allowStatisticsAnalysis: Boolean!
    allowSalesActivities: Boolean!
    parentsContacts: String!
    userTags: String!
  }
  type Query {
    userByExternalId(externalUserId: Int!): User
  }`;

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

let statements = 0;

const DateTime = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  serialize: (value) => (value as Date).toISOString(),
});

const resolvers = {
  DateTime,
  Query: {
    async userByExternalId(
      _root: unknown,
      args: { externalUserId: number },
      ctx: { reply: { request: { headers: Record<string, string | string[] | undefined> } } },
    ) {
      const sent = ctx.reply.request.headers['svc-token'];
      const token = Array.isArray(sent) ? sent[0] : sent;
      if (!token) throw new Error('Token is required');
      if (!(args.externalUserId >= 1)) throw new Error('externalUserId must be an integer between 1 and 2147483647');
      statements++;
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

const app = Fastify({ logger: false });
// jit: 1 compiles a document the second time it is seen (graphql-jit), as the service does.
void app.register(mercurius, { schema, resolvers, jit: 1, graphiql: false });
app.get('/healthz', async () => ({ status: 'ok' }));
app.get('/__statements', async () => ({ statements }));

app.listen({ port: Number(env.PORT || 0), host: env.HOST || '127.0.0.1' }).then(
  () => {
    const { address, port } = app.server.address() as AddressInfo;
    process.stdout.write(`${JSON.stringify({ msg: 'listening', address: `http://${address}:${port}` })}\n`);
  },
  (error: unknown) => {
    process.stderr.write(`mercurius peer: ${String(error)}\n`);
    process.exit(1);
  },
);

function stop(): void {
  app.close().then(
    () => pool.end().then(() => process.exit(0)),
    () => process.exit(1),
  );
  setTimeout(() => process.exit(1), 5_000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
