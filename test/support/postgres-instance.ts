// A PostgreSQL instance that a test starts, stops, kills and restarts itself,
// for the fault tests (test/faults): a database outage needs a database the
// test may take down, which neither the run's shared server
// (TEST_DATABASE_URL, other test files use it at the same time) nor the
// in-process embedded database (it lives and dies with the service) is.
//
// Which instance, in order of preference:
//
// 1. 'postgresql': this machine's PostgreSQL binaries (initdb, pg_ctl from
//    /usr/lib/postgresql/<version>/bin, /usr/pgsql-<version>/bin, or PATH).
//    initdb into a fresh temp folder (trust auth, fsync off: the data need
//    only survive a process stop, not a power cut), started with pg_ctl on a
//    free port, listening on 127.0.0.1 only, its Unix socket in the temp
//    folder (so it never meets the machine's own cluster). Commits stay
//    synchronous: with fsync off a commit still reaches the OS before it is
//    acknowledged, so it survives an 'immediate' stop (a process crash).
//    PostgreSQL refuses to run as root: when the tests run as root, the
//    binaries run as the `postgres` OS user (runuser/su), which owns the temp
//    folder. stop({mode}) is pg_ctl's own: 'fast' disconnects clients and
//    shuts down cleanly, 'immediate' is as abrupt as a crash (recovery
//    replays the WAL at the next start). A test process that dies without
//    destroy() leaves its server running (jest gives test files no exit
//    hook): the next start() stops and removes every instance whose owning
//    process is gone.
// 2. 'pglite': when there are no such binaries (or no `postgres` user while
//    running as root) — a user's fresh machine may have no PostgreSQL at all —
//    PGlite (the project's embedded database, @electric-sql/pglite +
//    @electric-sql/pglite-socket, as src/db/embedded.ts uses them) served from
//    a CHILD process on a free port over a persistent data folder. 'fast'
//    stops it with SIGTERM (the child closes its socket and the database),
//    'immediate' with SIGKILL; the child exits by itself when the test process
//    that started it is gone. PGlite serves one connection at a time (see
//    embedded.ts), so `poolMax` is 1 and only one client may be connected;
//    it has no statement_timeout and no pg_terminate_backend.
//
// TEST_PG_INSTANCE=pglite (or =postgresql) forces the choice, e.g. to run the
// fault tests as they run on a machine without PostgreSQL.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../../scripts/lib/ports';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isAlive } from '../../src/db/embedded';

export type InstanceKind = 'postgresql' | 'pglite';

/** Temp folders of real-PostgreSQL instances, and the file naming the test process that owns one. */
const SERVER_PREFIX = 'pg-instance';
const OWNER_FILE = 'owner.pid';
export type StopMode = 'fast' | 'immediate';

export interface PostgresInstance {
  readonly kind: InstanceKind;
  /** e.g. "PostgreSQL 15 (/usr/lib/postgresql/15/bin)" or "PGlite 0.5.14". */
  readonly description: string;
  readonly port: number;
  /** pg connection string of the instance's `postgres` database (superuser, no password). */
  readonly url: string;
  /** Most connections a pool onto this instance may open (1 for PGlite). */
  readonly poolMax: number;
  readonly running: boolean;
  /** Starts the instance (initialising its data folder the first time); resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it: 'fast' (default) shuts down cleanly, 'immediate' as abruptly as a crash. */
  stop(options?: { mode?: StopMode }): Promise<void>;
  restart(options?: { mode?: StopMode }): Promise<void>;
  /** Stops it if running and removes its folder. */
  destroy(): Promise<void>;
  /** The server's postmaster (PostgreSQL only): for signals pg_ctl has no mode for, such as a smart shutdown held open. */
  postmasterPid?(): number | undefined;
}

/** Why the real binaries were not used (null when they were or were not looked for). */
export let fallbackReason: string | null = null;

/** Creates (but does not start) an instance. */
export function createPostgresInstance(): PostgresInstance {
  const forced = process.env.TEST_PG_INSTANCE;
  if (forced === 'pglite') {
    fallbackReason = 'TEST_PG_INSTANCE=pglite';
    return new PgliteInstance();
  }
  const binaries = findPostgresBinaries();
  if (typeof binaries === 'string') {
    if (forced === 'postgresql') throw new Error(`TEST_PG_INSTANCE=postgresql, but ${binaries}`);
    fallbackReason = binaries;
    return new PgliteInstance();
  }
  fallbackReason = null;
  return new ServerInstance(binaries);
}

/** Whether a real PostgreSQL instance can be run here (without starting one). */
export function realPostgresAvailable(): boolean {
  return realPostgresMissing() === undefined;
}

