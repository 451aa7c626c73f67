// `npm run bench:floor`: what reading one caller's registered users (2,000
// full records of a 10,000-contact book, against 1,000,000 users) costs at the
// least on this machine, with no service around it: the figure against which
// issue 11's "full records p50 < 20 ms at 4 connections" is judged
// (BENCHMARKS.md). Run after `npm run bench` (it reads the database
// `chatsvc_bench` that run leaves behind; nothing in it is changed, and its
// one experiment table is temporary).
//
// It prints, as medians of alternating rounds, one request at a time:
// - database: PostgreSQL's own execution time of the service's statement
//   (EXPLAIN ANALYZE), the read every design that returns these rows pays;
// - rows + JSON: pg reading the rows and JSON.stringify writing the answer,
//   the least a handler returning pg's rows can do (wall time and CPU of
//   this process);
// - stored JSON: the same users' records kept as ready JSON text beside
//   the users (a temporary copy here) and joined by string_agg in the
//   database, so that the handler only passes one string on: the design that
//   leaves the least to Node.
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { REGISTERED_USERS } from '../src/db/statements/address-book';
import { PG_TYPES } from '../src/db/types';
import { median } from './figures';

const { values } = parseArgs({ options: { rounds: { type: 'string' }, requests: { type: 'string' } } });
const count = (name: string, text: string | undefined, fallback: number) => {
  const value = Number(text ?? fallback);
  if (Number.isInteger(value) && value >= 1) return value;
  process.stderr.write(`--${name} must be a whole number of at least 1, not ${text}\n`);
  process.exit(2);
};
const ROUNDS = count('rounds', values.rounds, 5);
const REQUESTS = count('requests', values.requests, 20);
const server = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
server.pathname = '/chatsvc_bench';

const spread = (values: number[]) => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`;

async function main() {
  const client = new Client({ connectionString: server.toString(), types: PG_TYPES });
  await client.connect();
  const { ownerId, application, matches } = await benchCaller(client);
  console.log(`caller ${ownerId}: ${matches} registered users`);
  await storeRecords(client);

  const params = [application, ownerId, ''];
  // The database's own time for the read, as PostgreSQL reports it.
  const executionMs = async () => {
    const plan = await client.query(`EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ${REGISTERED_USERS.text}`, params);
    return (plan.rows[0] as { 'QUERY PLAN': [{ 'Execution Time': number }] })['QUERY PLAN'][0]['Execution Time'];
  };
  const answers = wholeAnswers(client, params, ownerId);
  const { databaseRounds, answerRounds } = await measure(executionMs, answers);

  console.log(`database: PostgreSQL executes the read in ${median(databaseRounds).toFixed(1)} ms (rounds ${spread(databaseRounds)})`);
  for (const answer of Object.keys(answers) as Answer[]) {
    const walls = answerRounds[answer].map((s) => s.wall);
    const cpus = answerRounds[answer].map((s) => s.cpu);
    console.log(
      `${answer}: ${median(walls).toFixed(1)} ms per answer (rounds ${spread(walls)}), of which Node's CPU ${median(cpus).toFixed(1)} ms (${spread(cpus)}); ${answerRounds[answer][0]!.bytes} bytes`,
    );
  }
  // Little's law: 4 requests in flight, each needing this much of 2 cores.
  const floor = (2 * median(databaseRounds)).toFixed(0);
  console.log(`at 4 requests in flight on 2 cores, the database's share alone keeps the p50 at or above ~${floor} ms`);
  await client.end();
}

/** The bench's caller: the owner of the global book (udid '') with the most matches. */
async function benchCaller(client: Client): Promise<{ ownerId: number; application: number; matches: string }> {
  const owner = await client.query<{ owner: number; application: number; matches: string }>(
    `SELECT m.owner_id AS owner, u.application_id AS application, count(*) AS matches
       FROM address_book_matches m JOIN users u ON u.id = m.owner_id
      WHERE m.udid = '' GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 1`,
  );
  if (owner.rows.length === 0) throw new Error('no address book in chatsvc_bench: run `npm run bench` first');
  const { owner: ownerId, application, matches } = owner.rows[0]!;
  return { ownerId, application, matches };
}

