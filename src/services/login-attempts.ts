// Failed password attempts, counted in fixed windows under three budgets:
//
// - per account: every name of a user (its login and its email) spends one
//   budget, so a guesser gets it once, not once per name;
// - per unknown name (a login or email that names no user of the
//   application), the same size as an account's, so that a budget never tells
//   a name that exists from one that does not;
// - per client address, whatever the names.
//
// Past a budget, further attempts are refused (429) before the password is
// checked, so guessing costs the guesser time, not the service scrypt work; a
// success clears its account's count.
//
// Keys have a fixed size and hold no name (src/services/keys.ts): an account
// by its ids, a name by a digest, an address by its client (IPv6 by /64).
// Counted in this process's memory (LoginAttempts: at most TRACKED_KEYS
// windows, the least recently failed forgotten first) or, with REDIS_URL, in
// Redis (SharedLoginAttempts), so that a guesser spreading over N instances
// gets the budget once, not N times. When Redis fails, the in-memory count
// takes over: the budget is then per instance again, never gone.
//
// rate-limiter-flexible (npm) has this pattern, but its memory store keeps
// every key of a window (a timer each, no bound on their number), which a
// spray of names would grow without limit; its Redis store does what
// SharedLoginAttempts does (SET NX PX, INCR).
import type { SharedRedis } from '../scale/redis';
import { addressKey, digestKey } from './keys';

export interface LoginAttemptsOptions {
  windowMs?: number;
  /** Failures allowed per account (login and email together), and per unknown login or email, in a window. */
  perLogin?: number;
  /** Failures allowed per client address in a window, whatever the names. */
  perAddress?: number;
}

/** What a failure is counted against. */
export interface Subject {
  budget: 'account' | 'name' | 'address';
  key: string;
}

export const subjects = {
  account: (applicationId: number, userId: number): Subject => ({ budget: 'account', key: `account:${applicationId}:${userId}` }),
  /** A login or email that names no user. */
  name: (applicationId: number, field: 'login' | 'email', value: string): Subject => ({
    budget: 'name',
    key: `name:${digestKey(`${applicationId}:${field}:${value}`)}`,
  }),
  address: (address: string): Subject => ({ budget: 'address', key: `address:${addressKey(address)}` }),
};

/** What the sessions service asks of a failure budget (in memory or in Redis). */
export interface FailureBudget {
  /** Seconds until these subjects may try again; 0 when they may try now. */
  retryAfter(subjects: readonly Subject[]): number | Promise<number>;
  failed(subjects: readonly Subject[]): void | Promise<void>;
  succeeded(subject: Subject): void | Promise<void>;
}

interface Window {
  failures: number;
  resetAt: number;
}

/** Windows remembered (the least recently failed forgotten first): bounds memory under a spray of names. */
export const TRACKED_KEYS = 50_000;

const maxima = (options: LoginAttemptsOptions): Record<Subject['budget'], number> => {
  const perLogin = options.perLogin ?? 10;
  return { account: perLogin, name: perLogin, address: options.perAddress ?? 100 };
};

export class LoginAttempts implements FailureBudget {
  private readonly windowMs: number;
  private readonly max: Record<Subject['budget'], number>;
  private readonly windows = new Map<string, Window>();

  constructor(options: LoginAttemptsOptions = {}) {
    this.windowMs = options.windowMs ?? 15 * 60_000;
    this.max = maxima(options);
  }

  /** Windows held now (at most TRACKED_KEYS). */
  get size(): number {
    return this.windows.size;
  }

  retryAfter(subjects: readonly Subject[], now = Date.now()): number {
    let seconds = 0;
    for (const { budget, key } of subjects) {
      const window = this.current(key, now);
      if (window && window.failures >= this.max[budget]) seconds = Math.max(seconds, Math.ceil((window.resetAt - now) / 1000), 1);
    }
    return seconds;
  }

  failed(subjects: readonly Subject[], now = Date.now()): void {
    for (const { key } of subjects) {
      const window = this.current(key, now) ?? { failures: 0, resetAt: now + this.windowMs };
      window.failures++;
      this.windows.delete(key);
      this.windows.set(key, window);
      if (this.windows.size > TRACKED_KEYS) this.windows.delete(this.windows.keys().next().value as string);
    }
  }

  succeeded(subject: Subject): void {
    this.windows.delete(subject.key);
  }

  private current(key: string, now: number): Window | undefined {
    const window = this.windows.get(key);
    if (window && window.resetAt <= now) {
      this.windows.delete(key);
      return undefined;
    }
    return window;
  }
}

/** The same budgets, counted in Redis (fixed windows: a key per subject, expiring with its window). */
export class SharedLoginAttempts implements FailureBudget {
  private readonly windowMs: number;
  private readonly max: Record<Subject['budget'], number>;
  private readonly local: LoginAttempts;
  /** Checks Redis failed and the in-memory budget answered (a metric would read it). */
  storeErrors = 0;

  constructor(
    private readonly redis: SharedRedis,
    options: LoginAttemptsOptions = {},
  ) {
    this.windowMs = options.windowMs ?? 15 * 60_000;
    this.max = maxima(options);
    this.local = new LoginAttempts(options);
  }

  private redisKey(subject: Subject): string {
    return `${this.redis.prefix}login-failures:${subject.key}`;
  }

  async retryAfter(subjects: readonly Subject[]): Promise<number> {
    try {
      const pipeline = this.redis.client.pipeline();
      for (const subject of subjects) pipeline.get(this.redisKey(subject)).pttl(this.redisKey(subject));
      const results = (await pipeline.exec()) ?? [];
      let seconds = 0;
      subjects.forEach(({ budget }, i) => {
        const [countError, count] = results[2 * i]!;
        const [ttlError, ttl] = results[2 * i + 1]!;
        if (countError || ttlError) throw countError ?? ttlError;
        if (Number(count ?? 0) >= this.max[budget]) seconds = Math.max(seconds, Math.ceil(Math.max(Number(ttl), 0) / 1000), 1);
      });
      return seconds;
    } catch {
      this.storeErrors++;
      return this.local.retryAfter(subjects);
    }
  }

  async failed(subjects: readonly Subject[]): Promise<void> {
    // Counted here too: if Redis fails later in the window, this instance still knows.
    this.local.failed(subjects);
    try {
      const multi = this.redis.client.multi();
      // NX: the window starts with its first failure and is not moved by later ones.
      for (const subject of subjects) multi.set(this.redisKey(subject), 0, 'PX', this.windowMs, 'NX').incr(this.redisKey(subject));
      await multi.exec();
    } catch {
      this.storeErrors++;
    }
  }

  async succeeded(subject: Subject): Promise<void> {
    this.local.succeeded(subject);
    try {
      await this.redis.client.del(this.redisKey(subject));
    } catch {
      this.storeErrors++;
    }
  }
}
