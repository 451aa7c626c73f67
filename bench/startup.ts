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
// - the CPU time the service's node process had used when it was ready;
// - its resident memory (VmRSS of the node process, not npm's) 2 s after it
//   was ready (start-up's garbage still committed) and 10 s after (V8's memory
//   reducer shrank the heap after ~5 s idle), on both;
// - one admin command, `npm run -s admin -- app:create`, wall time, on the server.
//
// Each service runs as `npm start` runs it, with the checkout's defaults (the
// demo data on the embedded database included); HOST/PORT are set, LOG_LEVEL=warn.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { median } from './figures';

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

interface Start {
  /** `npm start` to the first 200 from /readyz, wall time. */
  ms: number;
  /** CPU time (user + system) the service's node process had used by then: less sensitive to a shared machine's load. */
  cpuMs: number;
  /** Resident memory 2 s after ready (start-up's young generation still committed) and 10 s after (V8's memory reducer has run). */
  rss2: number;
  rss10: number;
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

let nextPort = 4700;

async function startToReady(dir: string, env: Record<string, string>): Promise<Start> {
  // A port of its own each time: an answer from a previous instance cannot be taken for this one's.
  const port = nextPort++;
  const started = performance.now();
  const child: ChildProcess = spawn('npm', ['start'], {
    cwd: dir,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  let node: number | undefined;
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
    // npm → sh -c → node (or npm → node): the one whose program is node.
    node = descendants(child.pid!).find((pid) => {
      const [program = '', ...args] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return path.basename(program) === 'node' && args.some((arg) => arg.includes('main.'));
    });
    if (node === undefined) {
      const seen = descendants(child.pid!).map((pid) => `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`);
      throw new Error(`the service process was not found among ${child.pid}'s: ${seen.join('; ')}`);
    }
    const cpu = cpuMs(node);
    await sleep(2_000);
    const rss2 = rssMb(node);
    await sleep(8_000);
    return { ms, cpuMs: cpu, rss2, rss10: rssMb(node) };
  } finally {
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, name);
      } catch {
        // The group is gone already.
      }
    };
    const exited = new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
    signal('SIGTERM');
    await Promise.race([exited, sleep(15_000)]);
    // npm may leave before the service has closed: the next start needs its port and its data folder.
    for (let waited = 0; node !== undefined && existsSync(`/proc/${node}`) && waited < 15_000; waited += 50) await sleep(50);
    signal('SIGKILL');
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

const fmt = (xs: number[], digits = 0) =>
  xs.length === 0 ? '-' : `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}, n=${xs.length})`;

async function main(): Promise<void> {
  const loadBefore = readFileSync('/proc/loadavg', 'utf8').trim();
  const admin = new Client({ connectionString: SERVER });
  await admin.connect();
  const figures = checkouts.map(() => ({ server: [] as Start[], embedded: [] as Start[], admin: [] as number[] }));
  const secretsKey = (i: number) => String(i).repeat(64).slice(0, 64);
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
          const s = await startToReady(dir, server);
          const e = await startToReady(dir, embedded);
          if (round > 0) {
            figures[i]!.server.push(s);
            figures[i]!.embedded.push(e);
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
  const lines = [
    '| checkout | database | `npm start` → /readyz (ms) | service CPU by then (ms) | RSS 2 s after (MB) | RSS 10 s after (MB) |',
    '|---|---|---|---|---|---|',
  ];
  checkouts.forEach((dir, i) => {
    for (const kind of ['server', 'embedded'] as const) {
      const f = figures[i]![kind];
      if (f.length === 0) continue;
      lines.push(
        `| ${path.basename(dir)} | ${kind} | ${fmt(f.map((x) => x.ms))} | ${fmt(f.map((x) => x.cpuMs))} | ${fmt(
          f.map((x) => x.rss2),
          1,
        )} | ${fmt(
          f.map((x) => x.rss10),
          1,
        )} |`,
      );
    }
  });
  lines.push('', '| checkout | `npm run -s admin -- app:create`, server (ms) |', '|---|---|');
  checkouts.forEach((dir, i) => lines.push(`| ${path.basename(dir)} | ${fmt(figures[i]!.admin)} |`));
  process.stdout.write(
    `${lines.join('\n')}\nmedian (min–max, n); load average before: ${loadBefore}, after: ${readFileSync('/proc/loadavg', 'utf8').trim()}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`startup bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
