// The sweeper: removes, in batches, what would otherwise only grow — expired
// sessions, used (timestamp, nonce) pairs past the window, and deleted
// messages' content kept for audit past its retention. main starts it; the
// admin CLI's `sweep` runs it once.
//
// Several instances may share the database: each batch runs only under the
// sweep lock (src/db/statements/sweeper.ts), so one instance sweeps at a time;
// an instance that finds the lock taken ends its run there (another is
// sweeping) and tries again at its next interval. Each batch is one statement
// on a pooled connection, returned at once: between batches and between runs
// the sweeper holds no connection and no lock, and requests waiting for a
// connection (the embedded database has one) get it before the next batch.
//
// It yields to requests: after each batch it pauses in proportion to the
// time the batch took, so that its statements take at most `maxShare` percent
// of the time while it works through a backlog (SWEEP_MAX_SHARE). On a shared
// database server, a sweeper running batches back to back took the CPU the
// requests needed: the REST lookup on the sweeping instance fell to ~0.58 of
// its throughput while 1,000,000 expired sessions went (BENCHMARKS.md,
// "The sweeper"). A batch's time is what it cost the database, whatever
// slowed it, so the pause grows when the server is busy, with no setting to
// tune per machine.
import type { Pool } from 'pg';
import { query, type Statement } from '../db/sql';
import { SWEEP_LIVE_EVENTS, SWEEP_NONCES, SWEEP_RETAINED_CONTENT, SWEEP_SESSIONS } from '../db/statements/sweeper';
import { TIMESTAMP_WINDOW_DEFAULT_S } from './sessions';

export const SWEPT_KINDS = ['sessions', 'nonces', 'retained_content', 'live_events'] as const;
export type SweptKind = (typeof SWEPT_KINDS)[number];

export interface SweeperOptions {
  /** Time between the end of a run and the start of the next (SWEEP_INTERVAL_MS); 0: `start` does nothing. */
  intervalMs?: number;
  /** Rows one statement removes at most (SWEEP_BATCH_SIZE). */
  batchSize?: number;
  /** Session requests' timestamp window (SESSION_TIMESTAMP_WINDOW_S): pairs signed before it can go. */
  timestampWindowSeconds?: number;
  /**
   * Percent of the time the sweeper's statements may take while it works
   * through a backlog (SWEEP_MAX_SHARE, 1 to 100): after a batch of t ms it
   * pauses t × (100 / maxShare − 1) ms. 100: batches back to back (the admin
   * CLI's `sweep`, which an operator runs to be done).
   */
  maxShare?: number;
  /** How long live events are kept for subscribers' `after` replays (LIVE_EVENT_RETENTION_S; default a day). */
  liveEventRetentionSeconds?: number;
  /** The clock the cut-offs are computed from (tests move it). */
  now?: () => number;
  /** Told of each run that removed something, or failed (main logs them). */
  onRun?: (result: SweepResult) => void;
  onError?: (error: unknown) => void;
}

export interface SweepResult {
  /** Rows removed by this run, by kind. */
  removed: Record<SweptKind, number>;
  /** Statements it ran. */
  batches: number;
  /** It stopped because another instance held the sweep lock. */
  skipped: boolean;
}

export const SWEEP_INTERVAL_DEFAULT_MS = 60_000;
/** Live events are kept a day: a client away longer refetches its history (RESYNC_REQUIRED). */
export const LIVE_EVENT_RETENTION_DEFAULT_S = 86_400;
export const SWEEP_BATCH_DEFAULT = 1_000;
/**
 * A tenth of the time: the foreground keeps ≥ 0.90 of its throughput while a
 * backlog goes, and the sweep still removes a few thousand sessions a second
 * (BENCHMARKS.md, "The sweeper"), far beyond what applications create.
 */
export const SWEEP_MAX_SHARE_DEFAULT = 10;

/**
 * How long past its expiry a session is kept at least: an instance may still
 * hold a touch of it from just before it expired (written within a second, or
 * later if the database was briefly away), which would have extended it. The
 * sweep goes by the hour a session expires in, so it is removed up to an hour
 * after that (src/db/statements/sweeper.ts).
 */
export const SESSION_SWEEP_GRACE_MS = 5 * 60_000;

/** Margin past the timestamp window before a (timestamp, nonce) pair goes: clocks of instances differ a little. */
const NONCE_SWEEP_MARGIN_MS = 60_000;

