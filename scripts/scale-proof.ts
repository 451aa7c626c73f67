// npm run scale:proof [-- --duration 60 --rate 120]
//
// The service past one machine, on this one machine, from Debian's packages
// (installing haproxy and pgbouncer when missing): a primary PostgreSQL 15
// and a streaming hot standby (pg_basebackup -R), a Redis of its own (so it
// can be restarted), PgBouncer in transaction mode in front of the primary,
// 3 service instances (unnamed statements through PgBouncer, reads on the
// standby, limits and revocations through Redis) and HAProxy checking
// /readyz. A fixed-rate mixed load runs over every operation for --duration
// seconds while faults are injected: SIGKILL one instance and restart it,
// restart the standby, SIGTERM another and restart it, restart Redis. Clients
// retry a 503 or a refused connection as the README says (backoff, up to 5 s).
//
// It asserts and prints: every acknowledged write present on the primary and,
// after catch-up, on the standby; 0 stale read-after-write pairs; the
// credential budget exact across the 3 instances; a revoked session refused
// everywhere within 1 s; 0 new deadlocks; reads served by the replica > 0;
// errors per fault window and how long each lasted; p50/p99 per phase.
// Everything it started is stopped and its data deleted, whatever happens.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'pg';
import { openDatabase } from '../src/db';
import { createServices } from '../src/services';
import { parseLsn } from '../src/scale/replicas';
import { type Cluster, clustersAvailable, createPrimary, createStandby } from './lib/pg-cluster';
import { writePgbouncerConfig } from './lib/pgbouncer';
import { freePort } from './lib/ports';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '60' },
    rate: { type: 'string', default: '120' },
    users: { type: 'string', default: '40' },
  },
});
const DURATION_S = Number(args.duration);
const RATE = Number(args.rate);
const USERS = Number(args.users);
const ROOT = path.resolve(__dirname, '..');
const BUDGET = 1_000;