/** Why no real PostgreSQL instance can be made here (test/support/requires.ts says it), or undefined. */
export function realPostgresMissing(): string | undefined {
  if (process.env.TEST_PG_INSTANCE === 'pglite') return 'TEST_PG_INSTANCE=pglite asks for PGlite';
  const found = findPostgresBinaries();
  return typeof found === 'string' ? found : undefined;
}

// ---------------------------------------------------------------------------
// Real PostgreSQL

interface Binaries {
  bin: string;
  version: string;
  /** Run as this OS user (we are root), or null to run as ourselves. */
  runAs: { name: string; uid: number; gid: number } | null;
}

/** The binaries and how to run them, or why they cannot be used. */
function findPostgresBinaries(): Binaries | string {
  const candidates: string[] = [];
  for (const root of ['/usr/lib/postgresql', '/usr/local/lib/postgresql']) {
    if (!existsSync(root)) continue;
    const versions = readdirSync(root)
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => path.join(root, v, 'bin')));
  }
  if (existsSync('/usr')) {
    candidates.push(
      ...readdirSync('/usr')
        .filter((d) => /^pgsql-\d+$/.test(d))
        .sort()
        .reverse()
        .map((d) => path.join('/usr', d, 'bin')),
    );
  }
  candidates.push(...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean));
  const bin = candidates.find((dir) => existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl')));
  if (!bin) return 'no PostgreSQL binaries (initdb, pg_ctl) found';
  let version = 'unknown';
  try {
    version = /(\d+)(\.\d+)?/.exec(execFileSync(path.join(bin, 'pg_ctl'), ['--version'], { encoding: 'utf8' }))?.[0] ?? version;
  } catch {
    // pg_ctl --version runs as root too; a failure here only loses the version.
  }
  if (process.getuid?.() !== 0) return { bin, version, runAs: null };
  // PostgreSQL refuses to run as root: run it as the postgres user.
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    const runner = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser', '/bin/su', '/usr/bin/su'].find(existsSync);
    if (!runner) return 'running as root, and neither runuser nor su exists to run PostgreSQL as the postgres user';
    return { bin, version, runAs: { name: 'postgres', uid, gid } };
  } catch {
    return 'running as root, and there is no postgres OS user to run PostgreSQL as';
  }
}

