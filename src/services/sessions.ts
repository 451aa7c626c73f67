// Sessions as QuickBlox SDK apps create them: a request signed with the
// application's auth secret (HMAC over the sorted parameters), optionally with
// a user's login and password; login and logout within a session; showing and
// ending the current one.
//
// A refused request stores nothing. Replays are refused by remembering each
// (application, timestamp, nonce) for as long as its timestamp would pass the
// window check, in the same statement that creates the session, so two copies
// of one request racing each other create one session at most.
//
// A user holds at most `sessionsPerUser` sessions (SDK apps open one on every
// start): opening or logging into one more ends the user's least recently
// used, in the statement that opens it, after a lock on the user's sessions
// taken in the same transaction, so that racing openings cannot both count
// the same sessions. Ended sessions are dropped from every instance's
// credential cache, as a logout's are.
import type { Pool } from 'pg';
import { query, run, transaction, type Statement } from '../db/sql';
import { APPLICATION_CREDENTIALS, CREATE, CURRENT, END, LOCK_USER_SESSIONS, PASSWORD_BY_EMAIL, PASSWORD_BY_LOGIN, SET_USER } from '../db/statements/sessions';
import { AppError, MESSAGES, RateLimitedError, badInput } from '../errors';
import { type AuthService, SESSION_TTL_SECONDS, requireSession } from './auth';
import type { Caller } from './caller';
import type { SharedRedis } from '../scale/redis';
import { APPLICATION_SESSION_DEFAULTS, type FailureBudget, LoginAttempts, type LoginAttemptsOptions, SharedLoginAttempts, subjects } from './login-attempts';
import { hashSecret, newSecret, openSecret, signatureBase, verifyPassword, verifySignature } from './secrets';
import * as validate from './validate';
import type { UserRecord } from '../db/statements/users';

/** The parameters of a session request, as sent: the signature covers their exact text. */
export interface SessionRequest {
  applicationId: string;
  authKey: string;
  timestamp: string;
  nonce: string;
  signature: string;
  user?: UserCredentials | null;
}

export interface UserCredentials {
  login?: string | null;
  email?: string | null;
  password?: string | null;
}

export interface SessionView {
  id: number;
  applicationId: number;
  userId: number | null;
  /** Only when the session was just created: afterwards the service knows its hash only. */
  token?: string;
  nonce: string | null;
  signedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
}

export interface SessionsOptions {
  /** How far (seconds) a signed timestamp may be from the server's clock, either way. */
  timestampWindowSeconds?: number;
  loginAttempts?: LoginAttemptsOptions;
  /** Count failed logins in Redis, shared by every instance (REDIS_URL). */
  redis?: SharedRedis | undefined;
  /** The server's clock that signed timestamps are checked against (tests set one that is off). */
  now?: () => number;
  /** Live sessions one user may hold (SESSIONS_PER_USER_MAX, default 100). */
  sessionsPerUser?: number;
  /** Application sessions opened per application and per address in an hour (APPLICATION_SESSIONS_PER_*). */
  applicationSessions?: { perApplication?: number; perAddress?: number; windowMs?: number };
}

/** SESSIONS_PER_USER_MAX's default. */
export const SESSIONS_PER_USER_DEFAULT = 100;
/** SESSION_TIMESTAMP_WINDOW_S's default: how far a signed timestamp may be from the server's clock. */
export const TIMESTAMP_WINDOW_DEFAULT_S = 3_600;

/** A session request's timestamp and nonce (the REST schema of POST /session.json states them from here). */
export const TIMESTAMP_PATTERN = /^[0-9]{1,12}$/;
export const NONCE_PATTERN = new RegExp(`^[\\x21-\\x7e]{1,${validate.LIMITS.nonceLength}}$`);

export class SessionsService {
  private readonly windowSeconds: number;
  private readonly attempts: FailureBudget;
  private readonly openings: FailureBudget;
  private readonly now: () => number;
  private readonly sessionsPerUser: number;

