// `npm run bench:lookup-profile`: where the service's CPU goes in a lookup
// under load, out of process (issue 18), beside Apollo Server's
// `{ __typename }` — not in-process inject, whose own cost hides the service's.
//
// Seeds a database of its own (chatsvc_profile; --reuse keeps it between
// runs), starts the service and the chosen peers as `npm run bench` does,
// drives each in turn with autocannon, and reads:
//
//   profile mode (default): each process runs under `node --cpu-prof`; the
//     samples of the measured window only (not the start or the warm-up) are
//     summarised: µs per request by area (a package, the service's folders,
//     GC, Node), the service's own frames (src/) by self time, and the top
//     frames overall. CPU per request from /proc beside it.
//   --pair DIR: this checkout's service and DIR's (another build, e.g. a
//     `git archive` of the commit before a change with this node_modules
//     linked in), both running, measured in turn, the order reversed each
//     round: CPU per request (/proc) side by side, per round.
//   --callgrind: each target's process under `valgrind --tool=callgrind`
//     (the service serves graphql and rest; the peers are their own),
//     instrumentation off through the start and an interleaved warm-up,
//     then on; counters zeroed, a fixed number of requests, dumped:
//     instructions per request, which do not move with what else runs on the
//     machine (CPU time does, ±25% here). Printed beside the total: the part
//     of V8's compilers (near 0 once the warm-up is interleaved) and of the
//     garbage collector (lumpy: a scavenge or a mark-compact falls in one
//     window and not the next). --frames adds instructions per request by
//     JavaScript function (V8's perf map names the JIT code); it slows V8's
//     scavenges (every move is logged), so totals are taken without it.
//     --service DIR: another checkout's service (a snapshot of a commit with
//     this node_modules linked in). About 10 minutes per target on a 2-core
//     machine shared with test runs.
// Options: --targets graphql,rest,apollo-floor,apollo-lookup,mercurius (profile mode:
// graphql,apollo-floor; callgrind and pair: graphql,rest); --users N (100,000);
// --seconds S (15) and --warmup S (5) per target; --connections N (20);
// --requests N (2,000) and --warm-requests N (4,000), --rounds N (2) for
// callgrind, --frames, --service DIR; --reuse; --label TEXT (names the output files).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { fire } from './load';
import { median } from './figures';
import { GRAPHQL_LOOKUP, GRAPHQL_TYPENAME } from './queries';
import { parseOptions } from './options';
import { type Server, cpuTimeMs, startPeer, startService } from './processes';
import { type Profile, render, summarise } from './profile-summary';
import { log } from './progress';
import { seed } from './seed';

type Target = 'graphql' | 'rest' | 'apollo-floor' | 'apollo-lookup' | 'mercurius';

const { values } = parseArgs({
  options: {
    targets: { type: 'string' },
    users: { type: 'string' },
    seconds: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    callgrind: { type: 'boolean' },
    requests: { type: 'string' },
    'warm-requests': { type: 'string' },
    rounds: { type: 'string' },
    reuse: { type: 'boolean' },
    label: { type: 'string' },
    top: { type: 'string' },
    pair: { type: 'string' },
    frames: { type: 'boolean' },
    service: { type: 'string' },
  },
});
const callgrind = values.callgrind ?? false;
const targets = (values.targets ?? (callgrind || values.pair ? 'graphql,rest' : 'graphql,apollo-floor')).split(',') as Target[];
const USERS = Number(values.users ?? 100_000);
const SECONDS = Number(values.seconds ?? 15);
const WARMUP = Number(values.warmup ?? 5);
const CONNECTIONS = Number(values.connections ?? 20);
const REQUESTS = Number(values.requests ?? 2_000);
const WARM_REQUESTS = Number(values['warm-requests'] ?? 4_000);
const ROUNDS = Number(values.rounds ?? 2);
const TOP = Number(values.top ?? 25);
const ROOT = path.resolve(__dirname, '..');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const OUT = path.join(ROOT, 'artifacts', 'profiles', `lookup-${values.label ?? stamp}`);
const STATE = path.join(ROOT, 'artifacts', 'profile-db.json');

