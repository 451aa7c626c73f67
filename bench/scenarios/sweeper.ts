// The sweeper: the REST lookup while the sweeper removes a backlog. An
// instance of its own sweeping every second (the main service's sweeper is
// off); each round measures it with nothing to sweep and with a backlog of
// expired sessions seeded just before, the order alternating. The ratio is
// sweeping / quiet: what the sweep costs the requests served meanwhile, in
// the process and in the database. What a sweeping run leaves of its backlog
// is removed (and the table vacuumed) before the next run: each starts from
// the same backlog, and no quiet run waits behind an earlier round's (the
// backlogs used to add up, 1,809,000 left after round 2, and a quiet run
// waited 5 minutes and was sweeping still).
import { Client } from 'pg';
import type { BenchContext } from '../context';
import { type Figures, medianFigures, round2, roundOf } from '../figures';
import { type Elsewhere, measure, roundTag, timedLoad } from '../measure';
import { type Server, startService } from '../processes';
import { log } from '../progress';
import { request, sleep } from '../requests';
import { type Scenario, type SweepFigures, scenarioOf } from './scenario';
import { restLookupSpec } from './lookups';

/** The sweeper's instance, the database it sweeps, and how to measure a run on it. */
interface Sweeping {
  db: Client;
  sweeper: Server;
  on: Elsewhere;
}

/** What the sweeper may remove: sessions whose expiry hour ended more than its grace (5 minutes) ago. */
const DUE_SESSIONS = `sessions WHERE expiry_hour <= now() - interval '5 minutes' - interval '1 hour'`;
const DUE = `SELECT count(*)::int AS n FROM ${DUE_SESSIONS}`;
const backlogLeft = async (db: Client) => (await db.query<{ n: number }>(DUE)).rows[0]!.n;

/**
 * The rest of a run's backlog, removed by hand so that the next run starts from
 * the same state, and the table rewritten as the seed left it (VACUUM FULL).
 * A plain VACUUM leaves the emptied pages and the index's size with statistics
 * of the few sessions left: PostgreSQL then costs the token's index lookup
 * above a sequential scan of those pages, and the baseline's credential check
 * took 135 ms for the rest of the run (its lookups at 97 req/s against
 * 3,660; the service's cached credentials hid it).
 */
async function clearBacklog(db: Client): Promise<void> {
  await db.query(`DELETE FROM ${DUE_SESSIONS}`);
  await db.query('VACUUM (FULL, ANALYZE) sessions');
}
const removedSoFar = async (sweeper: Server) => {
  const text = await (await request(sweeper.metricsUrl ?? `${sweeper.url}/metrics`)).text();
  return Number(/^sweeper_removed_total\{kind="sessions"\} ([0-9.e+]+)$/m.exec(text)?.[1] ?? NaN);
};

/** The lookup with nothing to sweep: what an earlier round left is swept first. */
async function quietRun(ctx: BenchContext, s: Sweeping, tag: string): Promise<Figures> {
  const deadline = Date.now() + 300_000;
  while ((await backlogLeft(s.db)) > 0 && Date.now() < deadline) await sleep(500);
  if ((await backlogLeft(s.db)) > 0) ctx.warn(`sweeper${tag}: the backlog was not swept within 5 minutes; the quiet run is not quiet`);
  return measure(ctx, 'service', `REST lookup, nothing to sweep${tag}`, restLookupSpec(ctx), timedLoad(ctx.options), s.on);
}

