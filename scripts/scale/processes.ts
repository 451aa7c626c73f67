// What the scale proofs start, and how everything started is stopped: each
// child process is stopped by its own pid, each temp folder removed, in the
// reverse order of their making, whatever happens (a failed check, an
// exception, Ctrl-C). Named steps print as they begin, so that a run's log
// says what it was doing (installing packages, making the topology, …).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function log(message: string): void {
  process.stdout.write(`[${new Date().toISOString().slice(11, 23)}] ${message}\n`);
}

/** A child process of ours, with the tail of its output. */
export interface Proc {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  output(): string;
  running(): boolean;
  /** Resolves when it has exited. */
  exited(): Promise<void>;
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  /** Where its output goes when it exits (for a failed run's post-mortem). */
  logFile?: string;
  /** Run as this user (we are root; PostgreSQL and Patroni refuse root). */
  user?: { uid: number; gid: number };
  cwd?: string;
}

let postgres: { uid: number; gid: number } | undefined;

/** The postgres OS user, which owns clusters' folders and runs their processes. */
export function postgresUser(): { uid: number; gid: number } {
  postgres ??= {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString()),
  };
  return postgres;
}

export class Runner {
  private readonly cleanups: (() => void | Promise<void>)[] = [];
  private readonly firsts: (() => void | Promise<void>)[] = [];
  private cleaned = false;

  /** Runs `fn` as a named step: printed, timed. */
  async step<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
    log(`== ${name}`);
    const started = Date.now();
    const result = await fn();
    log(`== ${name}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return result;
  }

  /** Something to undo at the end (in reverse order of registration). */
  defer(fn: () => void | Promise<void>): void {
    this.cleanups.push(fn);
  }

  /** Something to do at the end before anything else is undone (a graceful stop before the SIGKILLs). */
  deferFirst(fn: () => void | Promise<void>): void {
    this.firsts.push(fn);
  }

  /** A temp folder, removed at the end; owned by `owner` when given. */
  tempDir(prefix: string, owner?: { uid: number; gid: number }): string {
    const dir = mkdtempSync(path.join(tmpdir(), prefix));
    if (owner) chownSync(dir, owner.uid, owner.gid);
    this.defer(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  /** A child process, SIGKILLed at the end if it is still running. */
  start(name: string, command: string, argv: string[], options: StartOptions = {}): Proc {
    const child = spawn(command, argv, {
      env: options.env ?? process.env,
      cwd: options.cwd ?? ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.user ?? {}),
    });
    const chunks: string[] = [];
    const keep = (data: Buffer) => {
      chunks.push(data.toString());
      if (chunks.length > 400) chunks.shift();
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.once('exit', () => {
      try {
        if (options.logFile) writeFileSync(options.logFile, chunks.join(''));
      } catch {
        // Cleaned up already.
      }
    });
    const running = () => child.exitCode === null && child.signalCode === null;
    this.defer(async () => {
      if (!running()) return;
      child.kill('SIGKILL');
      await exited;
    });
    return { name, child, pid: child.pid ?? 0, output: () => chunks.join(''), running, exited: () => exited };
  }

  /** Stops everything started, removes every folder; safe to call twice. */
  async cleanup(): Promise<void> {
    if (this.cleaned) return;
    this.cleaned = true;
    for (const fn of [...this.firsts, ...this.cleanups.reverse()]) {
      try {
        await fn();
      } catch {
        // Best effort: the rest must still be cleaned.
      }
    }
  }

  /** Runs `main`, then cleans up whatever happened; Ctrl-C cleans up too. Sets the exit code. */
  run(label: string, main: () => Promise<boolean>): void {
    process.on('SIGINT', () => void this.cleanup().then(() => process.exit(130)));
    // A rejection nobody handled would end the process with its clusters, instances and proxies left running.
    process.on('unhandledRejection', (reason) => {
      process.stderr.write(`${label} failed: unhandled rejection: ${(reason as Error | undefined)?.stack ?? String(reason)}\n`);
      void this.cleanup().then(() => process.exit(1));
    });
    main()
      .then((ok) => {
        if (!ok) process.exitCode = 1;
      })
      .catch((error: unknown) => {
        process.stderr.write(`${label} failed: ${(error as Error).stack ?? String(error)}\n`);
        process.exitCode = 1;
      })
      .finally(() => this.cleanup());
  }
}

/** Polls `check` every 100 ms until it answers true (errors count as false). */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}