const cleanups: (() => void | Promise<void>)[] = [];
const log = (message: string) => process.stdout.write(`[${new Date().toISOString().slice(11, 23)}] ${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function ensurePackages(): void {
  const missing = ['haproxy', 'pgbouncer'].filter((bin) => spawnSync('which', [bin]).status !== 0);
  if (missing.length === 0) return;
  log(`installing ${missing.join(', ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['install', '-y', '-q', ...missing], { stdio: 'inherit', env });
  } catch {
    // Package lists not fetched yet (a fresh machine): fetch them once and try again.
    execFileSync('apt-get', ['update', '-q'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-q', ...missing], { stdio: 'inherit', env });
  }
}

/** A child process we started, stopped by its own pid at the end. */
function start(name: string, command: string, argv: string[], env: NodeJS.ProcessEnv = process.env, logFile?: string): ChildProcess {
  const child = spawn(command, argv, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: string[] = [];
  const keep = (data: Buffer) => {
    chunks.push(data.toString());
    if (chunks.length > 200) chunks.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('exit', () => {
    try {
      if (logFile) writeFileSync(logFile, chunks.join(''));
    } catch {
      // Cleaned up already.
    }
  });
  (child as ChildProcess & { output: () => string }).output = () => chunks.join('');
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  void name;
  return child;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const ready = (port: number) => async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;

// --- Load ------------------------------------------------------------------

interface Sample {
  at: number;
  op: string;
  ms: number;
  ok: boolean;
  status: number;
  /** Attempts that failed (503, refused, reset) before this one's final answer. */
  failedAttempts: number[];
  /** What each failed attempt was: a status, or 0 for no answer. */
  failedStatuses: number[];
}

interface VirtualUser {
  id: number;
  externalUserId: number;
  token: string;
  busy: boolean;
  /** Whether the partner's phone is in this user's book, as their last acknowledged upload left it. */
  partnerListed: boolean;
  partnerId: number;
  messageIds: string[];
}

/** One request, retried on 503 and connection failures (the documented client behaviour). */
async function call(base: string, method: string, pathname: string, headers: Record<string, string>, body?: unknown) {
  const failed: number[] = [];
  const statuses: number[] = [];
  let delay = 50;
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      const response = await fetch(`${base}${pathname}`, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(5_000),
      });
      const text = await response.text();
      if (response.status !== 503 || Date.now() > deadline) return { status: response.status, text, failed, statuses };
      statuses.push(503);
    } catch {
      if (Date.now() > deadline) return { status: 0, text: '', failed, statuses };
      statuses.push(0);
    }
    failed.push(Date.now());
    await sleep(delay);
    delay = Math.min(delay * 2, 800);
  }
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const can = clustersAvailable();
  if (!can.ok) throw new Error(`cannot make PostgreSQL clusters here: ${can.reason}`);
  ensurePackages();
  const work = mkdtempSync(path.join(tmpdir(), 'chatsvc-scale-proof-'));
  cleanups.push(() => rmSync(work, { recursive: true, force: true }));
  const postgresUid = Number(execFileSync('id', ['-u', 'postgres']).toString());
  const postgresGid = Number(execFileSync('id', ['-g', 'postgres']).toString());
  chownSync(work, postgresUid, postgresGid);

  // PostgreSQL: primary + streaming standby.
  const [primaryPort, standbyPort, bouncerPort, redisPort, haproxyPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const instancePorts = [await freePort(), await freePort(), await freePort()];
  log(`primary :${primaryPort}, standby :${standbyPort}`);
  const primary: Cluster = createPrimary(primaryPort);
  cleanups.push(() => primary.destroy());
  const standby: Cluster = createStandby(primary, standbyPort);
  cleanups.push(() => standby.destroy());

  // Schema and data, directly on the primary.
  const secretsKey = randomBytes(32);
  const seedDb = await openDatabase({ url: primary.url, migrate: true, poolMax: 4 });
  const services = createServices(seedDb, { auth: { cacheMs: 0 }, secretsKey });
  const { application, authKey } = await services.applications.create('scale proof');
  void authKey;
  const users: VirtualUser[] = [];
  for (let i = 0; i < USERS; i++) {
    const user = await services.users.create({
      applicationId: application.id,
      login: `user${i}`,
      password: 'password123',
      fullName: `User ${i}`,
      phone: `+1200000${String(i).padStart(4, '0')}`,
      externalUserId: 10_000 + i,
    });
    const { token } = await services.applications.createSession(application.id, user.id);
    users.push({ id: user.id, externalUserId: 10_000 + i, token, busy: false, partnerListed: false, partnerId: 0, messageIds: [] });
  }
  for (const [i, user] of users.entries()) {
    const partner = users[(i + 1) % users.length]!;
    user.partnerId = partner.id;
    const dialog = await services.messages.createDialog({ applicationId: application.id, ownerId: user.id, occupantIds: [partner.id] });
    user.messageIds = await services.messages.createMany({ dialogId: dialog.id, senderId: user.id, bodies: Array.from({ length: 200 }, (_, k) => `m${k}`) });
  }
  const partnerPhone = (user: VirtualUser) => `+1200000${String(users.findIndex((u) => u.id === user.partnerId)).padStart(4, '0')}`;
  await services.close();
  await seedDb.close();

  // Redis of our own (no persistence), so that it can be restarted.
  const startRedis = () => start('redis', 'redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  let redis = startRedis();
  await waitFor('redis', async () => spawnSync('redis-cli', ['-p', String(redisPort), 'ping']).stdout.toString().includes('PONG'));

  // PgBouncer, transaction mode, in front of the primary.
  const bouncer = writePgbouncerConfig({
    dir: work,
    listenPort: bouncerPort,
    server: { host: '127.0.0.1', port: primaryPort, database: 'postgres', user: 'postgres' },
    poolSize: 20,
    maxClientConn: 1000,
  });
  // Its own pid (-u keeps it in the foreground as postgres), so stopping it is stopping that pid.
  start('pgbouncer', bouncer.command, bouncer.args);
  const bouncerUrl = `postgres://postgres@127.0.0.1:${bouncerPort}/postgres`;
  await waitFor('pgbouncer', async () => {
    const pool = new Pool({ connectionString: bouncerUrl, max: 1 });
    try {
      await pool.query('SELECT 1');
      return true;
    } finally {
      await pool.end();
    }
  });

  // Three instances.
  const prefix = `scale-proof:${process.pid}:`;
  const instanceEnv = (port: number): NodeJS.ProcessEnv => ({
    ...process.env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: bouncerUrl,
    DB_PREPARED_STATEMENTS: 'unnamed',
    DATABASE_READ_URL: standby.url,
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    REDIS_KEY_PREFIX: prefix,
    MIGRATE_ON_START: 'false',
    SECRETS_KEY: secretsKey.toString('hex'),
    LOG_LEVEL: 'warn',
    DB_POOL_MAX: '10',
    RATE_LIMIT_PER_CREDENTIAL: String(BUDGET),
    RATE_LIMIT_PER_ADDRESS: '100000000',
    RATE_LIMIT_WINDOW_MS: '60000',
  });
  const instances: ChildProcess[] = [];
  const startInstance = (i: number) => {
    instances[i] = start(`instance${i}`, process.execPath, ['--require', 'tsx/cjs', 'src/main.ts'], instanceEnv(instancePorts[i]!), path.join(work, `instance${i}.log`));
  };
  for (let i = 0; i < 3; i++) startInstance(i);
  for (const port of instancePorts) await waitFor(`instance :${port}`, ready(port), 90_000);
  log(`instances :${instancePorts.join(', :')}`);

  // HAProxy with health checks on /readyz.
  writeFileSync(
    path.join(work, 'haproxy.cfg'),
    [
      'global',
      '  maxconn 4096',
      'defaults',
      '  mode http',
      '  timeout connect 1s',
      '  timeout client 30s',
      '  timeout server 30s',
      // A refused connection never reached an instance: safe to try another.
      '  retries 2',
      '  option redispatch',
      '  retry-on conn-failure',
      'frontend fe',
      `  bind 127.0.0.1:${haproxyPort}`,
      '  default_backend svc',
      'backend svc',
      '  balance roundrobin',
      '  option httpchk GET /readyz',
      '  http-check expect status 200',
      '  default-server inter 500 fall 2 rise 2',
      ...instancePorts.map((port, i) => `  server s${i} 127.0.0.1:${port} check`),
      '',
    ].join('\n'),
  );
  start('haproxy', 'haproxy', ['-f', path.join(work, 'haproxy.cfg'), '-db']);
  const base = `http://127.0.0.1:${haproxyPort}`;
  await waitFor('haproxy', async () => (await fetch(`${base}/healthz`)).status === 200);

  const primaryPool = new Pool({ connectionString: primary.url, max: 2 });
  const standbyPool = new Pool({ connectionString: standby.url, max: 2 });
  primaryPool.on('error', () => {});
  standbyPool.on('error', () => {});
  cleanups.push(async () => {
    await primaryPool.end().catch(() => {});
    await standbyPool.end().catch(() => {});
  });
  const deadlocksNow = async () =>
    Number((await primaryPool.query("SELECT deadlocks FROM pg_stat_database WHERE datname = 'postgres'")).rows[0].deadlocks);
  const deadlocksBefore = await deadlocksNow();

  // --- The load and the faults --------------------------------------------
  const samples: Sample[] = [];
  const acknowledged: { userId: number; phone: string }[] = [];
  let stalePairs = 0;
  let checkedPairs = 0;
  let writeSeq = 0;
  const t0 = Date.now();
  const at = (fraction: number) => t0 + fraction * DURATION_S * 1000;
  interface Fault {
    name: string;
    start: number;
    end: number;
  }
  const faults: Fault[] = [];
  const fault = async (name: string, fraction: number, action: () => Promise<void>) => {
    await sleep(Math.max(0, at(fraction) - Date.now()));
    const started = Date.now();
    log(`fault: ${name}`);
    await action();
    faults.push({ name, start: started, end: Date.now() });
    log(`fault: ${name}: recovered in ${Date.now() - started} ms`);
  };
  let faultsDone = false;
  const faultPlan = (async () => {
    await fault('SIGKILL instance 0, restart it', 0.15, async () => {
      instances[0]!.kill('SIGKILL');
      await sleep(1_000);
      startInstance(0);
      await waitFor('instance 0 back', ready(instancePorts[0]!), 90_000);
    });
    await fault('restart the standby', 0.35, async () => {
      standby.stop('fast');
      await sleep(1_000);
      standby.start();
      await waitFor('standby back', async () => (await standbyPool.query('SELECT 1')).rowCount === 1);
    });
    await fault('SIGTERM instance 1, restart it', 0.55, async () => {
      const exited = new Promise((resolve) => instances[1]!.once('exit', resolve));
      instances[1]!.kill('SIGTERM');
      await exited;
      startInstance(1);
      await waitFor('instance 1 back', ready(instancePorts[1]!), 90_000);
    });
    await fault('restart Redis', 0.75, async () => {
      const exited = new Promise((resolve) => redis.once('exit', resolve));
      redis.kill('SIGTERM');
      await exited;
      await sleep(500);
      redis = startRedis();
      await waitFor('redis back', async () => spawnSync('redis-cli', ['-p', String(redisPort), 'ping']).stdout.toString().includes('PONG'));
    });
    faultsDone = true;
  })();

  const ops: { name: string; weight: number; run: (user: VirtualUser) => Promise<void> }[] = [
    {
      name: 'lookup',
      weight: 30,
      run: async (user) => {
        const target = users[(user.externalUserId + 7) % users.length]!;
        await measured('lookup', () => call(base, 'GET', `/users/external/${target.externalUserId}.json`, { 'SVC-Token': user.token }));
      },
    },
    {
      name: 'registered users',
      weight: 25,
      run: async (user) => {
        await measured('registered users', () => call(base, 'GET', '/address_book/registered_users.json', { 'SVC-Token': user.token }));
      },
    },
    {
      name: 'upload then read',
      weight: 20,
      run: async (user) => {
        const phone = `+1300${String(++writeSeq).padStart(8, '0')}`;
        const listed = !user.partnerListed;
        const upload = await measured('upload', () =>
          call(base, 'POST', '/address_book.json', { 'SVC-Token': user.token }, {
            contacts: [
              { name: 'written', phone },
              { name: 'partner', phone: partnerPhone(user), ...(listed ? {} : { destroy: 1 }) },
            ],
          }),
        );
        if (upload.status !== 200 && upload.status !== 201) return;
        acknowledged.push({ userId: user.id, phone });
        user.partnerListed = listed;
        // The pair: this caller's next read, through the load balancer (any instance).
        const read = await measured('registered users', () => call(base, 'GET', '/address_book/registered_users.json', { 'SVC-Token': user.token }));
        if (read.status !== 200) return;
        checkedPairs++;
        const ids = (JSON.parse(read.text) as { items: { user: { id: number } }[] }).items.map((item) => item.user.id);
        if (ids.includes(user.partnerId) !== listed) stalePairs++;
      },
    },
    {
      name: 'address book',
      weight: 10,
      run: async (user) => {
        await measured('address book', () => call(base, 'GET', '/address_book.json', { 'SVC-Token': user.token }));
      },
    },
    {
      name: 'session',
      weight: 10,
      run: async (user) => {
        await measured('session', () => call(base, 'GET', '/session.json', { 'SVC-Token': user.token }));
      },
    },
    {
      name: 'delete message',
      weight: 5,
      run: async (user) => {
        const id = user.messageIds.pop();
        if (id) await measured('delete message', () => call(base, 'DELETE', `/chat/Message/${id}.json`, { 'SVC-Token': user.token }));
      },
    },
  ];
  const totalWeight = ops.reduce((sum, op) => sum + op.weight, 0);
  async function measured(op: string, fn: () => Promise<{ status: number; text: string; failed: number[]; statuses: number[] }>) {
    const started = Date.now();
    const result = await fn();
    samples.push({
      at: started,
      op,
      ms: Date.now() - started,
      ok: result.status > 0 && result.status < 500,
      status: result.status,
      failedAttempts: result.failed,
      failedStatuses: result.statuses,
    });
    return result;
  }

  log(`load: ${RATE} operations/s for ${DURATION_S} s over ${USERS} users`);
  const inflight = new Set<Promise<void>>();
  let skipped = 0;
  const tickMs = 20;
  let issued = 0;
  // The load outlasts the faults: each fault happens under load, even when recovering is slower than planned.
  while (Date.now() - t0 < DURATION_S * 1000 || !faultsDone) {
    const due = Math.floor(((Date.now() - t0) / 1000) * RATE);
    while (issued < due) {
      issued++;
      const idle = users.filter((u) => !u.busy);
      if (idle.length === 0) {
        skipped++;
        continue;
      }
      const user = idle[Math.floor(Math.random() * idle.length)]!;
      let pick = Math.random() * totalWeight;
      const op = ops.find((candidate) => (pick -= candidate.weight) < 0) ?? ops[0]!;
      user.busy = true;
      const p = op.run(user).finally(() => {
        user.busy = false;
        inflight.delete(p);
      });
      inflight.add(p);
    }
    await sleep(tickMs);
  }
  await Promise.all(inflight);
  await faultPlan;
  const loadEnd = Date.now();
  log(`load done: ${samples.length} requests`);

  // --- Checks after the load ----------------------------------------------
  // Every instance counting in Redis again (after its restart, a request
  // counted answers with RateLimit-* headers; uncounted, fail-open, without).
  for (const port of instancePorts) {
    await waitFor(`instance :${port} counting in redis`, async () =>
      (await fetch(`http://127.0.0.1:${port}/address_book.json`, { headers: { 'SVC-Token': 'probe' } })).headers.has('ratelimit-limit'),
    );
  }
  // The credential budget, exact across the three instances (each hit directly, in turn).
  const guess = `budget-${randomBytes(12).toString('hex')}`;
  let served = 0;
  let limited = 0;
  for (let i = 0; i < BUDGET + 30; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: 10 }, (_, k) =>
        fetch(`http://127.0.0.1:${instancePorts[(i + k) % 3]}/address_book.json`, { headers: { 'SVC-Token': guess } }).then((r) => r.status),
      ),
    );
    for (const status of batch) status === 429 ? limited++ : served++;
  }

  // A revoked session, refused by every instance within 1 s.
  const revokeSeed = await openDatabase({ url: primary.url, migrate: false, poolMax: 1 });
  const revokeServices = createServices(revokeSeed, { auth: { cacheMs: 0 }, secretsKey });
  const { token: doomed } = await revokeServices.applications.createSession(application.id, users[0]!.id);
  await revokeServices.close();
  await revokeSeed.close();
  for (const port of instancePorts) {
    for (let k = 0; k < 2; k++) await fetch(`http://127.0.0.1:${port}/address_book.json`, { headers: { 'SVC-Token': doomed } });
  }
  const ended = await fetch(`http://127.0.0.1:${instancePorts[0]}/session.json`, { method: 'DELETE', headers: { 'SVC-Token': doomed } });
  const endedAt = Date.now();
  const refusedAfter: number[] = [];
  for (const port of instancePorts) {
    for (;;) {
      const status = (await fetch(`http://127.0.0.1:${port}/address_book.json`, { headers: { 'SVC-Token': doomed } })).status;
      if (status === 401 || Date.now() - endedAt > 10_000) {
        refusedAfter.push(Date.now() - endedAt);
        break;
      }
      await sleep(10);
    }
  }

  // Every acknowledged write on the primary, then on the standby once it has caught up.
  const phones = acknowledged.map((w) => w.phone);
  const countOn = async (pool: Pool) =>
    Number((await pool.query('SELECT count(DISTINCT phone)::int AS n FROM contacts WHERE phone = ANY($1::text[])', [phones])).rows[0].n);
  const onPrimary = await countOn(primaryPool);
  const target = parseLsn((await primaryPool.query('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0].lsn);
  await waitFor('standby catch-up', async () => parseLsn((await standbyPool.query('SELECT pg_last_wal_replay_lsn()::text AS lsn')).rows[0].lsn) >= target, 30_000);
  const onStandby = await countOn(standbyPool);
  const newDeadlocks = (await deadlocksNow()) - deadlocksBefore;

  let replicaReads = 0;
  for (const port of instancePorts) {
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    replicaReads += Number(/db_reads_routed_total\{route="replica"\} (\d+)/.exec(metrics)?.[1] ?? 0);
  }

  // --- Figures --------------------------------------------------------------
  const phases: { name: string; from: number; to: number }[] = [];
  let cursor = t0;
  for (const f of faults) {
    phases.push({ name: 'steady', from: cursor, to: f.start });
    phases.push({ name: f.name, from: f.start, to: f.end + 2_000 });
    cursor = f.end + 2_000;
  }
  phases.push({ name: 'steady', from: cursor, to: loadEnd });
  const lines: string[] = [];
  const figures: Record<string, unknown> = {};
  lines.push(`scale proof: ${DURATION_S} s at ${RATE} operations/s, ${USERS} users, 3 instances behind HAProxy, PgBouncer (transaction mode), 1 streaming standby, Redis`);
  lines.push(`requests: ${samples.length} (operations not started because every user was busy: ${skipped})`);
  lines.push('');
  lines.push('phase                                   requests   p50 ms   p99 ms   failed');
  for (const phase of phases) {
    const inPhase = samples.filter((s) => s.at >= phase.from && s.at < phase.to);
    const ms = inPhase.map((s) => s.ms);
    lines.push(
      `${phase.name.padEnd(40)}${String(inPhase.length).padStart(8)}${String(percentile(ms, 50)).padStart(9)}${String(percentile(ms, 99)).padStart(9)}${String(inPhase.filter((s) => !s.ok).length).padStart(9)}`,
    );
  }
  lines.push('');
  lines.push('fault window                            retried attempts   final errors   errors lasted   recovered in');
  const faultFigures = [];
  for (const f of faults) {
    const windowEnd = f.end + 2_000;
    const attempts = samples.flatMap((s) => s.failedAttempts).filter((t) => t >= f.start && t < windowEnd);
    const finals = samples.filter((s) => !s.ok && s.at >= f.start && s.at < windowEnd);
    const lasted = attempts.length === 0 ? 0 : Math.max(...attempts) - Math.min(...attempts);
    const kinds = samples
      .flatMap((s) => s.failedAttempts.map((t, k) => [t, s.failedStatuses[k]!] as const))
      .filter(([t]) => t >= f.start && t < windowEnd)
      .reduce<Record<string, number>>((acc, [, status]) => ({ ...acc, [status === 0 ? 'no answer' : String(status)]: (acc[status === 0 ? 'no answer' : String(status)] ?? 0) + 1 }), {});
    lines.push(`  ${JSON.stringify(kinds)}`);
    faultFigures.push({ fault: f.name, retriedAttempts: attempts.length, finalErrors: finals.length, errorsLastedMs: lasted, recoveredMs: f.end - f.start });
    lines.push(`${f.name.padEnd(40)}${String(attempts.length).padStart(16)}${String(finals.length).padStart(15)}${`${lasted} ms`.padStart(16)}${`${f.end - f.start} ms`.padStart(15)}`);
  }
  const outside = samples.filter((s) => !s.ok && !faults.some((f) => s.at >= f.start && s.at < f.end + 2_000));
  const failedOutside = outside.length;
  if (outside.length > 0) lines.push(`failed outside fault windows: ${JSON.stringify(outside.slice(0, 5).map((s) => ({ at: s.at - t0, op: s.op, status: s.status })))}`);
  lines.push('');
  const checks: [string, boolean, string][] = [
    ['acknowledged writes on the primary', onPrimary === phones.length, `${onPrimary} of ${phones.length}`],
    ['acknowledged writes on the standby after catch-up', onStandby === phones.length, `${onStandby} of ${phones.length}`],
    ['stale read-after-write pairs', stalePairs === 0, `${stalePairs} of ${checkedPairs} pairs`],
    ['credential budget exact across 3 instances', served === BUDGET, `${served} served of ${BUDGET + 30} (budget ${BUDGET}), ${limited} refused 429`],
    ['revoked session refused on every instance within 1 s', ended.status < 300 && refusedAfter.every((ms) => ms < 1_000), `after ${refusedAfter.join(', ')} ms`],
    ['new deadlocks', newDeadlocks === 0, String(newDeadlocks)],
    ['reads served by the replica', replicaReads > 0, `${replicaReads} (counters of the instances' current processes)`],
    ['failed requests outside fault windows', failedOutside === 0, String(failedOutside)],
  ];
  for (const [name, ok, detail] of checks) lines.push(`${ok ? 'PASS' : 'FAIL'}  ${name}: ${detail}`);
  Object.assign(figures, { durationS: DURATION_S, rate: RATE, requests: samples.length, faults: faultFigures, checks: checks.map(([name, ok, detail]) => ({ name, ok, detail })) });
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
  if (process.env.SCALE_PROOF_OUT) writeFileSync(process.env.SCALE_PROOF_OUT, `${JSON.stringify(figures, null, 2)}\n`);
  if (checks.some(([, ok]) => !ok)) {
    for (let i = 0; i < 3; i++) process.stdout.write(`--- instance ${i} output (tail) ---\n${(instances[i] as ChildProcess & { output: () => string }).output().slice(-3000)}\n`);
    process.exitCode = 1;
  }
}

async function cleanup(): Promise<void> {
  for (const fn of cleanups.reverse()) {
    try {
      await fn();
    } catch {
      // Best effort: the rest must still be cleaned.
    }
  }
}

process.on('SIGINT', () => void cleanup().then(() => process.exit(130)));
main()
  .catch((error: unknown) => {
    process.stderr.write(`scale proof failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