interface Db {
  databaseUrl: string;
  serviceToken: string;
  baselineToken: string;
  users: number;
}

async function database(): Promise<Db> {
  const options = parseOptions([
    '--users',
    String(USERS),
    '--contacts',
    '100',
    '--big-contacts',
    '10',
    '--messages',
    '6000',
    '--database',
    'chatsvc_profile',
    '--user-batch',
    '2000',
    // The lookups' data only: no history dialog, no live dialogs.
    '--only',
    'lookups',
  ]);
  if (options === 'help') throw new Error('unreachable');
  if (values.reuse && existsSync(STATE)) {
    const state = JSON.parse(readFileSync(STATE, 'utf8')) as Db;
    const client = new Client({ connectionString: state.databaseUrl });
    try {
      await client.connect();
      const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM sessions WHERE expires_at > now() + interval '10 minutes'`);
      if (state.users === USERS && rows[0]!.n >= 2) return state;
    } catch {
      // gone: seeded again
    } finally {
      await client.end().catch(() => {});
    }
  }
  log(`seeding ${USERS.toLocaleString('en-US')} users into chatsvc_profile`);
  const seeded = await seed(options);
  const state: Db = { databaseUrl: seeded.databaseUrl, serviceToken: seeded.serviceToken, baselineToken: seeded.baselineToken, users: USERS };
  mkdirSync(path.dirname(STATE), { recursive: true });
  writeFileSync(STATE, JSON.stringify(state));
  return state;
}

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

function load(db: Db, target: Target) {
  const randomId = () => 1 + Math.floor(Math.random() * db.users);
  const token = target === 'mercurius' ? db.baselineToken : db.serviceToken;
  if (target === 'rest') {
    return { method: 'GET' as const, headers: { 'SVC-Token': token }, setupRequest: (req: object) => ({ ...req, path: `/users/external/${randomId()}.json` }) };
  }
  const floor = target === 'apollo-floor';
  return {
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', ...(floor ? {} : { 'SVC-Token': token }) },
    setupRequest: (req: object) => ({
      ...req,
      path: '/graphql',
      body: JSON.stringify(floor ? { query: GRAPHQL_TYPENAME } : { query: GRAPHQL_LOOKUP, variables: { id: randomId() } }),
    }),
  };
}

async function start(db: Db, target: Target, flags: string[], wrapper: string[] = []): Promise<Server> {
  if (target === 'graphql' || target === 'rest') {
    // --service DIR: another checkout's service (a snapshot of a commit with this node_modules linked in).
    // Its compiled dist/ when it has one (as this checkout's runs: tsx adds
    // its own per-call work), else its sources through tsx.
    const other = values.service ? path.resolve(values.service) : undefined;
    const script = other ? { script: existsSync(path.join(other, 'dist/main.js')) ? path.join(other, 'dist/main.js') : path.join(other, 'src/main.ts') } : {};
    return startService(db.databaseUrl, 10, false, flags, {}, 'service', wrapper.length ? { wrapper, timeoutMs: 900_000, ...script } : script);
  }
  return startPeer(target, db.databaseUrl, 10, false, flags, wrapper.length ? { wrapper, timeoutMs: 900_000 } : {});
}

async function drive(server: Server, db: Db, target: Target, spec: { duration?: number; amount?: number; connections: number }) {
  const { method, headers, setupRequest } = load(db, target);
  const result = await fire({ url: server.url, pid: server.pid, method, headers, pipelining: 1, ...spec, setupRequest: setupRequest });
  if (result.non2xx > 0 || result.errors > 0) log(`WARNING ${target}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result;
}

async function profileMode(db: Db): Promise<string> {
  mkdirSync(OUT, { recursive: true });
  const out: string[] = [
    `Lookup profiles: ${USERS.toLocaleString('en-US')} users, ${CONNECTIONS} connections, ${SECONDS} s measured after ${WARMUP} s warm-up per target; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} at start`,
  ];
  const perArea = new Map<string, Map<Target, number>>();
  for (const target of targets) {
    const name = `${target}.cpuprofile`;
    const server = await start(db, target, ['--cpu-prof', `--cpu-prof-dir=${OUT}`, `--cpu-prof-name=${name}`]);
    let window: { from: number; to: number };
    let requests: number;
    let cpu: number | null;
    let reqPerSec: number;
    try {
      await drive(server, db, target, { duration: WARMUP, connections: CONNECTIONS });
      const cpuBefore = cpuTimeMs(server.pid);
      const from = monotonicUs();
      const result = await drive(server, db, target, { duration: SECONDS, connections: CONNECTIONS });
      window = { from, to: monotonicUs() };
      const cpuAfter = cpuTimeMs(server.pid);
      requests = result.requests;
      reqPerSec = result.reqPerSec;
      cpu = cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / requests;
    } finally {
      await server.stop();
    }
    const profile = JSON.parse(readFileSync(path.join(OUT, name), 'utf8')) as Profile;
    const summary = summarise(profile, window);
    const perRequestUs = (ms: number) => (ms * 1000) / requests;
    out.push(
      '',
      `=== ${target}: ${reqPerSec} req/s; CPU ${cpu === null ? '?' : (cpu * 1000).toFixed(0)} µs/request (/proc); profile busy ${perRequestUs(summary.busyMs).toFixed(0)} µs/request ===`,
    );
    for (const [area, ms] of summary.areas) {
      if (!perArea.has(area)) perArea.set(area, new Map());
      perArea.get(area)!.set(target, perRequestUs(ms));
    }
    const own = summary.self.filter(([key]) => / src\//.test(key) || key.includes(' src/'));
    out.push('', `The service's own frames (src/) by self time: ${perRequestUs(own.reduce((n, [, ms]) => n + ms, 0)).toFixed(1)} µs/request in all`);
    for (const [key, ms] of own.slice(0, TOP))
      out.push(`  ${perRequestUs(ms).toFixed(2).padStart(7)} µs  ${((ms / summary.busyMs) * 100).toFixed(1).padStart(5)}%  ${key}`);
    out.push('', render(summary, TOP));
  }
  // Areas side by side, µs per request.
  const rows = [...perArea].sort((a, b) => Math.max(...b[1].values()) - Math.max(...a[1].values()));
  out.push('', `Self time by area, µs per request: ${targets.join(' | ')}`);
  for (const [area, byTarget] of rows.slice(0, 40)) {
    out.push(`  ${targets.map((t) => (byTarget.get(t) ?? 0).toFixed(1).padStart(7)).join(' ')}  ${area}`);
  }
  return out.join('\n');
}

/**
 * Instructions (all threads) per request, under callgrind. One process per
 * group of targets (the service serves graphql and rest; each peer is its
 * own), started with instrumentation off (`--instr-atstart=no`: the start
 * and the warm-up run at valgrind's bare speed, several times faster than
 * instrumented) and switched on after the warm-up. Each measure: 20
 * requests (the connections busy again), counters zeroed, REQUESTS requests,
 * dumped.
 *
 * --frames: node also runs with --perf-basic-prof and
 * --interpreted-frames-native-stack, so that V8 writes where each compiled
 * function's code lies (/tmp/perf-<pid>.map); callgrind names code it has no
 * symbol for by its entry address, which the map turns into the JavaScript
 * function. The last round's dump of each target is summarised: instructions
 * per request by function, inclusive and self, the service's own (src/) and
 * the top overall.
 */
async function callgrindMode(db: Db): Promise<string> {
  mkdirSync(OUT, { recursive: true });
  const frames = values.frames ?? false;
  const groups: Target[][] = [];
  const service = targets.filter((t) => t === 'graphql' || t === 'rest');
  if (service.length) groups.push(service);
  for (const t of targets) if (t !== 'graphql' && t !== 'rest') groups.push([t]);
  const counts: Instructions = { results: {}, steady: {}, gc: {}, dumps: {} };
  for (const group of groups) await countGroup(db, group, frames, counts);
  const out = instructionsReport(counts);
  if (frames) {
    for (const [target, d] of Object.entries(counts.dumps)) {
      out.push('', `=== ${target}: instructions per request by function (last round) ===`, framesOf(d.file, d.map, REQUESTS, TOP));
    }
  }
  return out.join('\n');
}

/** Instructions per request of each target, one figure per round. */
interface Instructions {
  results: Record<string, number[]>;
  /** Without V8's compilers' work (still optimising after a short warm-up: most of the spread between runs), and the garbage collector's. */
  steady: Record<string, number[]>;
  gc: Record<string, number[]>;
  /** Each target's last dump, with the perf map of its process. */
  dumps: Partial<Record<Target, { file: string; map: string }>>;
}

/** Runs one process (a group of targets) under callgrind: the warm-up, then ROUNDS measures of each target, into `counts`. */
async function countGroup(db: Db, group: Target[], frames: boolean, counts: Instructions): Promise<void> {
  const who = group.length > 1 || group[0] === 'graphql' || group[0] === 'rest' ? 'service' : group[0]!;
  // An explicit vgdb prefix: without a user name in the environment,
  // callgrind_control could not find the process's pipe (it looked for
  // "…-by-???-on-???").
  const vgdb = path.join(OUT, `vgdb-${who}`);
  const flags = frames ? ['--perf-basic-prof', '--interpreted-frames-native-stack'] : [];
  log(`starting ${who} under valgrind (instrumentation off until the warm-up is done)`);
  const server = await start(db, group[0]!, flags, valgrind(who, vgdb));
  const control = (...args: string[]) => callgrindControl(vgdb, server.pid, args);
  try {
    // Interleaved, four times over: code optimised while only one kind of
    // request came was deoptimised ("wrong map") and optimised again when
    // the other kind came (84 deoptimisations and 109 optimisations in the
    // first 3,000 REST lookups after 30,000 GraphQL ones, --trace-deopt),
    // which put V8's compiler into every measure that followed a switch.
    for (let pass = 0; pass < 4; pass++) {
      for (const target of group) {
        log(`warm-up ${pass + 1}/4: ${Math.ceil(WARM_REQUESTS / 4)} ${target} requests`);
        await drive(server, db, target, { amount: Math.ceil(WARM_REQUESTS / 4), connections: 4 });
      }
    }
    control('-i', 'on');
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of round % 2 === 0 ? group : [...group].reverse()) {
        // Instructions counted do not depend on valgrind's translations:
        // a few requests suffice for the connections to be busy again.
        await drive(server, db, target, { amount: 20, connections: 4 });
        control('-z');
        await drive(server, db, target, { amount: REQUESTS, connections: 4 });
        const file = await dump(who, control);
        const total = totalOf(file);
        (counts.results[target] ??= []).push(total / REQUESTS);
        const parts = partsOf(file);
        (counts.steady[target] ??= []).push((total - parts.compiler) / REQUESTS);
        (counts.gc[target] ??= []).push(parts.gc / REQUESTS);
        counts.dumps[target] = { file, map: `/tmp/perf-${server.pid}.map` };
        log(`  ${target}: ${(total / REQUESTS / 1000).toFixed(0)} k instructions/request`);
      }
    }
  } finally {
    await server.stop();
  }
}

/** The valgrind command a target's node runs under, instrumentation off until switched on. */
function valgrind(who: string, vgdb: string): string[] {
  const base = path.join(OUT, `callgrind.${who}.out`);
  // JIT code: valgrind must notice code V8 rewrites in place.
  return [
    'valgrind',
    '--tool=callgrind',
    '--vgdb=yes',
    `--vgdb-prefix=${vgdb}`,
    `--callgrind-out-file=${base}.%p`,
    '--smc-check=all-non-file',
    '--dump-line=no',
    '--compress-pos=no',
    '--compress-strings=no',
    '--instr-atstart=no',
  ];
}

function callgrindControl(vgdb: string, pid: number, args: string[]): void {
  // valgrind names its pipe after $HOST, which the servers are given
  // (127.0.0.1): callgrind_control must look for that name, or it says
  // "OK" having reached nobody.
  const said = execFileSync('callgrind_control', [`--vgdb-prefix=${vgdb}`, ...args, String(pid)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOST: '127.0.0.1' },
  });
  if (!said.includes('OK')) throw new Error(`callgrind_control ${args.join(' ')}: ${said}`);
}

