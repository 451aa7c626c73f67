// Failed password attempts, counted in fixed windows under three budgets:
//
// - per name: each login or email tried, whether it names a user or not (the
//   same size for both, so that a budget never tells a name that exists from
//   one that does not);
// - per account: every name of a user (its login and its email) spends one
//   budget, so a guesser gets it once, not once per name. This one answers no
//   429 (SessionsService.checkPassword): past it, every try of the account is
//   a wrong credential, so that a 429 by one name never tells which other
//   names share its account (issue 31);
// - per client address, whatever the names.
//
// Every password check, right or wrong, is counted too, under two more
// budgets that a success does not give back (issue 31): per name and per
// address. A right password is ~40 ms of scrypt like a
// wrong one, and the failure budgets alone let one account's owner (or
// whoever has an app's embedded credentials and one account) spend them
// without end.
//
// Each attempt is counted before its password is checked, and given back
// when the password is right: concurrent guesses cannot all pass a budget's
// check before any of them fails. Past a budget, attempts are refused (429)
// without a check, so guessing costs the guesser time, not the service
// scrypt work; a success clears its account's count.
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
// SharedLoginAttempts does (SET NX PX and INCR in one script).
import type { SharedRedis } from '../scale/redis';
import { addressKey, digestKey } from './keys';

export interface LoginAttemptsOptions {
  windowMs?: number;
  /** Failures allowed per account (login and email together), and per unknown login or email, in a window. */
  perLogin?: number;
  /** Failures allowed per client address in a window, whatever the names. */
  perAddress?: number;
  /** Password checks, right or wrong, allowed per account (or unknown name) in a window. */
  checksPerAccount?: number;
  /** Password checks, right or wrong, allowed per client address in a window. */
  checksPerAddress?: number;
  /** Application sessions opened per application in a window (the sessions' budget, SessionsService). */
  sessionsPerApplication?: number;
  /** Application sessions opened per client address in a window. */
  sessionsPerAddress?: number;
}

/** What a failure is counted against. */
export interface Subject {
  budget: 'account' | 'name' | 'address' | 'accountChecks' | 'addressChecks' | 'applicationSessions' | 'addressSessions';
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
  /** Every password check of an account, name or address (`of`), right or wrong. */
  checks: (of: Subject): Subject => ({ budget: of.budget === 'address' ? 'addressChecks' : 'accountChecks', key: `checks:${of.key}` }),
  /** Application sessions opened for an application, and from an address. */
  applicationSessions: (applicationId: number): Subject => ({ budget: 'applicationSessions', key: `sessions:application:${applicationId}` }),
  addressSessions: (address: string): Subject => ({ budget: 'addressSessions', key: `sessions:address:${addressKey(address)}` }),
};

/** What the sessions service asks of a failure budget (in memory or in Redis). */
export interface FailureBudget {
  /** Seconds until none of these subjects' budgets is spent (0: now); counts nothing. */
  retryAfter(subjects: readonly Subject[]): number | Promise<number>;
  /**
   * Counts an attempt against each subject, unless one of their budgets is
   * spent: then counts nothing and answers the seconds until it may try
   * again (0: counted, go ahead).
   */
  attempt(subjects: readonly Subject[]): number | Promise<number>;
  /** The attempt's password was right: clears the account's failures and gives the address its attempt back. */
  succeeded(subject: Subject, from: Subject): void | Promise<void>;
}

interface Window {
  failures: number;
  resetAt: number;
}

/** Windows remembered (the least recently counted forgotten first): bounds memory under a spray of names. */
export const TRACKED_KEYS = 50_000;

/** LOGIN_FAILURES_PER_LOGIN's, LOGIN_FAILURES_PER_ADDRESS's and LOGIN_FAILURE_WINDOW_MS's defaults. */
/** And PASSWORD_CHECKS_PER_ACCOUNT's and PASSWORD_CHECKS_PER_ADDRESS's. */
export const LOGIN_ATTEMPT_DEFAULTS = { perLogin: 10, perAddress: 100, windowMs: 15 * 60_000, checksPerAccount: 30, checksPerAddress: 1_000 } as const;

/** APPLICATION_SESSIONS_PER_APPLICATION's and APPLICATION_SESSIONS_PER_ADDRESS's defaults, per hour. */
export const APPLICATION_SESSION_DEFAULTS = { perApplication: 100_000, perAddress: 1_000, windowMs: 60 * 60_000 } as const;

const maxima = (options: LoginAttemptsOptions): Record<Subject['budget'], number> => {
  const perLogin = options.perLogin ?? LOGIN_ATTEMPT_DEFAULTS.perLogin;
  return {
    account: perLogin,
    name: perLogin,
    address: options.perAddress ?? LOGIN_ATTEMPT_DEFAULTS.perAddress,
    accountChecks: options.checksPerAccount ?? LOGIN_ATTEMPT_DEFAULTS.checksPerAccount,
    addressChecks: options.checksPerAddress ?? LOGIN_ATTEMPT_DEFAULTS.checksPerAddress,
    applicationSessions: options.sessionsPerApplication ?? APPLICATION_SESSION_DEFAULTS.perApplication,
    addressSessions: options.sessionsPerAddress ?? APPLICATION_SESSION_DEFAULTS.perAddress,
  };
};

