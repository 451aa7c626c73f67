// Nothing only grows (docs/decisions.md: Decisions, "Sweeper"): expired sessions, used
// (timestamp, nonce) pairs past the window and deleted messages' text past its
// retention are removed in batches by a sweeper that main starts on every
// instance and that works on one instance at a time (an advisory lock), with
// what it removed in /metrics, and that never holds a shutdown back.
//
// On a PostgreSQL server this file runs on a database of its own: a sweep
// removes whatever is due in the whole database, other files' rows included.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client, type Pool } from 'pg';
import { SERVICE_MAIN } from '../../scripts/lib/compiled';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/errors';
import { type Database, openDatabase } from '../../src/db';
import { createServices } from '../../src/services';
import { recordFigures } from '../support/figures';
import { needServer, requires } from '../support/requires';
import { seedTenant, servicesOver, type Tenant } from '../support/seed';
import { useService, usingServer } from '../support/service';

jest.setTimeout(180_000);

const root = path.resolve(__dirname, '../..');
const work = mkdtempSync(path.join(tmpdir(), 'sweeper-'));
const children = new Set<ChildProcess>();
const figures: Record<string, unknown> = {};
// Jest runs afterAll hooks in the order they were declared: the processes
// started over the service's database end before it closes, the folder goes after.
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  recordFigures('sweeper', figures);
});
const service = useService({ database: 'isolated' });
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

/** The sweep lock's key (src/db/statements/sweeper.ts): what another instance holds while it sweeps. */
const SWEEP_LOCK = `x'7377657000000000'::bigint`;

interface Backlog {
  expiredSessions: number;
  oldNonces: number;
  retainedPastTime: number;
}

/**
 * What a sweep must remove (sessions expired a day ago, pairs signed three
 * hours ago, retained text an hour past its time), and beside it what it
 * must keep: sessions expired a minute ago (within the grace), pairs signed
 * a minute ago, retained text not yet due. Returns the kept rows' count by kind.
 */
async function fill(pool: Pool, t: Tenant, backlog: Backlog): Promise<{ sessions: number; nonces: number; retained: number }> {
  const tag = randomBytes(4).toString('hex');
  await pool.query(
    `INSERT INTO sessions (token_hash, application_id, user_id, expires_at)
     SELECT md5($3 || g), $1, NULL, now() - interval '1 day' - g * interval '1 second' FROM generate_series(1, $2::int) g`,
    [t.applicationId, backlog.expiredSessions, `expired-${tag}`],
  );
  await pool.query(
    `INSERT INTO sessions (token_hash, application_id, user_id, expires_at)
     SELECT md5($2 || g), $1, NULL, now() - interval '1 minute' FROM generate_series(1, 3) g`,
    [t.applicationId, `recent-${tag}`],
  );
  await pool.query(
    `INSERT INTO session_nonces (application_id, signed_at, nonce)
     SELECT $1::int, date_trunc('second', now()) - interval '3 hours' - g * interval '1 second', $3::text || g FROM generate_series(1, $2::int) g
     UNION ALL
     SELECT $1::int, date_trunc('second', now()) - interval '1 minute', $3::text || 'recent' || g FROM generate_series(1, 5) g`,
    [t.applicationId, backlog.oldNonces, tag],
  );
  await pool.query(
    `WITH m AS (
       INSERT INTO messages (id, dialog_id, sender_id, body, deleted_at)
       SELECT $4 || lpad(to_hex(g), 16, '0'), $1, $2, NULL, now() - interval '2 hours' FROM generate_series(1, $3::int + 2) g
       RETURNING id
     )
     INSERT INTO retained_message_contents (message_id, body, deleted_at, expires_at)
     SELECT id, 'kept for audit', now() - interval '2 hours',
            CASE WHEN id > $4 || lpad(to_hex($3::int), 16, '0') THEN now() + interval '1 hour' ELSE now() - interval '1 hour' END
       FROM m`,
    [t.dialogId, t.owner.id, backlog.retainedPastTime, tag],
  );
  return counts(pool, t);
}

/** The tenant's rows of each kind the sweeper deals with. */
async function counts(pool: Pool, t: Tenant): Promise<{ sessions: number; nonces: number; retained: number }> {
  const { rows } = await pool.query<{ sessions: number; nonces: number; retained: number }>(
    `SELECT (SELECT count(*)::int FROM sessions WHERE application_id = $1) AS sessions,
            (SELECT count(*)::int FROM session_nonces WHERE application_id = $1) AS nonces,
            (SELECT count(*)::int FROM retained_message_contents r JOIN messages m ON m.id = r.message_id WHERE m.dialog_id = $2) AS retained`,
    [t.applicationId, t.dialogId],
  );
  return rows[0]!;
}

