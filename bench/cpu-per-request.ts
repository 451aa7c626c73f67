// `npm run bench:cpu -- [--requests N]`: CPU time the service spends per
// request, in-process (fastify.inject: no sockets), for the REST and GraphQL
// lookups and the registered users of a 10,000-contact book (2,000
// registered; full records and compact). Unlike req/s on a shared 2-core machine, CPU time per request
// barely moves with what else runs: a change's effect shows within a few
// percent. The database is PostgreSQL (DATABASE_URL, default the local
// server); its own CPU is not counted (another process).
//
// `--only rest,graphql,registered-full,registered-compact` measures some; with `node --cpu-prof` (see
// BENCHMARKS.md) it profiles that one's per-request path alone.
//
// It seeds a small application of its own in the database `chatsvc_cpu`
// (recreated each run), so it runs in seconds.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { type App, createApp } from '../src/app';
import { openDatabase } from '../src/db';
import { logDestination } from '../src/http/observability';
import { hashPassword } from '../src/services/secrets';
import { median } from './figures';
import { GRAPHQL_LOOKUP } from './queries';

const { values } = parseArgs({ options: { requests: { type: 'string' }, rounds: { type: 'string' }, only: { type: 'string' } } });
const REQUESTS = Number(values.requests ?? 4000);
const ROUNDS = Number(values.rounds ?? 5);
const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB = 'chatsvc_cpu';

/** Lookups' users: external ids 1..USERS. */
const USERS = 200;

async function main() {
  const database = await openDatabase({ url: await freshDatabase(), poolMax: 4, migrate: true });
  // As `npm start` in production runs it: a log line per request (to nowhere here), metrics on, no rate limit (as in npm run bench).
  const app = await createApp({
    database,
    secretsKey: randomBytes(32),
    rateLimit: false,
    // The destination main uses (asynchronous, batched pino writes), to /dev/null.
    logger: { level: 'info', stream: logDestination('/dev/null') },
  });
  const token = await seedData(app);
  const kinds = requestKinds(app, { 'svc-token': token });
  const only = values.only ? (values.only.split(',') as Kind[]) : (Object.keys(kinds) as Kind[]);
  const results = await measure(kinds, only);
  for (const [kind, v] of Object.entries(results)) {
    if (v.length === 0) continue;
    process.stdout.write(`${kind}: median ${median(v).toFixed(0)} µs CPU/request (rounds: ${v.map((x) => x.toFixed(0)).join(', ')})\n`);
  }
  await app.close();
  await database.close();
}

/** The database DB, dropped and created again; returns its URL. */
async function freshDatabase(): Promise<string> {
  const admin = new Client({ connectionString: server });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
  await admin.query(`CREATE DATABASE ${DB}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${DB}`;
  return url.toString();
}

/** An application with the lookups' users and the caller's registered users; returns the caller's session token. */
async function seedData({ services, provisioning }: App): Promise<string> {
  const { application } = await provisioning.applications.create('cpu');
  // Users with one password hash (hashing is deliberately slow).
  const passwordHash = hashPassword('cpu-password');
  await services.users.createMany(
    application.id,
    Array.from({ length: USERS }, (_, n) => ({
      login: `u${n + 1}`,
      passwordHash,
      fullName: `User ${n + 1}`,
      email: `u${n + 1}@example.com`,
      phone: `+1555${String(n + 1).padStart(7, '0')}`,
      externalUserId: n + 1,
    })),
  );
  // The registered users: 20,000 more users, the caller's book of 10,000
  // contacts of which every fifth is one of them (as npm run bench's data).
  const more = Array.from({ length: 20_000 }, (_, i) => ({
    login: `m${i}`,
    passwordHash,
    fullName: `More ${i}`,
    email: `m${i}@example.com`,
    phone: `+1666${String(i).padStart(7, '0')}`,
    externalUserId: 1000 + i,
  }));
  for (let i = 0; i < more.length; i += 1000) await services.users.createMany(application.id, more.slice(i, i + 1000));
  const caller = { kind: 'user', applicationId: application.id, userId: 1, via: 'session' } as const;
  const book = Array.from({ length: 10_000 }, (_, i) => ({
    name: `Contact ${i}`,
    phone: i % 5 === 0 ? `+1666${String(i * 2).padStart(7, '0')}` : `+1777${String(i).padStart(7, '0')}`,
  }));
  await services.addressBook.upload(caller, book, '', false);
  return (await provisioning.applications.createSession(application.id, 1)).token;
}

/** The requests measured, by kind: the i-th request of a kind. */
function requestKinds(app: App, headers: Record<string, string>) {
  const id = (i: number) => 1 + (i % USERS);
  return {
    rest: (i: number) => app.fastify.inject({ method: 'GET', url: `/users/external/${id(i)}.json`, headers }),
    graphql: (i: number) =>
      app.fastify.inject({
        method: 'POST',
        url: '/graphql',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: JSON.stringify({ query: GRAPHQL_LOOKUP, variables: { id: id(i) } }),
      }),
    'registered-full': () => app.fastify.inject({ method: 'GET', url: '/address_book/registered_users.json?compact=0', headers }),
    'registered-compact': () => app.fastify.inject({ method: 'GET', url: '/address_book/registered_users.json?compact=1', headers }),
  };
}
type Kinds = ReturnType<typeof requestKinds>;
type Kind = keyof Kinds;

/** CPU µs per request of each kind, one figure per round. */
async function measure(kinds: Kinds, only: Kind[]): Promise<Record<Kind, number[]>> {
  // Requests per round: the registered users cost milliseconds each.
  const count = (kind: Kind) => (kind.startsWith('registered') ? Math.max(20, REQUESTS >> 6) : REQUESTS);
  const results = Object.fromEntries(only.map((k) => [k, [] as number[]])) as Record<Kind, number[]>;
  // Warm-up, not counted: V8 optimises the hot paths over the first thousands.
  for (const kind of only) {
    for (let i = 0; i < count(kind); i++) {
      const res = await kinds[kind](i);
      if (kind.startsWith('registered') && (JSON.parse(res.body) as { items?: unknown[] }).items?.length !== 2000)
        throw new Error(`${kind}: not 2,000 users: ${res.body.slice(0, 300)}`);
    }
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of round % 2 === 0 ? only : [...only].reverse()) {
      const n = count(kind);
      for (let i = 0; i < n >> 4; i++) await kinds[kind](i); // warm
      const before = process.cpuUsage();
      for (let i = 0; i < n; i++) {
        const res = await kinds[kind](i);
        if (res.statusCode !== 200 || res.body.includes('"errors"')) throw new Error(`${kind}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      }
      const used = process.cpuUsage(before);
      results[kind].push((used.user + used.system) / n);
    }
  }
  return results;
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack}\n`);
    process.exit(1);
  },
);