/** The lookup while the sweeper removes a backlog seeded just before: its figures, and what the sweeper did. */
async function sweepingRun(ctx: BenchContext, s: Sweeping, r: number, tag: string): Promise<{ figures: Figures; run: SweepFigures['runs'][number] }> {
  const { options, seeded } = ctx;
  const seeding = performance.now();
  await s.db.query(
    // The statement's text as it always was (its indentation included).
    `INSERT INTO sessions (token_hash, application_id, user_id, expires_at)
               SELECT md5('bench-expired-' || $2::text || '-' || g), $1, NULL, now() - interval '1 day' - g * interval '1 millisecond'
                 FROM generate_series(1, $3::int) g`,
    [seeded.applicationId, `${r}-${Date.now()}`, options.sweepBacklog],
  );
  // What autovacuum does within a minute of such a change; a backlog that built
  // up over an outage was analyzed as it grew. (Without it the sweep runs on
  // statistics that say the table is empty: the batches' TID scans keep that
  // bounded, test/db/sweeper-plans.test.ts, but it is not the state measured.)
  await s.db.query('ANALYZE sessions');
  log(`  seeded ${options.sweepBacklog.toLocaleString('en-US')} expired sessions in ${Math.round(performance.now() - seeding) / 1000} s`);
  const before = await removedSoFar(s.sweeper);
  const started = performance.now();
  const figures = await measure(ctx, 'service', `REST lookup, sweeping${tag}`, restLookupSpec(ctx), timedLoad(options), s.on);
  const seconds = (performance.now() - started) / 1000;
  const removed = (await removedSoFar(s.sweeper)) - before;
  const leftAtEnd = await backlogLeft(s.db);
  const run = { removed, seconds: round2(seconds), rowsPerSecond: Math.round(removed / seconds), leftAtEnd };
  log(
    `  the sweeper removed ${removed.toLocaleString('en-US')} sessions in ${round2(seconds)} s (${Math.round(removed / seconds)}/s); ${leftAtEnd.toLocaleString('en-US')} left`,
  );
  if (leftAtEnd === 0) ctx.warn(`sweeper${tag}: the backlog was gone before the run ended (raise --sweep-backlog to load the whole run)`);
  await clearBacklog(s.db);
  return { figures, run };
}

/** The rounds, quiet and sweeping in alternating order, and the scenario they make. */
async function sweeperRounds(ctx: BenchContext, s: Sweeping): Promise<Scenario> {
  const { options } = ctx;
  const quiet: Figures[] = [];
  const busy: Figures[] = [];
  const sweepRuns: SweepFigures['runs'] = [];
  for (let r = 0; r < options.rounds; r++) {
    const tag = roundTag(r, options.rounds);
    for (const phase of r % 2 === 0 ? (['quiet', 'sweeping'] as const) : (['sweeping', 'quiet'] as const)) {
      if (phase === 'quiet') {
        quiet.push(await quietRun(ctx, s, tag));
        continue;
      }
      const { figures, run } = await sweepingRun(ctx, s, r, tag);
      busy.push(figures);
      sweepRuns.push(run);
    }
  }
  const scenario = scenarioOf(
    'sweeper_rest_lookup',
    `GET /users/external/{id}.json while the sweeper removes ${options.sweepBacklog.toLocaleString('en-US')} expired sessions ` +
      `(batches of ${options.sweepBatch}), against the same instance with nothing to sweep`,
    'duration',
    options.connections,
    medianFigures(busy),
    medianFigures(quiet),
    'the same instance with nothing to sweep',
    busy.map((f, i) => roundOf(f, quiet[i]!)),
  );
  scenario.sweep = { backlog: options.sweepBacklog, batchSize: options.sweepBatch, runs: sweepRuns };
  return scenario;
}

export async function runSweeper(ctx: BenchContext): Promise<Scenario[]> {
  const { options, seeded } = ctx;
  const sweeper = await startService(
    seeded.databaseUrl,
    options.poolMax,
    false,
    options.serviceFlags,
    { SWEEP_INTERVAL_MS: '1000', SWEEP_BATCH_SIZE: String(options.sweepBatch) },
    'sweeper',
  );
  const db = new Client({ connectionString: seeded.databaseUrl });
  await db.connect();
  try {
    log(
      `sweeper: ${options.rounds} round(s) of the REST lookup on an instance sweeping every second ` +
        `(batches of ${options.sweepBatch}), without and with ${options.sweepBacklog.toLocaleString('en-US')} expired sessions`,
    );
    return [await sweeperRounds(ctx, { db, sweeper, on: { target: sweeper, countStatements: false } })];
  } finally {
    await db.end();
    await sweeper.stop();
  }
}