/**
 * Has the process dump its counters and returns the dump's file. The dump is
 * written when valgrind gets to the command, after callgrind_control has
 * returned: waited for until it is whole.
 */
async function dump(who: string, control: (...args: string[]) => void): Promise<string> {
  const before = new Set(readdirSync(OUT));
  control('-d');
  for (let waited = 0; waited < 600; waited++) {
    const fresh = readdirSync(OUT).filter((f) => f.startsWith(`callgrind.${who}.out`) && !before.has(f));
    const file = fresh.length ? path.join(OUT, fresh.sort().at(-1)!) : undefined;
    if (file && /^totals: \d+/m.test(readFileSync(file, 'utf8'))) return file;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error('callgrind wrote no dump within 10 minutes');
}

function totalOf(file: string): number {
  const match = /^(?:summary|totals): (\d+)/m.exec(readFileSync(file, 'utf8'));
  if (!match) throw new Error('no totals in the callgrind dump');
  return Number(match[1]);
}

/** The medians and rounds of each target: all instructions, without the compilers, without the garbage collector too. */
function instructionsReport({ results, steady, gc }: Instructions): string[] {
  return [
    `Instructions per request (callgrind, all threads of the process; ${REQUESTS} requests per measure after ${WARM_REQUESTS} uninstrumented warm-up, 4 connections, ${ROUNDS} rounds; ${USERS.toLocaleString('en-US')} users):`,
    ...Object.entries(results).map(([t, v]) => `  ${t}: median ${(median(v) / 1000).toFixed(0)} k (rounds ${v.map((x) => (x / 1000).toFixed(0)).join(', ')})`),
    "Without V8's compilers (TurboFan, Maglev, Sparkplug: still optimising after the warm-up, most of the spread between runs); of which the garbage collector:",
    ...Object.entries(steady).map(
      ([t, v]) =>
        `  ${t}: median ${(median(v) / 1000).toFixed(0)} k (rounds ${v.map((x) => (x / 1000).toFixed(0)).join(', ')}); GC ${(median(gc[t]!) / 1000).toFixed(0)} k`,
    ),
    'Without the compilers and the garbage collector (the steadiest figure: what the requests themselves ran):',
    ...Object.entries(steady).map(([t, v]) => {
      const own = v.map((x, i) => x - gc[t]![i]!);
      return `  ${t}: median ${(median(own) / 1000).toFixed(0)} k (rounds ${own.map((x) => (x / 1000).toFixed(0)).join(', ')})`;
    }),
  ];
}

/** callgrind_annotate's self table of a dump: function → instructions. */
function selfTable(file: string): [string, number][] {
  const text = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const rows: [string, number][] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*([\d,]+) \([ \d.]+%\)\s+(.*?)(?: \[[^\]]*\])?$/.exec(line);
    if (m && m[2] !== 'PROGRAM TOTALS') rows.push([m[2]!, Number(m[1]!.replace(/,/g, ''))]);
  }
  return rows;
}