test('removes expired sessions, used nonces past the window and retained text past its time, in batches, and keeps everything else', async () => {
  const t = await seedTenant(service.app.provisioning);
  const backlog = { expiredSessions: 2_500, oldNonces: 1_200, retainedPastTime: 1_100 };
  const before = await fill(service.db.pool, t, backlog);
  const services = createServices(service.db, { sweeper: { batchSize: 1_000 } });
  try {
    const started = performance.now();
    const result = await services.sweeper.runOnce();
    const ms = performance.now() - started;
    expect(result).toEqual({
      removed: { sessions: backlog.expiredSessions, nonces: backlog.oldNonces, retained_content: backlog.retainedPastTime, live_events: expect.any(Number) },
      // 1,000 + 1,000 + 500 sessions; 1,000 + 200 nonces; 1,000 + 100 retained texts; one of live events (a day's retention: none due).
      batches: 8,
      skipped: false,
    });
    expect(await counts(service.db.pool, t)).toEqual({
      sessions: before.sessions - backlog.expiredSessions,
      nonces: before.nonces - backlog.oldNonces,
      retained: before.retained - backlog.retainedPastTime,
    });
    // The tenant's live sessions still work.
    expect((await service.rest('GET', '/session.json', { headers: t.as.owner })).status).toBe(200);
    // Nothing left to do: one short batch per kind.
    expect(await services.sweeper.runOnce()).toEqual({ removed: { sessions: 0, nonces: 0, retained_content: 0, live_events: 0 }, batches: 4, skipped: false });
    const rows = backlog.expiredSessions + backlog.oldNonces + backlog.retainedPastTime;
    figures.batches = { rows, batchSize: 1_000, ms: Math.round(ms), rowsPerSecond: Math.round(rows / (ms / 1000)) };
  } finally {
    await services.close();
  }
});

test('yields to requests: after each full batch it pauses in proportion to the batch, so its statements take at most SWEEP_MAX_SHARE of the time', async () => {
  const t = await seedTenant(service.app.provisioning);
  const backlog = { expiredSessions: 3_000, oldNonces: 0, retainedPastTime: 0 };
  /** One run over a fresh backlog: the run's wall time over the time its statements took. */
  const elapsedOverBusy = async (maxShare: number): Promise<number> => {
    await fill(service.db.pool, t, backlog);
    const services = createServices(service.db, { sweeper: { batchSize: 500, maxShare } });
    try {
      const started = performance.now();
      const result = await services.sweeper.runOnce();
      const elapsed = performance.now() - started;
      expect(result.removed.sessions).toBe(backlog.expiredSessions);
      return elapsed / services.sweeper.busyMs;
    } finally {
      await services.close();
    }
  };
  // A fifth of the time: a pause of four times each of the six full batches
  // (the three short ones that end the kinds take no pause, and little time).
  const paced = await elapsedOverBusy(20);
  // Back to back: the run is its statements.
  const flat = await elapsedOverBusy(100);
  figures.pacing = { maxShare20: Math.round(paced * 100) / 100, maxShare100: Math.round(flat * 100) / 100 };
  expect(paced).toBeGreaterThan(3);
  expect(flat).toBeLessThan(2);
});

