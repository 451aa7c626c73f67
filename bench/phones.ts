// `npm run bench:phones -- [--pair DIR] [--rounds N]`: do uploads and reads of
// the address book keep their speed now that phones are matched by the number
// they denote (issue 19: a key computed by libphonenumber-js at write time,
// triggers matching on equal phones or equal keys)?
//
// In-process, as bench:cpu: each build gets a database of its own on the
// PostgreSQL server (DATABASE_URL, default the local one) with 20,000 users,
// and per round (order reversed each round) the same requests through
// fastify.inject:
//   upload        POST /address_book.json, 10,000 new contacts in E.164 form
//                 (2,000 of them registered users) into a new udid
//   upload-fmt    the same numbers as people write them ("+1 666-000-0012");
//                 this build only (a build before issue 19 refuses them)
//   full/compact  GET /address_book/registered_users.json of a 10,000-contact
//                 book (2,000 registered), full records and compact
// Wall time includes PostgreSQL's work (the triggers that keep the matches
// run there); CPU is the service's process only.
//
// --pair DIR: another checkout (e.g. `git worktree add --detach DIR <commit>`,
// `ln -s $PWD/node_modules DIR/`, `node scripts/prisma-generate.mjs` in DIR)
// measured in the same process, its own modules and database, round by round.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { median } from './figures';

const { values } = parseArgs({ options: { pair: { type: 'string' }, rounds: { type: 'string' }, reads: { type: 'string' } } });
const ROUNDS = Number(values.rounds ?? 5);
const READS = Number(values.reads ?? 20);
const SERVER = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const USERS = 20_000;
const BOOK = 10_000;

type Inject = (options: { method: string; url: string; headers: Record<string, string>; payload?: string }) => Promise<{ statusCode: number; body: string }>;

interface Build {
  name: string;
  inject: Inject;
  headers: Record<string, string>;
  formatted: boolean;
  close(): Promise<void>;
}

const e164 = (i: number) => (i % 5 === 0 ? `+1666${String(i * 2).padStart(7, '0')}` : `+1777${String(i).padStart(7, '0')}`);
/** The same number as a person types it: "+1 666-000-0012". */
const formatted = (i: number) => e164(i).replace(/^\+1(\d{3})(\d{3})(\d{4})$/, '+1 $1-$2-$3');