const COMPILER = /v8::internal::(compiler|maglev|baseline)::|v8::internal::Zone::|v8::internal::(OptimizedCompilationJob|TurbofanCompilationJob|Pipeline)/;
const GC =
  /v8::internal::(Scavenger|Scavenge|MarkCompact|Sweeper|Marking|ConcurrentMarking|Evacuat|MemoryAllocator|Heap::|IncrementalMarking|MinorMarkCompact|GCTracer)|heap::base::|cppgc::|IteratePointers<v8::internal::(Scavenge|IterateAndScavenge|Marking|Record)/;

/** The instructions of V8's compilers and of its garbage collector in a dump (self costs by function name). */
function partsOf(file: string): { compiler: number; gc: number } {
  let compiler = 0;
  let gc = 0;
  for (const [name, count] of selfTable(file)) {
    if (COMPILER.test(name)) compiler += count;
    else if (GC.test(name)) gc += count;
  }
  return { compiler, gc };
}

/** V8's perf map: code start → the function it is ("JS:*name file:line:col"; * optimised, ^ baseline, ~ interpreted). */
function readPerfMap(file: string): { starts: number[]; entries: { start: number; end: number; name: string }[] } {
  const byStart = new Map<number, { start: number; end: number; name: string }>();
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
      if (!m) continue;
      const start = parseInt(m[1]!, 16);
      // A later entry at the same address is code made after the first was freed.
      byStart.set(start, { start, end: start + parseInt(m[2]!, 16), name: m[3]! });
    }
  }
  const entries = [...byStart.values()].sort((a, b) => a.start - b.start);
  return { starts: entries.map((e) => e.start), entries };
}

