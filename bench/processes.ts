// The two servers under load, each a child process: the real service
// (`node dist/main.js`, as `npm start`; built first when src/ changed) and the
// baseline (bench/baseline.ts, through tsx).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { ensureBuilt, SERVICE_MAIN, SERVICE_NODE_FLAGS } from '../scripts/lib/compiled';
import { freePort } from '../scripts/lib/ports';

const ROOT = path.resolve(__dirname, '..');

/**
 * The service's environment in a benchmark, on top of the harness's own.
 * Settings the service gains for benchmarks (e.g. turning a rate limit off)
 * go here; unknown keys are ignored by the service's configuration.
 */
export const SERVICE_BENCH_ENV: Record<string, string> = {
  NODE_ENV: 'production',
  LOG_LEVEL: 'info',
  MIGRATE_ON_START: 'false',
  METRICS_ENABLED: 'true',
  RATE_LIMIT_ENABLED: 'false',
  // Production needs one; the benchmark creates no session through auth secrets.
  SECRETS_KEY: randomBytes(32).toString('hex'),
  // The sweeper is measured on an instance of its own (the sweeper scenario);
  // here its idle runs would add statements to the other scenarios' counts.
  SWEEP_INTERVAL_MS: '0',
  // The correctness check reads a book bigger than PostgreSQL's bind
  // parameters (--big-contacts): the per-book cap raised to hold it, as an
  // operator importing large books would (issue 31's default is 10,000).
  ADDRESS_BOOK_MAX_CONTACTS: '1000000',
  // The live scenario holds 10,000 sockets (--live-sockets) on this one
  // instance, one user each: the instance's cap (default 10,000) raised above
  // them so that the harness's own checks never meet it.
  LIVE_SOCKETS_MAX: '50000',
};

export interface Server {
  readonly name: string;
  readonly pid: number;
  readonly url: string;
  /**
   * The service's /metrics: its METRICS_PORT listener (in production the
   * public port serves none, issue 31); the baseline and the peers have none.
   */
  readonly metricsUrl?: string;
  /** Lines the process wrote to stderr (the last 200), for error reports. */
  readonly stderr: string[];
  /** The end of what it wrote to stdout (its last log lines), for error reports. */
  stdoutTail(): string;
  /** How it ended, once it has: "code 1", "signal SIGKILL". */
  exit(): string | null;
  stop(): Promise<number | null>;
}

export interface Memory {
  /** Resident set now, bytes. */
  rss: number;
  /** Peak resident set since the process started (VmHWM), bytes. */
  hwm: number;
}

export function memoryOf(pid: number): Memory | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return null;
  }
}

const running = new Set<ChildProcess>();

/** Kills every child still running (harness errors, Ctrl-C). */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/**
 * Starts `node <script>` (a .ts script: `node --require tsx/cjs <script>`) and waits for its JSON "listening" line
 * on stdout ({"msg":"listening","address":...}). stdout is drained for the
 * life of the process (the service logs a line per request).
 */
export async function startNode(
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  nodeFlags: string[] = [],
  timeoutMs = 60_000,
  /** A command the node process runs under (valgrind …): its pid is node's. */
  wrapper: string[] = [],
): Promise<Server> {
  // TypeScript compiled in the process's own thread (tsx's CommonJS hook):
  // `--import tsx` adds a module-loader thread, ~35 MB RSS.
  const loader = script.endsWith('.ts') ? ['--require', 'tsx/cjs'] : [];
  const argv = [process.execPath, ...nodeFlags, ...loader, script];
  const [command, ...args] = [...wrapper, ...argv];
  const child = spawn(command!, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const output = keepOutput(child);
  let ended: string | null = null;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      ended = signal ? `signal ${signal}` : `code ${code}`;
      resolve(code);
    }),
  );
  void exited.then(() => running.delete(child));

  const url = await listeningAddress(child, name, timeoutMs, (message) => {
    const tail = output.stderrTail();
    const out = output.stdoutTail();
    return new Error(
      `${message}${ended ? ` (${ended})` : ''}${tail ? `\n--- ${name} stderr ---\n${tail}` : ''}` + (out.trim() ? `\n--- ${name} stdout ---\n${out}` : ''),
    );
  });

  return {
    name,
    pid: child.pid!,
    url,
    stderr: output.stderr,
    stdoutTail: output.stdoutTail,
    exit: () => ended,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** What a child writes, kept for error reports. */
interface Output {
  /** Lines written to stderr (the last 200). */
  stderr: string[];
  /** The last 20 lines of stderr, the unfinished one included. */
  stderrTail: () => string;
  /** The last 8 lines of stdout. */
  stdoutTail: () => string;
}

/** Keeps the end of what the child writes: stderr by lines, stdout as its last 8 kB of raw chunks (cheap under load). */
function keepOutput(child: ChildProcess): Output {
  const stderr: string[] = [];
  let stderrRest = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (stderrRest + chunk).split('\n');
    stderrRest = lines.pop()!;
    stderr.push(...lines);
    if (stderr.length > 200) stderr.splice(0, stderr.length - 200);
  });
  const lastChunks: Buffer[] = [];
  let lastBytes = 0;
  child.stdout!.on('data', (chunk: Buffer) => {
    lastChunks.push(chunk);
    lastBytes += chunk.length;
    while (lastBytes - lastChunks[0]!.length >= 8192) lastBytes -= lastChunks.shift()!.length;
  });
  return {
    stderr,
    stderrTail: () => [...stderr, stderrRest].filter(Boolean).slice(-20).join('\n'),
    stdoutTail: () => Buffer.concat(lastChunks).toString('utf8').split('\n').slice(-8).join('\n'),
  };
}