  constructor(
    private readonly pool: Pool,
    private readonly auth: AuthService,
    private readonly secretsKey: Buffer,
    options: SessionsOptions = {},
  ) {
    this.windowSeconds = options.timestampWindowSeconds ?? TIMESTAMP_WINDOW_DEFAULT_S;
    this.attempts = options.redis ? new SharedLoginAttempts(options.redis, options.loginAttempts) : new LoginAttempts(options.loginAttempts);
    const openings = {
      windowMs: options.applicationSessions?.windowMs ?? APPLICATION_SESSION_DEFAULTS.windowMs,
      sessionsPerApplication: options.applicationSessions?.perApplication,
      sessionsPerAddress: options.applicationSessions?.perAddress,
    };
    this.openings = options.redis ? new SharedLoginAttempts(options.redis, openings) : new LoginAttempts(openings);
    this.now = options.now ?? Date.now;
    this.sessionsPerUser = options.sessionsPerUser ?? SESSIONS_PER_USER_DEFAULT;
  }

  /**
   * Checks, in this order: the parameters' form; the application and its auth
   * key; the signature; that the application is enabled; the timestamp's window; the user's password (when a
   * user is named); the nonce. The first that fails refuses the request.
   */
  async create(request: SessionRequest, address: string): Promise<SessionView> {
    const now = this.now();
    const applicationId = parseApplicationId(request.applicationId);
    validate.boundedText(request.authKey, 'authKey', validate.LIMITS.authKeyLength, 'auth_key');
    if (!TIMESTAMP_PATTERN.test(request.timestamp)) throw badInput('timestamp', 'timestamp must be a Unix time in seconds');
    if (!NONCE_PATTERN.test(request.nonce)) throw badInput('nonce', `nonce must be 1 to ${validate.LIMITS.nonceLength} printable characters`);
    // Longer than any HMAC's hex; a shorter wrong one is an unexpected signature (QuickBlox's answer).
    if (!validate.atMostCharacters(request.signature, validate.LIMITS.signatureLength)) {
      throw badInput('signature', `signature must be at most ${validate.LIMITS.signatureLength} characters`);
    }
    const user = request.user ?? undefined;
    if (user) userIdentifier(user);

    const [app] = await query(this.pool, APPLICATION_CREDENTIALS, [applicationId]);
    if (!app?.authKey || !app.authSecretSealed || !equalText(app.authKey, request.authKey)) {
      throw new AppError('UNKNOWN_APPLICATION', MESSAGES.unknownApplication);
    }
    const secret = openSecret(app.authSecretSealed, this.secretsKey);
    if (!verifySignature(signatureBase(signedParameters(request)), request.signature, secret)) {
      throw new AppError('INVALID_SIGNATURE', MESSAGES.invalidSignature);
    }
    // After the signature: only the application's own signer learns that it is disabled.
    if (app.disabledAt !== null) throw new AppError('APPLICATION_DISABLED', MESSAGES.applicationDisabled);
    const signedAt = Number(request.timestamp);
    if (Math.abs(signedAt - now / 1000) > this.windowSeconds) {
      throw new AppError(
        'TIMESTAMP_OUT_OF_WINDOW',
        `Unexpected timestamp: more than ${this.windowSeconds} s away from the server's clock (${Math.floor(now / 1000)})`,
      );
    }
    const userId = user ? await this.checkPassword(applicationId, user, address) : null;
    // Application sessions have no user to cap them (a user's are capped by
    // SESSIONS_PER_USER_MAX): each is a row kept two hours and a request
    // budget of its own, so their openings are budgeted per application and
    // per address (issue 31). Counted after the signature: only the
    // application's signers spend its budget.
    if (userId === null) {
      const wait = await this.openings.attempt([subjects.applicationSessions(applicationId), subjects.addressSessions(address)]);
      if (wait > 0) throw new RateLimitedError(wait);
    }

    const token = newSecret();
    const forgetBefore = new Date((Math.floor(now / 1000) - this.windowSeconds) * 1000);
    const opened = await this.open(applicationId, userId, token, { signedAt: new Date(signedAt * 1000), nonce: request.nonce, forgetBefore });
    if (!opened) throw new AppError('NONCE_REUSED', MESSAGES.nonceReused);
    const { ended: _ended, ...session } = opened;
    return session;
  }