/** The function of the JIT code at `address`, by V8's perf map. */
function jitName(map: ReturnType<typeof readPerfMap>, address: number): string {
  let lo = 0;
  let hi = map.starts.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (map.starts[mid]! <= address) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  const entry = found >= 0 ? map.entries[found] : undefined;
  if (!entry || address >= entry.end) return `0x${address.toString(16)} (JIT code not in the map)`;
  // Paths relative to the checkout measured (--service DIR's or this one).
  return entry.name
    .replace(/^JS:[~^+*]?/, '')
    .replace(ROOT + '/', '')
    .replace(values.service ? `${path.resolve(values.service)}/` : ROOT + '/', '');
}

/**
 * callgrind_annotate's inclusive and self tables of a dump, with the
 * addresses of JIT code named from V8's perf map, per request. A frame's
 * name folds V8's tiers (~ ^ + *) together, so a function counts once
 * whatever its code.
 */
function framesOf(file: string, mapFile: string, requests: number, top: number): string {
  const map = readPerfMap(mapFile);
  const nameOf = (address: number): string => jitName(map, address);
  const table = (inclusive: boolean): Map<string, number> => {
    const text = execFileSync('callgrind_annotate', [`--inclusive=${inclusive ? 'yes' : 'no'}`, '--threshold=100', file], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    const rows = new Map<string, number>();
    for (const line of text.split('\n')) {
      const m = /^\s*([\d,]+) \([ \d.]+%\)\s+(.*?)(?: \[[^\]]*\])?$/.exec(line);
      if (!m || m[2] === 'PROGRAM TOTALS') continue;
      const count = Number(m[1]!.replace(/,/g, ''));
      const where = m[2]!;
      const jit = /^\?\?\?:0x([0-9a-f]+)$/.exec(where);
      const name = jit ? nameOf(parseInt(jit[1]!, 16)) : where.replace(/^\?\?\?:/, '');
      // Inclusive rows of one function under several code objects are not
      // additive (one may call the other); the largest stands for it.
      rows.set(name, inclusive ? Math.max(rows.get(name) ?? 0, count) : (rows.get(name) ?? 0) + count);
    }
    return rows;
  };
  const render = (rows: Map<string, number>, filter: (name: string) => boolean) =>
    [...rows]
      .filter(([name]) => filter(name))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, count]) => `  ${(count / requests / 1000).toFixed(1).padStart(8)} k  ${name}`);
  const inclusive = table(true);
  const self = table(false);
  const own = (name: string) => name.includes(' src/');
  return [
    "The service's own functions (src/), inclusive, k instructions per request:",
    ...render(inclusive, own),
    '',
    "The service's own functions (src/), self:",
    ...render(self, own),
    '',
    'All functions, inclusive:',
    ...render(inclusive, () => true),
    '',
    'All functions, self:',
    ...render(self, () => true),
  ].join('\n');
}

