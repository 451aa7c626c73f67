// Sessions as QuickBlox SDK apps create them: a request signed with the
// application's auth secret (HMAC over the sorted parameters), optionally with
// a user's login and password; login and logout within a session; showing and
// ending the current one.
//
// A refused request stores nothing. Replays are refused by remembering each
// (application, timestamp, nonce) for as long as its timestamp would pass the
// window check, in the same statement that creates the session, so two copies
// of one request racing each other create one session at most.
import type { Pool } from 'pg';
import { query } from '../db/sql';
import { APPLICATION_CREDENTIALS, CREATE, CURRENT, END, PASSWORD_BY_EMAIL, PASSWORD_BY_LOGIN, SET_USER } from '../db/statements/sessions';
import { AppError, MESSAGES, RateLimitedError, badInput } from '../errors';
import { type AuthService, SESSION_TTL_SECONDS, requireSession } from './auth';
import type { Caller } from './caller';
import type { SharedRedis } from '../scale/redis';
import { type FailureBudget, LoginAttempts, type LoginAttemptsOptions, SharedLoginAttempts } from './login-attempts';
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
}

const APPLICATION_ID = /^[1-9][0-9]{0,9}$/;
const TIMESTAMP = /^[0-9]{1,12}$/;
const NONCE = /^[\x21-\x7e]{1,64}$/;

export class SessionsService {
  private readonly windowSeconds: number;
  private readonly attempts: FailureBudget;
  private readonly now: () => number;

  constructor(
    private readonly pool: Pool,
    private readonly auth: AuthService,
    private readonly secretsKey: Buffer,
    options: SessionsOptions = {},
  ) {
    this.windowSeconds = options.timestampWindowSeconds ?? 3600;
    this.attempts = options.redis
      ? new SharedLoginAttempts(options.redis, options.loginAttempts)
      : new LoginAttempts(options.loginAttempts);
    this.now = options.now ?? Date.now;
  }

  /**
   * Checks, in this order: the parameters' form; the application and its auth
   * key; the signature; the timestamp's window; the user's password (when a
   * user is named); the nonce. The first that fails refuses the request.
   */
  async create(request: SessionRequest, address: string): Promise<SessionView> {
    const now = this.now();
    const applicationId = parseApplicationId(request.applicationId);
    validate.text(request.authKey, 'authKey');
    if (!TIMESTAMP.test(request.timestamp)) throw badInput('timestamp', 'timestamp must be a Unix time in seconds');
    if (!NONCE.test(request.nonce)) throw badInput('nonce', 'nonce must be 1 to 64 printable characters');
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
    const signedAt = Number(request.timestamp);
    if (Math.abs(signedAt - now / 1000) > this.windowSeconds) {
      throw new AppError(
        'TIMESTAMP_OUT_OF_WINDOW',
        `Unexpected timestamp: more than ${this.windowSeconds} s away from the server's clock (${Math.floor(now / 1000)})`,
      );
    }
    const userId = user ? await this.checkPassword(applicationId, user, address) : null;

    const token = newSecret();
    const forgetBefore = new Date((Math.floor(now / 1000) - this.windowSeconds) * 1000);
    const [session] = await query(this.pool, CREATE, [
      applicationId,
      new Date(signedAt * 1000),
      request.nonce,
      hashSecret(token),
      userId,
      forgetBefore,
      SESSION_TTL_SECONDS,
    ]);
    if (!session) throw new AppError('NONCE_REUSED', MESSAGES.nonceReused);
    return { ...session, token };
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
    const [user] = await query(this.pool, SET_USER, [sessionId, userId]);
    await this.auth.forget(tokenHash);
    if (userId !== null && !user) throw new AppError('UNAUTHENTICATED', MESSAGES.sessionMissing);
    return user!;
  }

  /**
   * The user named by login or email, if the password is theirs. Unknown
   * logins and wrong passwords get the same answer after the same work; past
   * the failure budgets, 429 before any check.
   */
  private async checkPassword(applicationId: number, credentials: UserCredentials, address: string): Promise<number> {
    const { field, value } = userIdentifier(credentials);
    const password = credentials.password!;
    const key = `${applicationId}:${field}:${value}`;
    const wait = await this.attempts.retryAfter(key, address);
    if (wait > 0) throw new RateLimitedError(wait);
    const [user] = await query(this.pool, field === 'login' ? PASSWORD_BY_LOGIN : PASSWORD_BY_EMAIL, [applicationId, value]);
    if (!(await verifyPassword(password, user?.passwordHash))) {
      await this.attempts.failed(key, address);
      throw new AppError('UNAUTHENTICATED', MESSAGES.badLogin);
    }
    await this.attempts.succeeded(key);
    return user!.id;
  }
}

function parseApplicationId(value: string): number {
  if (!APPLICATION_ID.test(value) || Number(value) > validate.INT32_MAX) {
    throw badInput('applicationId', 'application_id must be a positive integer');
  }
  return Number(value);
}

/** Login or email (exactly one) and a password. */
function userIdentifier(credentials: UserCredentials): { field: 'login' | 'email'; value: string } {
  const { login, email, password } = credentials;
  if ((login ?? null) !== null && (email ?? null) !== null) throw badInput('login', 'send login or email, not both');
  const field = (login ?? null) !== null ? 'login' : 'email';
  const value = credentials[field];
  if (value === null || value === undefined || value === '') throw badInput('login', 'login or email is required');
  if (password === null || password === undefined || password === '') throw badInput('password', 'password is required');
  validate.text(value, field);
  validate.text(password, 'password');
  return { field, value };
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
