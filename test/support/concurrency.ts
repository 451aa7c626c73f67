// Helpers for the concurrency suites (test/concurrency/): a bounded pool of
// concurrent tasks, a seeded random source (so a failing run can be replayed
// with CONCURRENCY_SEED=<seed>), timing of each request as the client saw it,
// and a watch on the database that records every write moving a session's
// expiry or a user's last_request_at backwards.
import type { Pool } from 'pg';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The seed of this file's random choices: CONCURRENCY_SEED when set (to replay
 * a failure), else a fresh one. Tests print it in their failure messages and
 * record it with their figures.
 */
export function chooseSeed(): number {
  const given = process.env.CONCURRENCY_SEED;
  if (given !== undefined && given !== '') return Number(given) >>> 0;
  return (Math.random() * 2 ** 32) >>> 0;
}

/** mulberry32: small, fast, good enough to pick ids and actors reproducibly. */
export function random(seed: number) {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const shuffle = <T>(items: readonly T[]): T[] => {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  /** `count` distinct items, in random order. */
  const sample = <T>(items: readonly T[], count: number): T[] => shuffle(items).slice(0, Math.min(count, items.length));
  return { next, int, pick, shuffle, sample, chance: (p: number) => next() < p };
}

export type Random = ReturnType<typeof random>;

/**
 * Runs `tasks` with at most `limit` in flight at once, all started as soon as
 * a slot frees; resolves to their results in task order. A task that throws
 * fails the whole run (after the others settle), as a test should.
 */
export async function runConcurrently<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, tasks.length) }, async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  });
  const settled = await Promise.allSettled(workers);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return results;
}

/** A call as the client saw it: when it was sent and when its answer was read (Date.now(), the server's clock too). */
export interface Timed<T> {
  startedAt: number;
  endedAt: number;
  result: T;
}

export async function timed<T>(call: () => Promise<T>): Promise<Timed<T>> {
  const startedAt = Date.now();
  const result = await call();
  return { startedAt, endedAt: Date.now(), result };
}

/** Counts of values, e.g. outcomes: { "200": 120, "403": 14 }. */
export function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) {
    const k = key(item);
    out[k] = (out[k] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Records, from inside the database, every UPDATE that moves a watched
 * session's `expires_at`, or a watched user's `last_request_at`, backwards
 * (triggers: they see every write, including those between two polls). Lives
 * in a schema of its own so that the digests of other suites (which cover the
 * service's schema) never see its table; the triggers on `sessions` and
 * `users` only act on watched rows and are dropped by `close()`.
 *
 * The server database is shared by the run's test files: names are unique per
 * watch, and nothing here changes a row of the service's tables.
 */
export class BackwardsWatch {
  private constructor(
    private readonly pool: Pool,
    private readonly name: string,
  ) {}

  static async start(pool: Pool, tokenHashes: readonly string[], userIds: readonly number[]): Promise<BackwardsWatch> {
    const name = `w${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6).toString(36)}`;
    const schema = 'concurrency_probe';
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`).catch(() => {}); // two files may race to create it
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await pool.query(`CREATE TABLE ${schema}.${name}_keys (kind text NOT NULL, key text NOT NULL, PRIMARY KEY (kind, key))`);
    await pool.query(
      `CREATE TABLE ${schema}.${name}_moves (kind text NOT NULL, key text NOT NULL, old_at timestamptz, new_at timestamptz, at timestamptz NOT NULL DEFAULT clock_timestamp())`,
    );
    await pool.query(`INSERT INTO ${schema}.${name}_keys SELECT 'session', unnest($1::text[])`, [tokenHashes]);
    await pool.query(`INSERT INTO ${schema}.${name}_keys SELECT 'user', unnest($1::int[])::text`, [userIds]);
    await pool.query(`
      CREATE FUNCTION ${schema}.${name}_session() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM ${schema}.${name}_keys WHERE kind = 'session' AND key = OLD.token_hash) THEN
          INSERT INTO ${schema}.${name}_moves (kind, key, old_at, new_at) VALUES ('session', OLD.token_hash, OLD.expires_at, NEW.expires_at);
        END IF;
        RETURN NEW;
      END $$`);
    await pool.query(`
      CREATE FUNCTION ${schema}.${name}_user() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM ${schema}.${name}_keys WHERE kind = 'user' AND key = OLD.id::text) THEN
          INSERT INTO ${schema}.${name}_moves (kind, key, old_at, new_at) VALUES ('user', OLD.id::text, OLD.last_request_at, NEW.last_request_at);
        END IF;
        RETURN NEW;
      END $$`);
    // WHEN keeps the cost off every other row: the function runs only for a backwards move.
    await pool.query(
      `CREATE TRIGGER ${name}_session AFTER UPDATE OF expires_at ON sessions FOR EACH ROW
         WHEN (NEW.expires_at < OLD.expires_at) EXECUTE FUNCTION ${schema}.${name}_session()`,
    );
    await pool.query(
      `CREATE TRIGGER ${name}_user AFTER UPDATE OF last_request_at ON users FOR EACH ROW
         WHEN (NEW.last_request_at < OLD.last_request_at) EXECUTE FUNCTION ${schema}.${name}_user()`,
    );
    return new BackwardsWatch(pool, name);
  }

  /** Stops watching a session (before the test moves its expiry backwards on purpose). */
  async forget(tokenHash: string): Promise<void> {
    await this.pool.query(`DELETE FROM concurrency_probe.${this.name}_keys WHERE kind = 'session' AND key = $1`, [tokenHash]);
  }

  /** Every backwards move seen so far: "session <hash prefix>: <old> → <new>". */
  async moves(): Promise<string[]> {
    const { rows } = await this.pool.query<{ kind: string; key: string; old_at: Date; new_at: Date }>(
      `SELECT kind, key, old_at, new_at FROM concurrency_probe.${this.name}_moves ORDER BY at`,
    );
    return rows.map((r) => `${r.kind} ${r.key.slice(0, 12)}: ${r.old_at.toISOString()} → ${r.new_at.toISOString()}`);
  }

  async close(): Promise<void> {
    const n = this.name;
    await this.pool.query(`DROP TRIGGER IF EXISTS ${n}_session ON sessions`);
    await this.pool.query(`DROP TRIGGER IF EXISTS ${n}_user ON users`);
    await this.pool.query(`DROP FUNCTION IF EXISTS concurrency_probe.${n}_session(), concurrency_probe.${n}_user()`);
    await this.pool.query(`DROP TABLE IF EXISTS concurrency_probe.${n}_moves, concurrency_probe.${n}_keys`);
  }
}