  /**
   * A session opened without a signed request (the admin CLI's, the demo's):
   * the same cap applies. `userId` must be a user of the application (the
   * caller checks). `ended`: the token hashes of the sessions the cap ended
   * (a process with no revocation bus of its own tells the instances).
   */
  async openUnsigned(applicationId: number, userId: number | null): Promise<SessionView & { token: string; ended: string[] }> {
    return (await this.open(applicationId, userId, newSecret(), null))!;
  }

  /** Creates the session (undefined: the nonce was used already) and ends what it pushed over the user's cap. */
  private async open(
    applicationId: number,
    userId: number | null,
    token: string,
    signed: { signedAt: Date; nonce: string; forgetBefore: Date } | null,
  ): Promise<(SessionView & { token: string; ended: string[] }) | undefined> {
    const [row] = await this.underUserLock(userId, CREATE, [
      applicationId,
      signed?.signedAt ?? null,
      signed?.nonce ?? null,
      hashSecret(token),
      userId,
      signed?.forgetBefore ?? null,
      SESSION_TTL_SECONDS,
      this.sessionsPerUser,
    ]);
    if (!row) return undefined;
    await this.forgetEnded(row.ended);
    return { ...row, token };
  }

  /**
   * `sql` after LOCK_USER_SESSIONS on `userId`, in one transaction (the cap's
   * count must see every racing opening's committed session); alone when
   * there is no user (application sessions, logouts: no cap to keep).
   */
  private async underUserLock<P extends readonly unknown[], R>(userId: number | null, sql: Statement<P, R>, values: P): Promise<R[]> {
    if (userId === null) return query(this.pool, sql, values);
    return transaction(this.pool, sql.name, async (client) => {
      await run(client, LOCK_USER_SESSIONS, [userId]);
      return run(client, sql, values);
    });
  }

  /** Sessions a cap ended: refused from now on, here and (through the revocation bus) on every instance. */
  private async forgetEnded(tokenHashes: readonly string[]): Promise<void> {
    await Promise.all(tokenHashes.map((hash) => this.auth.forget(hash)));
  }

  /** The session the caller's token names. */
  async current(caller: Caller): Promise<SessionView> {
    const [session] = await query(this.pool, CURRENT, [requireSession(caller).id]);
    // Ended by a concurrent request since its credentials were checked.
    if (!session) throw new AppError('UNAUTHENTICATED', MESSAGES.sessionMissing);
    return session;
  }

  /** Ends the caller's session: its token is refused from now on (by other instances once the revocation reaches them, else within the credential cache's life). */
  async end(caller: Caller): Promise<void> {
    const session = requireSession(caller);
    await query(this.pool, END, [session.id]);
    await this.auth.forget(session.tokenHash);
  }

  /** Makes the caller's session the session of the user these credentials name. */
  async login(caller: Caller, credentials: UserCredentials, address: string): Promise<UserRecord> {
    const session = requireSession(caller);
    const userId = await this.checkPassword(caller.applicationId, credentials, address);
    return this.setUser(session.id, session.tokenHash, userId);
  }

  /** Makes the caller's session an application session again (a no-op for one already). */
  async logout(caller: Caller): Promise<void> {
    const session = requireSession(caller);
    await this.setUser(session.id, session.tokenHash, null);
  }

  private async setUser(sessionId: number, tokenHash: string, userId: number | null): Promise<UserRecord> {
    const [row] = await this.underUserLock(userId, SET_USER, [sessionId, userId, this.sessionsPerUser]);
    await this.auth.forget(tokenHash);
    if (!row) {
      if (userId !== null) throw new AppError('UNAUTHENTICATED', MESSAGES.sessionMissing);
      // A logout answers no user.
      return row!;
    }
    const { ended, ...user } = row;
    await this.forgetEnded(ended);
    return user;
  }