/** Runs a PostgreSQL binary (as the postgres user when we are root); resolves with its output. */
function runBinary(binaries: Binaries, name: string, args: string[], cwd: string): Promise<string> {
  const program = path.join(binaries.bin, name);
  let file = program;
  let argv = args;
  if (binaries.runAs) {
    const runuser = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find(existsSync);
    if (runuser) {
      file = runuser;
      argv = ['-u', binaries.runAs.name, '--', program, ...args];
    } else {
      file = ['/bin/su', '/usr/bin/su'].find(existsSync)!;
      const quoted = [program, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
      argv = [binaries.runAs.name, '-s', '/bin/sh', '-c', quoted];
    }
  }
  // Asynchronous on purpose: the service under test shares this process and
  // must keep answering while the instance starts or stops.
  return new Promise((resolve, reject) => {
    execFile(file, argv, { cwd, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${name} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

/** What both kinds share: a temporary folder, a port kept across restarts, restart and destroy. */
abstract class InstanceBase {
  protected portNumber = 0;
  protected constructor(protected readonly dir: string) {}

  abstract start(): Promise<void>;
  abstract stop(options?: { mode?: StopMode }): Promise<void>;

  get port(): number {
    return this.portNumber;
  }

  async restart(options: { mode?: StopMode } = {}): Promise<void> {
    await this.stop(options);
    await this.start();
  }

  async destroy(): Promise<void> {
    try {
      await this.stop({ mode: 'immediate' });
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

class ServerInstance extends InstanceBase implements PostgresInstance {
  readonly kind = 'postgresql' as const;
  readonly description: string;
  readonly poolMax = 10;
  private readonly dataDir: string;
  private readonly logFile: string;
  private initialised = false;
  private up = false;
  constructor(private readonly binaries: Binaries) {
    super(mkdtempSync(path.join(tmpdir(), `${SERVER_PREFIX}-`)));
    this.description = `PostgreSQL ${binaries.version} (${binaries.bin})`;
    this.dataDir = path.join(this.dir, 'data');
    this.logFile = path.join(this.dir, 'server.log');
    // Who owns the instance: a later run stops it if this process died without destroy().
    writeFileSync(path.join(this.dir, OWNER_FILE), String(process.pid));
    if (binaries.runAs) chownSync(this.dir, binaries.runAs.uid, binaries.runAs.gid);
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.portNumber}/postgres`;
  }

  get running(): boolean {
    return this.up;
  }

  async start(): Promise<void> {
    if (this.up) return;
    if (!this.initialised) {
      await sweepStaleServers(this.binaries);
      await runBinary(this.binaries, 'initdb', ['-D', this.dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C'], this.dir);
      this.portNumber = await freePort();
      appendFileSync(
        path.join(this.dataDir, 'postgresql.conf'),
        [
          '',
          '# test/support/postgres-instance.ts',
          `port = ${this.portNumber}`,
          "listen_addresses = '127.0.0.1'",
          `unix_socket_directories = '${this.dir}'`,
          'fsync = off',
          'max_connections = 100',
          '',
        ].join('\n'),
      );
      this.initialised = true;
    }
    await runBinary(this.binaries, 'pg_ctl', ['-D', this.dataDir, '-l', this.logFile, '-w', '-t', '60', 'start'], this.dir);
    this.up = true;
  }

  async stop(options: { mode?: StopMode } = {}): Promise<void> {
    if (!this.up) return;
    await runBinary(this.binaries, 'pg_ctl', ['-D', this.dataDir, '-m', options.mode ?? 'fast', '-w', '-t', '60', 'stop'], this.dir);
    this.up = false;
  }

  postmasterPid(): number | undefined {
    const file = path.join(this.dataDir, 'postmaster.pid');
    return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
  }

  /** The server's log, for failure messages. */
  log(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
  }
}

/**
 * Stops and removes the instances of test processes that died without
 * destroy() (a killed run, a crashed worker): jest's sandbox gives a test
 * file no 'exit' event to do it on the way out, so the next run does it.
 */
async function sweepStaleServers(binaries: Binaries): Promise<void> {
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(`${SERVER_PREFIX}-`))) {
    const dir = path.join(tmpdir(), name);
    let owner: number;
    try {
      owner = Number(readFileSync(path.join(dir, OWNER_FILE), 'utf8'));
    } catch {
      continue; // Being created, or not ours.
    }
    if (isAlive(owner)) continue;
    if (existsSync(path.join(dir, 'data', 'postmaster.pid'))) {
      await runBinary(binaries, 'pg_ctl', ['-D', path.join(dir, 'data'), '-m', 'immediate', '-w', 'stop'], dir).catch(() => {});
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// PGlite in a child process

/** The child: PGlite over `dataDir`, served on 127.0.0.1:`port`; prints "ready" once listening. */
const PGLITE_CHILD = `
const { PGlite } = require(process.env.PGLITE_MODULE);
const { PGLiteSocketServer } = require(process.env.PGLITE_SOCKET_MODULE);
(async () => {
  const db = await PGlite.create({ dataDir: process.env.PGLITE_DATA_DIR });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: Number(process.env.PGLITE_PORT), maxConnections: 1 });
  await server.start();
  process.stdout.write('ready\\n');
  // Gone with the test process that started it, however that one ended.
  const parent = Number(process.env.PGLITE_PARENT_PID);
  setInterval(() => { if (process.ppid !== parent) process.exit(1); }, 500);
  process.once('SIGTERM', async () => {
    await server.stop();
    await db.close();
    process.exit(0);
  });
})().catch((error) => {
  process.stderr.write(String(error && error.stack || error) + '\\n');
  process.exit(1);
});
`;

class PgliteInstance extends InstanceBase implements PostgresInstance {
  readonly kind = 'pglite' as const;
  readonly description: string;
  readonly poolMax = 1;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();

  constructor() {
    super(mkdtempSync(path.join(tmpdir(), 'pglite-instance-')));
    const version = (() => {
      try {
        // The package's exports do not include its package.json: find it next to the entry point.
        let dir = path.dirname(require.resolve('@electric-sql/pglite'));
        while (!existsSync(path.join(dir, 'package.json')) && dir !== path.dirname(dir)) dir = path.dirname(dir);
        return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
      } catch {
        return 'unknown';
      }
    })();
    this.description = `PGlite ${version} (child process; ${fallbackReason ?? 'forced'})`;
  }

  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.portNumber}/postgres?sslmode=disable`;
  }

  get running(): boolean {
    return this.child !== null;
  }

  async start(): Promise<void> {
    if (this.child) return;
    if (this.portNumber === 0) this.portNumber = await freePort();
    const child = spawn(process.execPath, ['-e', PGLITE_CHILD], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        PGLITE_MODULE: require.resolve('@electric-sql/pglite'),
        PGLITE_SOCKET_MODULE: require.resolve('@electric-sql/pglite-socket'),
        PGLITE_DATA_DIR: path.join(this.dir, 'data'),
        PGLITE_PORT: String(this.portNumber),
        PGLITE_PARENT_PID: String(process.pid),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk) => {
        out += String(chunk);
        if (out.includes('ready\n')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the PGlite child exited (${code}) before listening: ${stderr}`)));
    });
    this.child = child;
  }

  async stop(options: { mode?: StopMode } = {}): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill(options.mode === 'immediate' ? 'SIGKILL' : 'SIGTERM');
    await this.exited;
    this.child = null;
  }
}