const none = (): Record<SweptKind, number> => ({ sessions: 0, nonces: 0, retained_content: 0, live_events: 0 });

export class Sweeper {
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly windowMs: number;
  private readonly pauseFactor: number;
  private readonly now: () => number;
  private readonly liveRetentionMs: number;
  /** Everything this instance removed since it started (the metric). */
  readonly removed = none();
  /** Milliseconds this instance's sweep statements took since it started (the metric: its share of the time). */
  busyMs = 0;
  /** Runs by outcome (the metric): swept (the lock was free), skipped (another instance held it), failed. */
  readonly runs = { swept: 0, skipped: 0, failed: 0 };
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<SweepResult> | undefined;
  private stopped = false;
  /** Ends the pause between two batches at once (stop). */
  private wake: (() => void) | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly options: SweeperOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? SWEEP_INTERVAL_DEFAULT_MS;
    this.batchSize = options.batchSize ?? SWEEP_BATCH_DEFAULT;
    this.windowMs = (options.timestampWindowSeconds ?? TIMESTAMP_WINDOW_DEFAULT_S) * 1000;
    this.pauseFactor = 100 / (options.maxShare ?? SWEEP_MAX_SHARE_DEFAULT) - 1;
    this.now = options.now ?? Date.now;
    this.liveRetentionMs = (options.liveEventRetentionSeconds ?? LIVE_EVENT_RETENTION_DEFAULT_S) * 1000;
  }

  /** Runs every `intervalMs` from now on, until `stop`. The timer keeps no process alive. */
  start(): void {
    if (this.intervalMs === 0 || this.timer !== undefined || this.stopped) return;
    this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.runOnce()
        .catch(() => {})
        .finally(() => {
          if (!this.stopped) this.schedule();
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  /**
   * One run: batches of each kind until one comes back short, or the lock is
   * another instance's. A run already in progress here is joined, not doubled.
   */
  runOnce(): Promise<SweepResult> {
    this.current ??= this.sweep().finally(() => {
      this.current = undefined;
    });
    return this.current;
  }

  /**
   * No run starts after this; a run in progress ends after its current batch
   * (one short statement, bounded by the statement timeout), which this
   * awaits, so that the database can be closed next.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    await this.current?.catch(() => {});
  }

  private async sweep(): Promise<SweepResult> {
    const result: SweepResult = { removed: none(), batches: 0, skipped: false };
    try {
      const now = this.now();
      const batches: [SweptKind, () => Promise<{ locked: boolean; removed: number } | undefined>][] = [
        ['sessions', () => this.batch(SWEEP_SESSIONS, [new Date(now - SESSION_SWEEP_GRACE_MS), this.batchSize])],
        ['nonces', () => this.batch(SWEEP_NONCES, [new Date(now - this.windowMs - NONCE_SWEEP_MARGIN_MS), this.batchSize])],
        ['retained_content', () => this.batch(SWEEP_RETAINED_CONTENT, [this.batchSize])],
        ['live_events', () => this.batch(SWEEP_LIVE_EVENTS, [new Date(now - this.liveRetentionMs), this.batchSize])],
      ];
      for (const [kind, batch] of batches) {
        while (!this.stopped) {
          const started = performance.now();
          const row = await batch();
          const ms = performance.now() - started;
          this.busyMs += ms;
          result.batches++;
          if (!row?.locked) {
            result.skipped = true;
            this.runs.skipped++;
            return result;
          }
          result.removed[kind] += row.removed;
          this.removed[kind] += row.removed;
          if (row.removed < this.batchSize) break;
          await this.yieldAfter(ms);
        }
      }
      this.runs.swept++;
      if (SWEPT_KINDS.some((kind) => result.removed[kind] > 0)) this.options.onRun?.(result);
      return result;
    } catch (error) {
      this.runs.failed++;
      this.options.onError?.(error);
      throw error;
    }
  }

  /** The pause after a full batch that took `ms`: requests get the database to themselves meanwhile. */
  private async yieldAfter(ms: number): Promise<void> {
    if (this.pauseFactor <= 0 || this.stopped) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms * this.pauseFactor);
      timer.unref();
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = undefined;
  }

  private async batch<P extends readonly unknown[]>(sql: Statement<P, { locked: boolean; removed: number }>, values: P) {
    const [row] = await query(this.pool, sql, values);
    return row;
  }
}