/**
 * The address of the child's "listening" line on stdout (stdout is read
 * only until then). Fails (the child killed) when none comes within
 * `timeoutMs` or the child exits first; `failure` words the error.
 */
function listeningAddress(child: ChildProcess, name: string, timeoutMs: number, failure: (message: string) => Error): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let rest = '';
    let found = false;
    const timer = setTimeout(() => fail(`${name} did not report listening within ${timeoutMs / 1000} s`), timeoutMs);
    function fail(message: string) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(failure(message));
    }
    const read = (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        const address = listeningLine(line);
        if (address === undefined) continue;
        found = true;
        child.stdout!.off('data', read);
        clearTimeout(timer);
        resolve(address.replace('localhost', '127.0.0.1'));
        return;
      }
    };
    child.stdout!.on('data', read);
    child.once('exit', (code) => {
      if (!found) setTimeout(() => fail(`${name} exited (code ${code}) before listening`), 50);
    });
  });
}

/** The address of a JSON log line {"msg":"listening","address":...}; undefined for any other line. */
function listeningLine(line: string): string | undefined {
  if (!line.includes('"listening"')) return undefined;
  try {
    const entry = JSON.parse(line) as { msg?: string; address?: string };
    return entry.msg === 'listening' && entry.address ? entry.address : undefined;
  } catch {
    return undefined; // not a JSON line
  }
}

/** Where `--cpu-prof` runs leave the service's profile (written when it exits). */
export const PROFILE_DIR = path.join(ROOT, 'artifacts', 'profiles');

/** `env`: settings over SERVICE_BENCH_ENV (the sweeper scenario's instance sweeps). */
export async function startService(
  databaseUrl: string,
  poolMax: number,
  cpuProf = false,
  extraFlags: string[] = [],
  env: Record<string, string> = {},
  name = 'service',
  /** wrapper: a command node runs under (valgrind); script: another checkout's dist/main.js (or src/main.ts, through tsx). */
  launch: { wrapper?: string[]; timeoutMs?: number; script?: string } = {},
): Promise<Server> {
  // npm start's flags first: extraFlags (--service-flags) come later and win.
  const flags = [...SERVICE_NODE_FLAGS, ...(cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []), ...extraFlags];
  if (launch.script === undefined) ensureBuilt();
  const metricsPort = await freePort();
  const server = await startNode(
    name,
    launch.script ?? SERVICE_MAIN,
    {
      ...process.env,
      ...SERVICE_BENCH_ENV,
      ...env,
      DATABASE_URL: databaseUrl,
      DB_POOL_MAX: String(poolMax),
      PORT: '0',
      HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
      METRICS_HOST: '127.0.0.1',
    },
    flags,
    launch.timeoutMs,
    launch.wrapper,
  );
  await waitReady(server, '/readyz', launch.timeoutMs);
  return Object.assign(server, { metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` });
}

export async function startBaseline(databaseUrl: string, poolMax: number, sessionWrites: boolean): Promise<Server> {
  const server = await startNode('baseline', 'bench/baseline.ts', {
    ...process.env,
    DATABASE_URL: databaseUrl,
    DB_POOL_MAX: String(poolMax),
    PORT: '0',
    HOST: '127.0.0.1',
    BASELINE_SESSION_WRITES: sessionWrites ? '1' : '0',
  });
  await waitReady(server, '/healthz');
  return server;
}

/** The GraphQL peers (bench/peers/): Mercurius and Apollo Server alone doing the lookup, Apollo Server's `{ __typename }`. */
export type PeerName = 'mercurius' | 'apollo-floor' | 'apollo-lookup';

/** Starts a peer; `cpuProf`: under `node --cpu-prof` (its profile lands in artifacts/profiles/ when it stops). */
export async function startPeer(
  name: PeerName,
  databaseUrl: string,
  poolMax: number,
  cpuProf = false,
  extraFlags: string[] = [],
  /** wrapper: a command node runs under (valgrind). */
  launch: { wrapper?: string[]; timeoutMs?: number } = {},
): Promise<Server> {
  const flags = [...(cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`] : []), ...extraFlags];
  const server = await startNode(
    name,
    `bench/peers/${name}.ts`,
    { ...process.env, NODE_ENV: 'production', DATABASE_URL: databaseUrl, DB_POOL_MAX: String(poolMax), PORT: '0', HOST: '127.0.0.1' },
    flags,
    launch.timeoutMs,
    launch.wrapper,
  );
  await waitReady(server, '/healthz', launch.timeoutMs);
  return server;
}

/** CPU time (user + system) the process has used so far, milliseconds; null when it cannot be read. */
export function cpuTimeMs(pid: number): number | null {
  try {
    // Fields after the command (which may hold spaces) in /proc/<pid>/stat: utime and stime are the 14th and 15th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

async function waitReady(server: Server, path: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${server.url}${path}`);
      if (res.ok) return;
      last = `${res.status} ${await res.text()}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${server.name} not ready at ${path}: ${last}`);
}