/** The database `db`, dropped and created again; returns its URL. */
async function freshDatabase(db: string): Promise<string> {
  const admin = new Client({ connectionString: SERVER });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${db}`);
  await admin.query(`CREATE DATABASE ${db}`);
  if (process.env.BENCH_EXPLAIN) {
    // The plans of statements over 100 ms, triggers' included, in PostgreSQL's log.
    for (const setting of [
      `session_preload_libraries = 'auto_explain'`,
      'auto_explain.log_min_duration = 100',
      'auto_explain.log_nested_statements = on',
      'auto_explain.log_analyze = on',
    ])
      await admin.query(`ALTER DATABASE ${db} SET ${setting}`);
  }
  await admin.end();
  const url = new URL(SERVER);
  url.pathname = `/${db}`;
  return url.toString();
}

async function open(root: string, name: string, db: string): Promise<Build> {
  const url = await freshDatabase(db);
  // Each build's own modules: its services, statements, migrations and generated client.

  const { createApp } = require(path.join(root, 'src/app')) as typeof import('../src/app');
  const { openDatabase } = require(path.join(root, 'src/db')) as typeof import('../src/db');
  const { hashPassword } = require(path.join(root, 'src/services/secrets')) as typeof import('../src/services/secrets');
  const database = await openDatabase({ url, poolMax: 4, migrate: true, statementTimeoutMs: 0 });
  const app = await createApp({ database, secretsKey: randomBytes(32), rateLimit: false, logger: process.env.BENCH_LOG ? { level: 'error' } : false });
  const { services } = app;
  // A build from before src/provisioning (a --pair) has these writes on its services.
  const provisioning = (app as Partial<typeof app>).provisioning ?? (services as unknown as typeof app.provisioning);
  const { application } = await provisioning.applications.create('phones');
  const passwordHash = hashPassword('phones-password');
  const users = Array.from({ length: USERS }, (_, i) => ({
    login: `m${i}`,
    passwordHash,
    fullName: `More ${i}`,
    email: `m${i}@example.com`,
    phone: `+1666${String(i).padStart(7, '0')}`,
    externalUserId: 1 + i,
  }));
  const seeding = performance.now();
  for (let i = 0; i < users.length; i += 1000) await services.users.createMany(application.id, users.slice(i, i + 1000));
  process.stderr.write(`${name}: ${USERS} users in ${Math.round(performance.now() - seeding)} ms\n`);
  const caller = { kind: 'user', applicationId: application.id, userId: 1, via: 'session' } as const;
  await services.addressBook.upload(
    caller,
    Array.from({ length: BOOK }, (_, i) => ({ name: `Contact ${i}`, phone: e164(i) })),
    '',
    false,
  );
  const token = (await provisioning.applications.createSession(application.id, 1)).token;
  const probe = await app.fastify.inject({
    method: 'POST',
    url: '/address_book.json',
    headers: { 'svc-token': token, 'content-type': 'application/json' },
    payload: JSON.stringify({ udid: 'probe', contacts: [{ name: 'probe', phone: formatted(5) }] }),
  });
  return {
    name,
    inject: (options) => app.fastify.inject(options),
    headers: { 'svc-token': token },
    // A build before issue 19 answers 200 but drops contacts it cannot read (as QuickBlox did).
    formatted: probe.statusCode === 200 && (JSON.parse(probe.body) as { created?: number }).created === 1,
    close: async () => {
      await app.close();
      await database.close();
    },
  };
}

type Kind = 'upload' | 'upload-fmt' | 'full' | 'compact';
interface Sample {
  wallMs: number;
  cpuMs: number;
}

let udids = 0;
async function measure(build: Build, kind: Kind): Promise<Sample> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const n = kind.startsWith('upload') ? 1 : READS;
  for (let i = 0; i < n; i++) {
    const res = kind.startsWith('upload')
      ? await build.inject({
          method: 'POST',
          url: '/address_book.json',
          headers: { ...build.headers, 'content-type': 'application/json' },
          payload: JSON.stringify({
            udid: `bench-${++udids}`,
            contacts: Array.from({ length: BOOK }, (_, c) => ({ name: `Contact ${c}`, phone: kind === 'upload' ? e164(c) : formatted(c) })),
          }),
        })
      : await build.inject({ method: 'GET', url: `/address_book/registered_users.json?compact=${kind === 'compact' ? 1 : 0}`, headers: build.headers });
    if (res.statusCode !== 200) throw new Error(`${build.name} ${kind}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    if (!kind.startsWith('upload') && (JSON.parse(res.body) as { items: unknown[] }).items.length !== 2000)
      throw new Error(`${build.name} ${kind}: not 2,000 users`);
  }
  const used = process.cpuUsage(cpu);
  return { wallMs: (performance.now() - started) / n, cpuMs: (used.user + used.system) / 1000 / n };
}

async function main() {
  const builds = [await open(path.resolve(__dirname, '..'), 'this', `chatsvc_phones_${process.pid}`)];
  if (values.pair) builds.push(await open(path.resolve(values.pair), path.basename(values.pair), `chatsvc_phones_pair_${process.pid}`));
  const kinds: Kind[] = ['upload', 'upload-fmt', 'full', 'compact'];
  const results = new Map<string, Sample[]>();
  const key = (b: Build, k: Kind) => `${k} · ${b.name}`;
  // A warm-up round, not counted.
  for (const b of builds) for (const k of kinds) if (k !== 'upload-fmt' || b.formatted) await measure(b, k);
  for (let round = 0; round < ROUNDS; round++) {
    for (const k of kinds) {
      for (const b of round % 2 === 0 ? builds : [...builds].reverse()) {
        if (k === 'upload-fmt' && !b.formatted) continue;
        const s = await measure(b, k);
        results.set(key(b, k), [...(results.get(key(b, k)) ?? []), s]);
      }
    }
  }
  const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
  process.stdout.write(
    `phones benchmark: ${ROUNDS} rounds, order reversed each round; upload = ${BOOK.toLocaleString('en')} contacts, reads of a ${BOOK.toLocaleString('en')}-contact book with 2,000 registered\n`,
  );
  for (const [name, samples] of results) {
    const wall = samples.map((s) => s.wallMs);
    const cpu = samples.map((s) => s.cpuMs);
    process.stdout.write(
      `${name.padEnd(28)} wall median ${ms(median(wall))} ms (${ms(Math.min(...wall))}–${ms(Math.max(...wall))}), service CPU median ${ms(median(cpu))} ms (${ms(Math.min(...cpu))}–${ms(Math.max(...cpu))})\n`,
    );
  }
  for (const b of builds) await b.close();
  const admin = new Client({ connectionString: SERVER });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS chatsvc_phones_${process.pid}`);
  await admin.query(`DROP DATABASE IF EXISTS chatsvc_phones_pair_${process.pid}`);
  await admin.end();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack}\n`);
    process.exit(1);
  },
);