export class LoginAttempts implements FailureBudget {
  private readonly windowMs: number;
  private readonly max: Record<Subject['budget'], number>;
  private readonly windows = new Map<string, Window>();

  constructor(options: LoginAttemptsOptions = {}) {
    this.windowMs = options.windowMs ?? LOGIN_ATTEMPT_DEFAULTS.windowMs;
    this.max = maxima(options);
  }

  /** Windows held now (at most TRACKED_KEYS). */
  get size(): number {
    return this.windows.size;
  }

  attempt(subjects: readonly Subject[], now = Date.now()): number {
    const seconds = this.wait(subjects, now);
    if (seconds === 0) this.count(subjects, now);
    return seconds;
  }

  succeeded(subject: Subject, from: Subject, now = Date.now()): void {
    this.windows.delete(subject.key);
    const window = this.current(from.key, now);
    if (window && window.failures > 0) window.failures--;
  }

  retryAfter(subjects: readonly Subject[], now = Date.now()): number {
    return this.wait(subjects, now);
  }

  /** Seconds until none of the subjects' budgets is spent. */
  private wait(subjects: readonly Subject[], now: number): number {
    let seconds = 0;
    for (const { budget, key } of subjects) {
      const window = this.current(key, now);
      if (window && window.failures >= this.max[budget]) seconds = Math.max(seconds, Math.ceil((window.resetAt - now) / 1000), 1);
    }
    return seconds;
  }

  /** Counts an attempt against each subject, whatever their budgets. */
  count(subjects: readonly Subject[], now = Date.now()): void {
    for (const { key } of subjects) {
      const window = this.current(key, now) ?? { failures: 0, resetAt: now + this.windowMs };
      window.failures++;
      this.windows.delete(key);
      this.windows.set(key, window);
      if (this.windows.size > TRACKED_KEYS) this.windows.delete(this.windows.keys().next().value as string);
    }
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

/**
 * Checks every budget, then counts the attempt against each, in one atomic
 * step: two instances cannot both pass a budget's last attempt. Answers the
 * milliseconds to wait (0: counted). KEYS: the subjects'; ARGV: the window,
 * then each subject's maximum.
 */
const ATTEMPT = `
local wait = 0
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') >= tonumber(ARGV[i + 1]) then
    wait = math.max(wait, redis.call('PTTL', key), 1)
  end
end
if wait > 0 then return wait end
for _, key in ipairs(KEYS) do
  redis.call('SET', key, 0, 'PX', ARGV[1], 'NX')
  redis.call('INCR', key)
end
return 0`;

/** A success: the account's failures cleared, the address's attempt given back (if its window still runs). */
const SUCCEEDED = `
redis.call('DEL', KEYS[1])
if tonumber(redis.call('GET', KEYS[2]) or '0') > 0 then redis.call('DECR', KEYS[2]) end
return 0`;

/** The same budgets, counted in Redis (fixed windows: a key per subject, expiring with its window). */
export class SharedLoginAttempts implements FailureBudget {
  private readonly windowMs: number;
  private readonly max: Record<Subject['budget'], number>;
  private readonly local: LoginAttempts;
  constructor(
    private readonly redis: SharedRedis,
    options: LoginAttemptsOptions = {},
  ) {
    this.windowMs = options.windowMs ?? LOGIN_ATTEMPT_DEFAULTS.windowMs;
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
        if (countError || ttlError) throw (countError ?? ttlError)!;
        if (Number(count ?? 0) >= this.max[budget]) seconds = Math.max(seconds, Math.ceil(Math.max(Number(ttl), 0) / 1000), 1);
      });
      return seconds;
    } catch {
      // Redis unreachable: this instance's own count answers (docs/operation.md, "Failed-password budgets").
      return this.local.retryAfter(subjects);
    }
  }

  async attempt(subjects: readonly Subject[]): Promise<number> {
    let waitMs: number;
    try {
      const keys = subjects.map((subject) => this.redisKey(subject));
      const maxima = subjects.map(({ budget }) => this.max[budget]);
      waitMs = Number(await this.redis.client.eval(ATTEMPT, keys.length, ...keys, this.windowMs, ...maxima));
    } catch {
      return this.local.attempt(subjects);
    }
    // Counted here too: if Redis fails later in the window, this instance still knows.
    if (waitMs === 0) this.local.count(subjects);
    return Math.ceil(waitMs / 1000);
  }

  async succeeded(subject: Subject, from: Subject): Promise<void> {
    this.local.succeeded(subject, from);
    try {
      await this.redis.client.eval(SUCCEEDED, 2, this.redisKey(subject), this.redisKey(from));
    } catch {
      // The failures expire with their window.
    }
  }
}
