// `npm run bench:startup -- [--rounds 5] [--db-url postgres://…/postgres] CHECKOUT...`:
// what an operator and a newcomer wait for, in each checkout given (a fresh
// clone, installed: e.g. one of main and one of a branch), measured in
// alternating rounds (the order reversed each round, so that a machine's load
// drifts over both alike) and reported as medians with their spread:
//
// - `npm start` to the first 200 from /readyz, on a PostgreSQL server (a
//   database of the run's own per checkout, migrated by the first start) and
//   on the embedded database (a data folder per checkout, created by the first
//   start, whose round is left out: it migrates and seeds);
// - the service's resident memory (VmRSS of the node process, not npm's) 2 s
//   after it was ready, on both;
// - one admin command, `npm run -s admin -- app:create`, wall time, on the server.
//
// Each service runs as `npm start` runs it, with the checkout's defaults (the
// demo data on the embedded database included); HOST/PORT are set, LOG_LEVEL=warn.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string' }, 'db-url': { type: 'string' }, only: { type: 'string' } },
});
const ROUNDS = Number(values.rounds ?? 5);
const SERVER = values['db-url'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const checkouts = positionals.map((dir) => path.resolve(dir));
if (checkouts.length === 0) {
  process.stderr.write('usage: tsx bench/startup.ts [--rounds N] [--db-url URL] [--only ready|admin] CHECKOUT...\n');
  process.exit(2);
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const work = mkdtempSync(path.join(tmpdir(), 'startup-bench-'));
const dbName = (i: number) => `startup_bench_${process.pid}_${i}`;
const dbUrl = (i: number) => `${SERVER.replace(/\/[^/]*$/, '')}/${dbName(i)}`;

/** The pids of `pid`'s descendants. */
function descendants(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry), ...descendants(Number(entry)));
    } catch {
      // Gone meanwhile.
    }
  }
  return children;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

async function startToReady(dir: string, env: Record<string, string>, port: number): Promise<{ ms: number; rss: number }> {
  const started = performance.now();
  const child: ChildProcess = spawn('npm', ['start'], {
    cwd: dir,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`npm start in ${dir} exited: ${stderr}`);
      if (performance.now() - started > 120_000) throw new Error(`npm start in ${dir}: not ready after 120 s`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) break;
      } catch {
        // Not listening yet.
      }
      await sleep(5);
    }
    const ms = performance.now() - started;
    await sleep(2_000);
    // npm → sh -c → node: the one whose program is node.
    const node = descendants(child.pid!).find((pid) => {
      const [program = '', ...args] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return path.basename(program) === 'node' && args.some((arg) => arg.includes('main.'));
    });
    if (node === undefined) throw new Error('the service process was not found');
    return { ms, rss: rssMb(node) };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(-child.pid!, 'SIGTERM');
    await Promise.race([exited, sleep(15_000)]);
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
  }
}

function adminMs(dir: string, env: Record<string, string>): number {
  const started = performance.now();
  execFileSync('npm', ['run', '-s', 'admin', '--', 'app:create', '--name', 'startup-bench'], {
    cwd: dir,
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return performance.now() - started;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmt = (xs: number[], digits = 0) =>
  xs.length === 0 ? '-' : `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}, n=${xs.length})`;

async function main(): Promise<void> {
  const loadBefore = readFileSync('/proc/loadavg', 'utf8').trim();
  const admin = new Client({ connectionString: SERVER });
  await admin.connect();
  const figures = checkouts.map(() => ({ server: [] as number[], serverRss: [] as number[], embedded: [] as number[], embeddedRss: [] as number[], admin: [] as number[] }));
  const secretsKey = (i: number) => `${String(i).repeat(64)}`.slice(0, 64);
  try {
    for (let i = 0; i < checkouts.length; i++) await admin.query(`CREATE DATABASE ${dbName(i)}`);
    // Round 0 migrates the server databases and creates the embedded ones: not counted.
    for (let round = 0; round <= ROUNDS; round++) {
      const order = checkouts.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      for (const i of order) {
        const dir = checkouts[i]!;
        const server = { DATABASE_URL: dbUrl(i), SECRETS_KEY: secretsKey(i + 1) };
        const embedded = { DATABASE_URL: '', PGLITE_DIR: path.join(work, `pglite-${i}`, 'db'), SECRETS_KEY: secretsKey(i + 1) };
        if (values.only !== 'admin') {
          const s = await startToReady(dir, server, 4700 + i);
          const e = await startToReady(dir, embedded, 4700 + i);
          if (round > 0) {
            figures[i]!.server.push(s.ms);
            figures[i]!.serverRss.push(s.rss);
            figures[i]!.embedded.push(e.ms);
            figures[i]!.embeddedRss.push(e.rss);
          }
        }
        if (values.only !== 'ready') {
          const a = adminMs(dir, server);
          if (round > 0) figures[i]!.admin.push(a);
        }
        process.stderr.write(`round ${round} ${path.basename(dir)} done\n`);
      }
    }
  } finally {
    for (let i = 0; i < checkouts.length; i++) await admin.query(`DROP DATABASE IF EXISTS ${dbName(i)} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(work, { recursive: true, force: true });
  }
  const lines = ['| checkout | npm start → /readyz, server (ms) | idle RSS, server (MB) | npm start → /readyz, embedded (ms) | idle RSS, embedded (MB) | admin app:create (ms) |', '|---|---|---|---|---|---|'];
  checkouts.forEach((dir, i) => {
    const f = figures[i]!;
    lines.push(`| ${path.basename(dir)} | ${fmt(f.server)} | ${fmt(f.serverRss, 1)} | ${fmt(f.embedded)} | ${fmt(f.embeddedRss, 1)} | ${fmt(f.admin)} |`);
  });
  process.stdout.write(`${lines.join('\n')}\nmedian (min–max, n); load average before: ${loadBefore}, after: ${readFileSync('/proc/loadavg', 'utf8').trim()}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`startup bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