/**
 * Every user's record as JSON text, in a table as wide and as scattered as
 * users itself (one row per user, in id order), so that reading 2,000 of
 * them costs what a stored column would.
 */
async function storeRecords(client: Client): Promise<void> {
  const started = Date.now();
  await client.query(
    `CREATE TEMP TABLE stored_records AS
       SELECT u.id, json_build_object('id', u.id, 'full_name', u.full_name, 'email', u.email, 'login', u.login,
         'phone', u.phone, 'website', u.website, 'created_at', u.created_at, 'updated_at', u.updated_at,
         'last_request_at', u.last_request_at, 'external_user_id', u.external_user_id, 'facebook_id', u.facebook_id,
         'twitter_id', u.twitter_id, 'blob_id', u.blob_id, 'custom_data', u.custom_data, 'age_over16', u.age_over16,
         'allow_statistics_analysis', u.allow_statistics_analysis, 'allow_sales_activities', u.allow_sales_activities,
         'parents_contacts', u.parents_contacts, 'user_tags', u.user_tags)::text AS record
         FROM users u ORDER BY u.id`,
  );
  await client.query('ALTER TABLE stored_records ADD PRIMARY KEY (id)');
  await client.query('ANALYZE stored_records');
  console.log(`stored records prepared in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

const STORED_TEXT = `SELECT coalesce(string_agg(r.record, ',' ORDER BY r.id), '') AS records
                        FROM stored_records r
                       WHERE r.id = ANY(ARRAY(SELECT m.user_id FROM address_book_matches m WHERE m.owner_id = $1 AND m.udid = $2))`;

type Answer = 'rows + JSON' | 'stored JSON';
type Round = { wall: number; cpu: number; bytes: number };

/** Whole answers, each returning its size in bytes. */
function wholeAnswers(client: Client, params: unknown[], ownerId: number): Record<Answer, () => Promise<number>> {
  return {
    'rows + JSON': async () => {
      const result = await client.query({ name: REGISTERED_USERS.name, text: REGISTERED_USERS.text, values: params });
      return JSON.stringify({ items: (result.rows as unknown[]).map((user) => ({ user })) }).length;
    },
    'stored JSON': async () => {
      const result = await client.query({ name: 'stored_records', text: STORED_TEXT, values: [ownerId, ''] });
      return `{"items":[${(result.rows[0] as { records: string }).records}]}`.length;
    },
  };
}

/** After a warm-up, ROUNDS rounds of REQUESTS of each measure, alternating their order: each round's medians. */
async function measure(
  executionMs: () => Promise<number>,
  answers: Record<Answer, () => Promise<number>>,
): Promise<{ databaseRounds: number[]; answerRounds: Record<Answer, Round[]> }> {
  const answerRounds = Object.fromEntries(Object.keys(answers).map((k) => [k, [] as Round[]])) as Record<Answer, Round[]>;
  const databaseRounds: number[] = [];
  const measureDatabase = async () => {
    const samples: number[] = [];
    for (let i = 0; i < REQUESTS; i++) samples.push(await executionMs());
    databaseRounds.push(median(samples));
  };
  const measureAnswer = async (answer: Answer) => {
    const samples: Round[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const wall0 = performance.now();
      const cpu0 = process.cpuUsage();
      const bytes = await answers[answer]();
      const cpu = process.cpuUsage(cpu0);
      samples.push({ wall: performance.now() - wall0, cpu: (cpu.user + cpu.system) / 1000, bytes });
    }
    answerRounds[answer].push({ wall: median(samples.map((s) => s.wall)), cpu: median(samples.map((s) => s.cpu)), bytes: samples[0]!.bytes });
  };
  const measures = [measureDatabase, ...(Object.keys(answers) as Answer[]).map((answer) => () => measureAnswer(answer))];

  // Warm-up, not counted.
  for (let i = 0; i < 3; i++) {
    await executionMs();
    for (const answer of Object.keys(answers) as Answer[]) await answers[answer]();
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const step of round % 2 === 0 ? measures : [...measures].reverse()) await step();
  }
  return { databaseRounds, answerRounds };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
