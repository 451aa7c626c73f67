// Contact discovery, budgeted by numbers rather than requests (issue 31): an
// upload's contacts are matched against the application's users, and the
// matches read back with their records, so uploads were a way to test
// ~30,000 phone numbers a second inside the request limits. Each user may
// add CONTACT_DISCOVERY_PER_DAY phone numbers new to all of their books a
// day (the way contact-discovery services bound enumeration); an upload that
// would pass it is refused whole (429, Retry-After), nothing stored.
//
// Counted like the failed-password budgets (src/services/login-attempts.ts):
// in this process (at most TRACKED_KEYS users, the least recently counted
// forgotten first) or, with REDIS_URL, in Redis, the in-process count taking
// over when Redis fails.
import type { SharedRedis } from '../scale/redis';
import { TRACKED_KEYS } from './login-attempts';

export const DISCOVERY_WINDOW_MS = 24 * 60 * 60_000;

/** Takes `n` of a budget of `max` per window, all or nothing: the seconds until it could (0: taken). */
export interface CountBudget {
  take(key: string, n: number): number | Promise<number>;
}

export class LocalCountBudget implements CountBudget {
  private readonly windows = new Map<string, { used: number; resetAt: number }>();
  constructor(
    private readonly max: number,
    private readonly windowMs = DISCOVERY_WINDOW_MS,
  ) {}

  take(key: string, n: number, now = Date.now()): number {
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) window = { used: 0, resetAt: now + this.windowMs };
    if (n > 0 && window.used + n > this.max) return Math.max(Math.ceil((window.resetAt - now) / 1000), 1);
    window.used += n;
    this.windows.delete(key);
    this.windows.set(key, window);
    if (this.windows.size > TRACKED_KEYS) this.windows.delete(this.windows.keys().next().value as string);
    return 0;
  }
}

/** KEYS[1]: the budget; ARGV: n, max, window (ms). Answers the ms to wait (0: taken). */
const TAKE = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > 0 and used + tonumber(ARGV[1]) > tonumber(ARGV[2]) then
  return math.max(redis.call('PTTL', KEYS[1]), 1)
end
redis.call('SET', KEYS[1], 0, 'PX', ARGV[3], 'NX')
redis.call('INCRBY', KEYS[1], ARGV[1])
return 0`;

export class SharedCountBudget implements CountBudget {
  private readonly local: LocalCountBudget;
  constructor(
    private readonly redis: SharedRedis,
    private readonly max: number,
    private readonly windowMs = DISCOVERY_WINDOW_MS,
  ) {
    this.local = new LocalCountBudget(max, windowMs);
  }

  async take(key: string, n: number): Promise<number> {
    let waitMs: number;
    try {
      waitMs = Number(await this.redis.client.eval(TAKE, 1, `${this.redis.prefix}discovery:${key}`, n, this.max, this.windowMs));
    } catch {
      return this.local.take(key, n);
    }
    if (waitMs === 0) this.local.take(key, n);
    return Math.ceil(waitMs / 1000);
  }
}