test('stop ends a pause at once: a shutdown never waits for the sweeper to rest', async () => {
  const t = await seedTenant(service.app.provisioning);
  await fill(service.db.pool, t, { expiredSessions: 2_000, oldNonces: 0, retainedPastTime: 0 });
  // One percent: after its first batch of 1,000 the sweeper would rest 99 times that batch's time.
  const services = createServices(service.db, { sweeper: { batchSize: 1_000, maxShare: 1 } });
  try {
    const run = services.sweeper.runOnce();
    while (services.sweeper.busyMs === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const pause = services.sweeper.busyMs * 99;
    const stopping = performance.now();
    await services.sweeper.stop();
    const waited = performance.now() - stopping;
    const result = await run;
    figures.stopDuringPause = { pauseMs: Math.round(pause), stopMs: Math.round(waited) };
    // It ended after the one batch, inside what would have been its pause.
    expect(result.removed.sessions).toBe(1_000);
    expect(waited).toBeLessThan(pause);
  } finally {
    await services.close();
  }
  // What it left goes, so that the tests after this one find only their own backlog.
  const rest = createServices(service.db, { sweeper: { maxShare: 100 } });
  await rest.sweeper.runOnce().finally(() => rest.close());
});

const onServer = requires(needServer).test;
onServer('removes nothing while another instance holds the sweep lock, and everything once it is free', async () => {
  const t = await seedTenant(service.app.provisioning);
  await fill(service.db.pool, t, { expiredSessions: 300, oldNonces: 10, retainedPastTime: 10 });
  // Another instance: a process of its own on the same database, in the middle of a sweep.
  const other = new Client({ connectionString: service.db.url });
  await other.connect();
  const services = createServices(service.db, { sweeper: { batchSize: 100 } });
  try {
    await other.query(`BEGIN; SELECT pg_advisory_xact_lock(${SWEEP_LOCK})`);
    const held = await services.sweeper.runOnce();
    expect(held).toEqual({ removed: { sessions: 0, nonces: 0, retained_content: 0, live_events: 0 }, batches: 1, skipped: true });
    expect((await counts(service.db.pool, t)).sessions).toBeGreaterThanOrEqual(300);
    await other.query('COMMIT');
    const free = await services.sweeper.runOnce();
    expect(free).toMatchObject({ removed: { sessions: 300, nonces: 10, retained_content: 10 }, skipped: false });
    expect(services.sweeper.runs).toEqual({ swept: 1, skipped: 1, failed: 0 });
  } finally {
    await other.end();
    await services.close();
  }
});

onServer('two instances sweeping one backlog at once remove each row once, never both in a batch at the same time', async () => {
  const t = await seedTenant(service.app.provisioning);
  await fill(service.db.pool, t, { expiredSessions: 5_000, oldNonces: 0, retainedPastTime: 0 });
  const second = await openDatabase({ url: service.db.url, poolMax: 2, migrate: false });
  const a = createServices(service.db, { sweeper: { batchSize: 50 } });
  const b = createServices(second, { sweeper: { batchSize: 50 } });
  // Inside every statement that removed sessions, as the database sees it:
  // whether its own backend holds the sweep lock, and whether another does.
  const probe = `sweep_probe_${process.pid}_${Date.now().toString(36)}`;
  const holders = (who: string) =>
    `(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = x'73776570'::bigint AND objid = 0 AND objsubid = 1 AND ${who})`;
  await service.db.pool.query(`CREATE TABLE ${probe} (pid int NOT NULL, mine int NOT NULL, others int NOT NULL)`);
  await service.db.pool.query(`CREATE FUNCTION ${probe}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ${probe} SELECT pg_backend_pid(), ${holders('pid = pg_backend_pid()')}, ${holders('pid <> pg_backend_pid()')}
       WHERE EXISTS (SELECT 1 FROM gone);
      RETURN NULL;
    END $$`);
  await service.db.pool.query(`CREATE TRIGGER ${probe} AFTER DELETE ON sessions REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION ${probe}()`);
  try {
    let removed = 0;
    for (let i = 0; i < 1_000; i++) {
      const [ra, rb] = await Promise.all([a.sweeper.runOnce(), b.sweeper.runOnce()]);
      removed += ra.removed.sessions + rb.removed.sessions;
      if (!ra.skipped && !rb.skipped && ra.removed.sessions + rb.removed.sessions === 0) break;
    }
    expect(removed).toBe(5_000);
    expect((await counts(service.db.pool, t)).sessions).toBe(4 + 3);
    const { rows } = await service.db.pool.query<{ pid: number; mine: number; others: number }>(`SELECT pid, mine::int, others::int FROM ${probe}`);
    figures.twoInstances = {
      backlog: 5_000,
      batchSize: 50,
      sweepingStatements: rows.length,
      backends: new Set(rows.map((r) => r.pid)).size,
      runsSkipped: { a: a.sweeper.runs.skipped, b: b.sweeper.runs.skipped },
    };
    expect(rows.length).toBeGreaterThanOrEqual(100);
    // Every one held the lock, and no other backend held it meanwhile.
    expect(rows.filter((r) => r.mine !== 1 || r.others !== 0)).toEqual([]);
  } finally {
    await service.db.pool.query(`DROP TRIGGER IF EXISTS ${probe} ON sessions`);
    await service.db.pool.query(`DROP FUNCTION IF EXISTS ${probe}()`);
    await service.db.pool.query(`DROP TABLE IF EXISTS ${probe}`);
    await a.close();
    await b.close();
    await second.close();
  }
});

test('main starts it: expired sessions go on its interval, /metrics counts them, and SIGTERM stops it at once', async () => {
  const EXPIRED = 1_500;
  const dataDir = path.join(work, 'pglite');
  // The database main will run on, with a backlog: on a server this file's
  // own; embedded, a data folder of its own, filled before main opens it.
  let database: Database = service.db;
  if (!usingServer()) database = await openDatabase({ dataDir, migrate: true });
  const seeding = servicesOver(database);
  const t = await seedTenant(seeding.provisioning);
  await seeding.services.close();
  await fill(database.pool, t, { expiredSessions: EXPIRED, oldNonces: 0, retainedPastTime: 0 });
  if (!usingServer()) await database.close();

  const child = spawn(process.execPath, [SERVICE_MAIN], {
    cwd: root,
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      DATABASE_URL: usingServer() ? service.db.url! : '',
      PGLITE_DIR: dataDir,
      SECRETS_KEY: randomBytes(32).toString('hex'),
      HOST: '127.0.0.1',
      PORT: '0',
      DEMO_SEED: 'false',
      LOG_LEVEL: 'info',
      SWEEP_INTERVAL_MS: '1000',
      SWEEP_BATCH_SIZE: '500',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const lines: string[] = [];
  let stderr = '';
  // Whole lines, however the pipe cuts them into chunks.
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line) lines.push(line);
  });
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  let address: string | undefined;
  for (let waited = 0; !address && waited < 60_000; waited += 100) {
    const line = lines.find((l) => l.includes('"msg":"listening"'));
    if (line) address = JSON.parse(line).address as string;
    else if (child.exitCode !== null) throw new Error(`main exited: ${stderr}`);
    else await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(address).toBeDefined();

  // The first run comes one interval after the start; a loaded machine may take a few.
  const listening = Date.now();
  let swept = 0;
  let metrics = '';
  while (Date.now() - listening < 30_000) {
    metrics = await (await fetch(`${address}/metrics`)).text();
    swept = Number(/^sweeper_removed_total\{kind="sessions"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
    // Counted batch by batch; the run ends with the other kinds' batches.
    if (swept >= EXPIRED && /^sweeper_runs_total\{outcome="swept"\} [1-9]/m.test(metrics)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const sweptAfterMs = Date.now() - listening;
  expect(swept).toBe(EXPIRED);
  expect(metrics).toMatch(/^sweeper_runs_total\{outcome="swept"\} [1-9]/m);

  const stopping = Date.now();
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  const shutdownMs = Date.now() - stopping;
  // Nothing pending but the sweeper's timer, which must not hold the exit back.
  expect(shutdownMs).toBeLessThan(5_000);
  // Its runs were logged (log lines are batched: all are out once it exited).
  expect(lines.some((l) => l.includes('"msg":"swept"'))).toBe(true);

  if (!usingServer()) database = await openDatabase({ dataDir });
  try {
    expect((await counts(database.pool, t)).sessions).toBe(4 + 3);
  } finally {
    if (!usingServer()) await database.close();
  }
  figures.main = { expired: EXPIRED, batchSize: 500, intervalMs: 1000, sweptWithinMsOfListening: sweptAfterMs, shutdownMs };
});

test('its settings, the cap and the retention have defaults, and a value that would break them stops the start naming the variable', () => {
  expect(loadConfig({})).toMatchObject({
    SWEEP_INTERVAL_MS: 60_000,
    SWEEP_BATCH_SIZE: 1_000,
    SWEEP_MAX_SHARE: 10,
    SESSIONS_PER_USER_MAX: 100,
    DELETED_CONTENT_RETENTION_S: 0,
  });
  expect(loadConfig({ SWEEP_INTERVAL_MS: '0', DELETED_CONTENT_RETENTION_S: '2592000' })).toMatchObject({
    SWEEP_INTERVAL_MS: 0,
    DELETED_CONTENT_RETENTION_S: 2_592_000,
  });
  for (const [name, value] of [
    ['SWEEP_INTERVAL_MS', '500'],
    ['SWEEP_INTERVAL_MS', '-1'],
    ['SWEEP_BATCH_SIZE', '0'],
    ['SWEEP_BATCH_SIZE', '100001'],
    ['SWEEP_MAX_SHARE', '0'],
    ['SWEEP_MAX_SHARE', '101'],
    ['SESSIONS_PER_USER_MAX', '0'],
    ['SESSIONS_PER_USER_MAX', 'many'],
    ['DELETED_CONTENT_RETENTION_S', '-1'],
    ['DELETED_CONTENT_RETENTION_S', '1.5'],
  ]) {
    expect(() => loadConfig({ [name!]: value! })).toThrow(ConfigError);
    expect(() => loadConfig({ [name!]: value! })).toThrow(new RegExp(`^Invalid configuration:\\n  ${name}: `));
  }
});
