// npm run scale:sync-cost [-- --rounds 5 --requests 300]
//
// What synchronous replication costs a write, on this machine: the Patroni
// topology of the failover proof (2 nodes), with synchronous_mode switched
// on and off between rounds (alternating, so that the machine's drift hits
// both alike). Each round measures two things: a bare commit (one INSERT,
// sequential, one connection through HAProxy's write port) and the service's
// upload (POST /address_book.json, 4 clients at once, through one instance).
// Prints p50/p99 per round and the medians of the rounds with their spread.
//
// Then what a primary does while its synchronous standby is down: the
// standby's Patroni and postmaster killed, with synchronous_mode_strict off
// (Patroni drops the standby from synchronous_standby_names: how long a commit
// waits) and on (commits wait until a standby is back: whether one commits
// within 10 s, and how soon after the standby's return).
import { Client } from 'pg';
import { parseArgs } from 'node:util';
import { percentile } from '../lib/percentile';
import { freePort } from '../lib/ports';
import { FAILOVER_PACKAGES, installDebianPackages } from './install';
import { startInstances, startRedis } from './instances';
import { call } from './load';
import { PatroniCluster } from './patroni';
import { log, postgresUser, Runner, sleep } from './processes';
import { seed, type VirtualUser } from './seed';

interface Round {
  synchronous: boolean;
  commit: { p50: number; p99: number };
  upload: { p50: number; p99: number };
}

const ms = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e6;

async function commits(url: string, n: number): Promise<number[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE TABLE IF NOT EXISTS sync_cost (id bigserial PRIMARY KEY, at timestamptz DEFAULT now())');
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const started = process.hrtime.bigint();
      await client.query('INSERT INTO sync_cost DEFAULT VALUES');
      times.push(ms(started));
    }
    return times;
  } finally {
    await client.end();
  }
}

async function uploads(base: string, users: VirtualUser[], n: number): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  await Promise.all(
    users.slice(0, 4).map(async (user) => {
      while (next < n) {
        const phone = `+1400${String(next++).padStart(8, '0')}`;
        const started = process.hrtime.bigint();
        const answer = await call(base, 0, 'POST', '/address_book.json', { 'SVC-Token': user.token }, { contacts: [{ name: 'c', phone }] });
        if (answer.status >= 300) throw new Error(`upload answered ${answer.status}: ${answer.text}`);
        times.push(ms(started));
      }
    }),
  );
  return times;
}

const summary = (values: number[]) => ({ p50: Number(percentile(values, 50).toFixed(2)), p99: Number(percentile(values, 99).toFixed(2)) });

/** How long one commit takes (or that it did not within `limitMs`). */
async function timedCommit(url: string, limitMs: number): Promise<number | 'blocked'> {
  const client = new Client({ connectionString: url, query_timeout: limitMs });
  client.on('error', () => {});
  await client.connect();
  const started = process.hrtime.bigint();
  try {
    await client.query('INSERT INTO sync_cost DEFAULT VALUES');
    return Math.round(ms(started));
  } catch {
    return 'blocked';
  } finally {
    await client.end().catch(() => {});
  }
}

/** Kills the synchronous standby, times a commit, restarts it; under strict mode also times the commit that waits for its return. */
async function standbyDown(cluster: PatroniCluster, strict: boolean): Promise<string> {
  const argv = ['--set', `synchronous_mode_strict=${strict}`];
  await cluster.editConfig(argv);
  await cluster.healthy();
  const standby = cluster.node((await cluster.members()).find((m) => m.role === 'sync_standby')!.name);
  await cluster.kill(standby);
  const during = await timedCommit(cluster.writeUrl, 10_000);
  const pending = strict ? timedCommit(cluster.writeUrl, 120_000) : Promise.resolve(0);
  const restarted = process.hrtime.bigint();
  cluster.startPatroni(standby);
  await pending;
  const back = Math.round(ms(restarted));
  await cluster.healthy(120_000);
  return strict
    ? `strict: a commit with the standby down: ${during === 'blocked' ? 'still waiting after 10 s' : `${during} ms`}; one waiting when the standby's Patroni was started again committed ${back} ms later`
    : `not strict: a commit begun right after the standby died took ${during === 'blocked' ? 'over 10 s' : `${during} ms`}`;
}

async function measure(runner: Runner, rounds: number, requests: number): Promise<void> {
  await runner.step('install Debian packages (PostgreSQL, Redis, patroni, etcd-server, etcd-client, haproxy)', () => installDebianPackages(FAILOVER_PACKAGES));
  const dir = runner.tempDir('chatsvc-sync-cost-', postgresUser());
  const cluster = new PatroniCluster(runner, dir, { nodes: 2, synchronous: true });
  await runner.step('topology: etcd, 2 Patroni nodes, HAProxy, Redis, 1 instance', () => cluster.start());
  const seeded = await seed(cluster.writeUrl, 4);
  const redis = await startRedis(runner, await freePort());
  const instances = await startInstances(runner, dir, [await freePort()], await freePort(), {
    databaseUrl: cluster.writeUrl,
    readUrl: cluster.readUrl,
    redisUrl: redis.url,
    secretsKey: seeded.secretsKey,
  });
  const base = `http://127.0.0.1:${instances.ports[0]}`;
  await uploads(base, seeded.users, 100); // warm-up: JIT, pools, statements
  const results: Round[] = [];
  for (let i = 0; i < rounds * 2; i++) {
    const synchronous = i % 2 === 0;
    await cluster.setSynchronous(synchronous);
    await sleep(500);
    const round = { synchronous, commit: summary(await commits(cluster.writeUrl, requests)), upload: summary(await uploads(base, seeded.users, requests)) };
    log(
      `round ${i + 1}: synchronous ${synchronous ? 'on ' : 'off'} commit p50 ${round.commit.p50} p99 ${round.commit.p99} ms; upload p50 ${round.upload.p50} p99 ${round.upload.p99} ms`,
    );
    results.push(round);
  }
  await cluster.setSynchronous(true);
  const down = [await standbyDown(cluster, false), await standbyDown(cluster, true)];
  report(results, down);
}

function report(results: Round[], down: string[]): void {
  const lines = ['', 'synchronous   commit p50 (min–max)       commit p99 median   upload p50 (min–max)       upload p99 median'];
  for (const synchronous of [true, false]) {
    const rs = results.filter((r) => r.synchronous === synchronous);
    const spread = (values: number[]) => `${percentile(values, 50).toFixed(2)} (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;
    lines.push(
      `${(synchronous ? 'on' : 'off').padEnd(14)}${spread(rs.map((r) => r.commit.p50)).padEnd(27)}${percentile(
        rs.map((r) => r.commit.p99),
        50,
      )
        .toFixed(2)
        .padEnd(20)}${spread(rs.map((r) => r.upload.p50)).padEnd(27)}${percentile(
        rs.map((r) => r.upload.p99),
        50,
      ).toFixed(2)}`,
    );
  }
  lines.push('', ...down, '');
  process.stdout.write(`${lines.join('\n')}\n`);
}

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, requests: { type: 'string', default: '300' } } });
const runner = new Runner();
runner.run('sync cost', async () => {
  await measure(runner, Number(values.rounds), Number(values.requests));
  return true;
});
