// `npm run bench:cpu -- [--requests N]`: CPU time the service spends per
// request, in-process (fastify.inject: no sockets), for the REST and GraphQL
// lookups. Unlike req/s on a shared 2-core machine, CPU time per request
// barely moves with what else runs: a change's effect shows within a few
// percent. The database is PostgreSQL (DATABASE_URL, default the local
// server); its own CPU is not counted (another process).
//
// `--only rest|graphql` measures one; with `node --cpu-prof` (see
// BENCHMARKS.md) it profiles that one's per-request path alone.
//
// It seeds a small application of its own in the database `chatsvc_cpu`
// (recreated each run), so it runs in seconds.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { createApp } from '../src/app';
import { openDatabase } from '../src/db';
import { GRAPHQL_LOOKUP } from './harness';

const { values } = parseArgs({ options: { requests: { type: 'string' }, rounds: { type: 'string' }, only: { type: 'string' } } });
const REQUESTS = Number(values.requests ?? 4000);
const ROUNDS = Number(values.rounds ?? 5);
const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB = 'chatsvc_cpu';


async function main() {
  const admin = new Client({ connectionString: server });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
  await admin.query(`CREATE DATABASE ${DB}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${DB}`;
  const database = await openDatabase({ url: url.toString(), poolMax: 4, migrate: true });
  // As `npm start` in production runs it: a log line per request (to nowhere here), metrics on, no rate limit (as in npm run bench).
  const app = await createApp({
    database,
    secretsKey: randomBytes(32),
    rateLimit: false,
    logger: { level: 'info', stream: createWriteStream('/dev/null') },
  });
  const { services } = app;
  const { application } = await services.applications.create('cpu');
  const users = 200;
  for (let i = 1; i <= users; i++) {
    await services.users.create({ applicationId: application.id, login: `u${i}`, password: 'password123', fullName: `User ${i}`, email: `u${i}@example.com`, phone: `+1555${String(i).padStart(7, '0')}`, externalUserId: i });
  }
  const token = (await services.applications.createSession(application.id, 1)).token;
  const headers = { 'svc-token': token };
  const id = (i: number) => 1 + (i % users);

  const kinds = {
    rest: (i: number) => app.fastify.inject({ method: 'GET', url: `/users/external/${id(i)}.json`, headers }),
    graphql: (i: number) =>
      app.fastify.inject({ method: 'POST', url: '/graphql', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify({ query: GRAPHQL_LOOKUP, variables: { id: id(i) } }) }),
  };
  const results: Record<string, number[]> = { rest: [], graphql: [] };
  // Warm-up, not counted: V8 optimises the hot paths over the first thousands.
  for (let i = 0; i < 3000; i++) await kinds.rest(i);
  for (let i = 0; i < 3000; i++) await kinds.graphql(i);
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of round % 2 === 0 ? (['rest', 'graphql'] as const) : (['graphql', 'rest'] as const)) {
      if (values.only && values.only !== kind) continue;
      for (let i = 0; i < 200; i++) await kinds[kind](i); // warm
      const before = process.cpuUsage();
      for (let i = 0; i < REQUESTS; i++) {
        const res = await kinds[kind](i);
        if (res.statusCode !== 200 || (kind === 'graphql' && res.body.includes('"errors"'))) throw new Error(`${kind}: ${res.statusCode} ${res.body}`);
      }
      const used = process.cpuUsage(before);
      results[kind]!.push((used.user + used.system) / REQUESTS);
    }
  }
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
  for (const [kind, v] of Object.entries(results)) {
    if (v.length === 0) continue;
    process.stdout.write(`${kind}: median ${median(v).toFixed(0)} µs CPU/request (rounds: ${v.map((x) => x.toFixed(0)).join(', ')})\n`);
  }
  await app.close();
  await database.close();
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${(error as Error).stack}\n`);
    process.exit(1);
  },
);