  /**
   * The user named by login or email, if the password is theirs. Unknown
   * names and wrong passwords get the same answer after the same work.
   *
   * Budgets (src/services/login-attempts.ts): a 429 comes only from what the
   * client sent and where from: the name it typed (login or email, whether
   * it names a user or not) and its address, for failures and for checks. The
   * account's own budget, over all its names, answers no 429: past it, a try
   * by any of its names gets a wrong credential's 401, after the same work,
   * even with the right password. A 429 by one name then never tells which
   * other names belong to the same account (issue 31: after ten failures by
   * `carol`, a try by carol@a.com answered 429 and one by another email 401),
   * and the account still gets no more guesses than its budget.
   */
  private async checkPassword(applicationId: number, credentials: UserCredentials, address: string): Promise<number> {
    const { field, value, email } = userIdentifier(credentials);
    const password = credentials.password!;
    const from = subjects.address(address);
    const name = subjects.name(applicationId, field, value);
    // Counted now, before the lookup: a name or address past its budget costs
    // not even that. The failures are given back if the password is right, the checks never.
    const wait = await this.attempts.attempt([name, from, subjects.checks(name), subjects.checks(from)]);
    if (wait > 0) throw new RateLimitedError(wait);
    const [user] = await query(this.pool, field === 'login' ? PASSWORD_BY_LOGIN : PASSWORD_BY_EMAIL, [applicationId, value]);
    const account = user ? subjects.account(applicationId, user.id) : undefined;
    const locked = account !== undefined && (await this.attempts.attempt([account])) > 0;
    const passwordRight = await verifyPassword(password, user?.passwordHash);
    // An email naming someone else (or no one) beside the login is a wrong
    // credential like a wrong password, checked after the same work.
    const emailRight = email === undefined || (user !== undefined && 'email' in user && user.email === email);
    if (!passwordRight || !emailRight || locked) throw new AppError('UNAUTHENTICATED', MESSAGES.badLogin);
    await this.attempts.succeeded(name, from);
    // The account's failures cleared too (`name`'s, given back again, are gone already).
    await this.attempts.succeeded(account!, name);
    return user!.id;
  }
}

function parseApplicationId(value: string): number {
  const id = validate.positiveInt32(value);
  if (id === undefined) throw badInput('applicationId', 'application_id must be a positive integer');
  return id;
}

/**
 * Login or email, and a password. Both login and email (QuickBlox's Android
 * SDK sends both, and QuickBlox took them): the user is found by login, and
 * `email` must be that user's (checked as a password is).
 */
function userIdentifier(credentials: UserCredentials): { field: 'login' | 'email'; value: string; email?: string } {
  const { email, password } = credentials;
  // An empty login beside an email is no login (issue 31: an SDK sends the
  // empty field); logins are stored in NFC, and looked up so.
  const login = credentials.login === '' ? null : (credentials.login?.normalize('NFC') ?? null);
  const both = login !== null && (email ?? '') !== '';
  const field = login !== null ? 'login' : 'email';
  const value = field === 'login' ? login : email;
  if (value === null || value === undefined || value === '') throw badInput('login', 'login or email is required');
  if (password === null || password === undefined || password === '') throw badInput('password', 'password is required');
  validate.boundedText(value, field, field === 'login' ? validate.LIMITS.loginLength : validate.LIMITS.emailLength);
  if (both) validate.boundedText(email!, 'email', validate.LIMITS.emailLength);
  validate.boundedText(password, 'password', validate.LIMITS.passwordLength);
  return both ? { field, value, email: email! } : { field, value };
}

/** The parameters the signature covers, under QuickBlox's names. */
function signedParameters(request: SessionRequest): Record<string, string> {
  const parameters: Record<string, string> = {
    application_id: request.applicationId,
    auth_key: request.authKey,
    nonce: request.nonce,
    timestamp: request.timestamp,
  };
  for (const field of ['login', 'email', 'password'] as const) {
    const value = request.user?.[field];
    if (value !== null && value !== undefined) parameters[`user[${field}]`] = value;
  }
  return parameters;
}

/** Auth keys are not secrets (apps ship them), but nothing is lost comparing them in constant time. */
function equalText(a: string, b: string): boolean {
  return a.length === b.length && hashSecret(a) === hashSecret(b);
}
