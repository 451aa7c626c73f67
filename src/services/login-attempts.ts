// Failed password attempts, counted per login and per client address in fixed
// windows. Past either budget, further attempts are refused (429) before the
// password is even checked, so guessing costs the guesser time, not the
// service scrypt work; a success clears its login's count.
//
// Counted in this process's memory (LoginAttempts) or, with REDIS_URL, in
// Redis (SharedLoginAttempts), so that a guesser spreading over N instances
// gets the budget once, not N times. When Redis fails, the in-memory count
// takes over: the budget is then per instance again, never gone.
import type { SharedRedis } from '../scale/redis';

export interface LoginAttemptsOptions {
  windowMs?: number;
  /** Failures allowed per (application, login or email) in a window. */
  perLogin?: number;
  /** Failures allowed per client address in a window, whatever the login. */
  perAddress?: number;
}

/** What the sessions service asks of a failure budget (in memory or in Redis). */
export interface FailureBudget {
  /** Seconds until the caller may try again; 0 when it may try now. */
  retryAfter(login: string, address: string): number | Promise<number>;
  failed(login: string, address: string): void | Promise<void>;
  succeeded(login: string): void | Promise<void>;
}

interface Window {
  failures: number;
  resetAt: number;
}

/** Distinct keys remembered (oldest forgotten first): bounds memory under a spray of logins. */
const TRACKED_KEYS = 50_000;

export class LoginAttempts implements FailureBudget {
  private readonly windowMs: number;
  private readonly perLogin: number;
  private readonly perAddress: number;
  private readonly windows = new Map<string, Window>();

  constructor(options: LoginAttemptsOptions = {}) {
    this.windowMs = options.windowMs ?? 15 * 60_000;
    this.perLogin = options.perLogin ?? 10;
    this.perAddress = options.perAddress ?? 100;
  }

  /** Seconds until the caller may try again; 0 when it may try now. */
  retryAfter(login: string, address: string, now = Date.now()): number {
    let seconds = 0;
    for (const [key, max] of this.keys(login, address)) {
      const window = this.current(key, now);
      if (window && window.failures >= max) seconds = Math.max(seconds, Math.ceil((window.resetAt - now) / 1000), 1);
    }
    return seconds;
  }

  failed(login: string, address: string, now = Date.now()): void {
    for (const [key] of this.keys(login, address)) {
      const window = this.current(key, now) ?? { failures: 0, resetAt: now + this.windowMs };
      window.failures++;
      this.windows.delete(key);
      this.windows.set(key, window);
      if (this.windows.size > TRACKED_KEYS) this.windows.delete(this.windows.keys().next().value as string);
    }
  }

  succeeded(login: string): void {
    this.windows.delete(`login:${login}`);
  }

  private keys(login: string, address: string): [string, number][] {
    return [
      [`login:${login}`, this.perLogin],
      [`address:${address}`, this.perAddress],
    ];
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

/** The same budgets, counted in Redis (fixed windows: a key per login and per address, expiring with its window). */
export class SharedLoginAttempts implements FailureBudget {
  private readonly windowMs: number;
  private readonly perLogin: number;
  private readonly perAddress: number;
  private readonly local: LoginAttempts;
  /** Checks Redis failed and the in-memory budget answered (a metric would read it). */
  storeErrors = 0;

  constructor(
    private readonly redis: SharedRedis,
    options: LoginAttemptsOptions = {},
  ) {
    this.windowMs = options.windowMs ?? 15 * 60_000;
    this.perLogin = options.perLogin ?? 10;
    this.perAddress = options.perAddress ?? 100;
    this.local = new LoginAttempts(options);
  }

  private keys(login: string, address: string): [string, number][] {
    const prefix = `${this.redis.prefix}login-failures:`;
    return [
      [`${prefix}login:${login}`, this.perLogin],
      [`${prefix}address:${address}`, this.perAddress],
    ];
  }

  async retryAfter(login: string, address: string): Promise<number> {
    try {
      const keys = this.keys(login, address);
      const pipeline = this.redis.client.pipeline();
      for (const [key] of keys) pipeline.get(key).pttl(key);
      const results = (await pipeline.exec()) ?? [];
      let seconds = 0;
      keys.forEach(([, max], i) => {
        const [countError, count] = results[2 * i]!;
        const [ttlError, ttl] = results[2 * i + 1]!;
        if (countError || ttlError) throw countError ?? ttlError;
        if (Number(count ?? 0) >= max) seconds = Math.max(seconds, Math.ceil(Math.max(Number(ttl), 0) / 1000), 1);
      });
      return seconds;
    } catch {
      this.storeErrors++;
      return this.local.retryAfter(login, address);
    }
  }

  async failed(login: string, address: string): Promise<void> {
    // Counted here too: if Redis fails later in the window, this instance still knows.
    this.local.failed(login, address);
    try {
      const multi = this.redis.client.multi();
      // NX: the window starts with its first failure and is not moved by later ones.
      for (const [key] of this.keys(login, address)) multi.set(key, 0, 'PX', this.windowMs, 'NX').incr(key);
      await multi.exec();
    } catch {
      this.storeErrors++;
    }
  }

  async succeeded(login: string): Promise<void> {
    this.local.succeeded(login);
    try {
      await this.redis.client.del(this.keys(login, '')[0]![0]);
    } catch {
      this.storeErrors++;
    }
  }
}