/**
 * --pair DIR: this checkout's service against DIR's (another build of the
 * service, e.g. a `git archive` of the commit before a change, sharing this
 * node_modules), both running, measured in turn for each target, the order
 * reversed each round: CPU per request (/proc) side by side. On a shared
 * machine the absolute figures move with the load; the pairs, measured
 * seconds apart, compare.
 */
async function pairMode(db: Db, other: string): Promise<string> {
  const a = await start(db, 'graphql', []);
  // DIR's compiled service when it has one (as this checkout's runs), else its sources through tsx (a commit before the build existed).
  const otherMain = existsSync(path.join(other, 'dist/main.js')) ? path.join(other, 'dist/main.js') : path.join(other, 'src/main.ts');
  const b = await startService(db.databaseUrl, 10, false, [], {}, 'other', { script: otherMain });
  const figures: Record<string, { here: number[]; other: number[] }> = {};
  const rounds = Number(values.rounds ?? 4);
  try {
    for (const target of targets) {
      await drive(a, db, target, { duration: WARMUP, connections: CONNECTIONS });
      await drive(b, db, target, { duration: WARMUP, connections: CONNECTIONS });
    }
    for (let round = 0; round < rounds; round++) {
      for (const target of targets) {
        const pair =
          round % 2 === 0
            ? ([
                ['here', a],
                ['other', b],
              ] as const)
            : ([
                ['other', b],
                ['here', a],
              ] as const);
        for (const [side, server] of pair) {
          const r = await drive(server, db, target, { duration: SECONDS, connections: CONNECTIONS });
          const perRequest = (r.cpuMs ?? NaN) / r.requests;
          (figures[target] ??= { here: [], other: [] })[side].push(perRequest);
          log(`  round ${round + 1} ${target} ${side}: ${(perRequest * 1000).toFixed(0)} µs CPU/request, ${r.reqPerSec} req/s`);
        }
      }
    }
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
  const us = (v: number[]) => v.map((x) => (x * 1000).toFixed(0)).join(', ');
  return [
    `CPU per request (/proc), this checkout against ${other}; ${rounds} rounds of ${SECONDS} s per side and target, ${CONNECTIONS} connections; load average at the end ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}:`,
    ...Object.entries(figures).map(([t, f]) => {
      const ratios = f.here.map((x, i) => x / f.other[i]!);
      return `  ${t}: here median ${(median(f.here) * 1000).toFixed(0)} µs (${us(f.here)}); other ${(median(f.other) * 1000).toFixed(0)} µs (${us(f.other)}); here/other per round ${ratios.map((r) => r.toFixed(3)).join(', ')} (median ${median(ratios).toFixed(3)})`;
    }),
  ].join('\n');
}

async function main() {
  const db = await database();
  const text = values.pair ? await pairMode(db, path.resolve(values.pair)) : callgrind ? await callgrindMode(db) : await profileMode(db);
  const file = `${OUT}/${values.pair ? 'pair' : callgrind ? 'instructions' : 'summary'}.txt`;
  mkdirSync(OUT, { recursive: true });
  writeFileSync(file, `${text}\n`);
  process.stdout.write(`${text}\n\nWritten: ${file}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
