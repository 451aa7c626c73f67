// Credentials → Caller. The one place where tokens, API keys and
// On-Behalf-Of are checked, for both the GraphQL and the REST surface.
//
// Checked credentials are cached for a few seconds, and the two writes a
// session request owes (sliding expiry, the user's last_request_at) are
// batched and written within a second, so a request that hits the cache costs
// no statement for its credentials. What that changes, and only that: a
// session deleted from the database, or an API key replaced, is still honoured
// by each instance for up to `cacheMs`; last_request_at and expires_at reach
// the database up to `flushMs` after the request (with the request's own
// time). Negative answers are never cached.
import type { Pool } from 'pg';
import { statement, query } from '../db/sql';
import { AppError, MESSAGES } from '../errors';
import type { Caller } from './caller';
import { hashSecret } from './secrets';

/** The credential headers of a request, as sent (undefined when absent). */
export interface Credentials {
  token?: string | undefined;
  authorization?: string | undefined;
  onBehalfOf?: string | undefined;
}

/** Sessions expire this long after their last request. */
export const SESSION_TTL_SECONDS = 2 * 60 * 60;
const SESSION_TTL_MS = SESSION_TTL_SECONDS * 1000;

const API_KEY_PATTERN = /^ApiKey ([\x21-\x7e]{1,512})$/;
const USER_ID_PATTERN = /^[1-9][0-9]{0,9}$/;
const MAX_INT = 2_147_483_647;

export interface AuthOptions {
  /** How long a checked credential is trusted without asking the database (0: never cached). */
  cacheMs?: number;
  /** How often pending session touches are written. */
  flushMs?: number;
  /** Most credentials kept in the cache. */
  cacheSize?: number;
}

interface CachedSession {
  caller: Caller;
  checkedAt: number;
  /** When the session expires as far as this instance knows. */
  expiresAt: number;
}

/** Slides the session, stamps the user, answers who it is: one statement for a cache miss. */
const TOUCH_SESSION = statement<[string, Date], { applicationId: number; userId: number | null }>(
  'auth.touch_session',
  `WITH s AS (
     UPDATE sessions SET expires_at = GREATEST(sessions.expires_at, $2::timestamptz + make_interval(secs => ${SESSION_TTL_SECONDS}))
      WHERE token_hash = $1 AND expires_at > $2::timestamptz
     RETURNING application_id, user_id
   ), touched AS (
     UPDATE users SET last_request_at = GREATEST(users.last_request_at, $2::timestamptz) WHERE id = (SELECT user_id FROM s) RETURNING id
   )
   SELECT application_id AS "applicationId", user_id AS "userId" FROM s`,
);

/**
 * The batched touches. A touch at time t extends a session only if it was
 * still alive at t, and never moves expiry or last_request_at backwards: a
 * late flush neither resurrects an expired session nor undoes a newer touch.
 */
const FLUSH_TOUCHES = statement<[string[], Date[]], never>(
  'auth.flush_touches',
  `WITH t AS (
     SELECT * FROM unnest($1::text[], $2::timestamptz[]) AS t(token_hash, at)
   ), s AS (
     UPDATE sessions SET expires_at = GREATEST(sessions.expires_at, t.at + make_interval(secs => ${SESSION_TTL_SECONDS}))
       FROM t
      WHERE sessions.token_hash = t.token_hash AND sessions.expires_at > t.at
     RETURNING sessions.user_id, t.at
   )
   UPDATE users SET last_request_at = GREATEST(users.last_request_at, latest.at)
     FROM (SELECT user_id, max(at) AS at FROM s WHERE user_id IS NOT NULL GROUP BY user_id) latest
    WHERE users.id = latest.user_id`,
);

const API_KEY = statement<[string, number | null], { applicationId: number; userId: number | null }>(
  'auth.api_key',
  `SELECT a.id AS "applicationId",
          (SELECT u.id FROM users u WHERE u.id = $2::int AND u.application_id = a.id) AS "userId"
     FROM applications a
    WHERE a.api_key_hash = $1`,
);

export class AuthService {
  private readonly cacheMs: number;
  private readonly cacheSize: number;
  private readonly sessions = new Map<string, CachedSession>();
  private readonly apiKeys = new Map<string, { caller: Caller; checkedAt: number }>();
  /** token hash → time of its latest request not yet written. */
  private touches = new Map<string, number>();
  private readonly timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: Pool,
    options: AuthOptions = {},
  ) {
    this.cacheMs = options.cacheMs ?? 5_000;
    this.cacheSize = options.cacheSize ?? 10_000;
    if (this.cacheMs > 0) {
      this.timer = setInterval(() => void this.flush().catch(() => {}), options.flushMs ?? 1_000);
      this.timer.unref();
    }
  }

  async authenticate(credentials: Credentials): Promise<Caller> {
    const { token, authorization, onBehalfOf } = credentials;
    if (token !== undefined && authorization !== undefined) {
      throw new AppError('BAD_REQUEST', MESSAGES.bothCredentials);
    }
    if (token !== undefined) {
      if (onBehalfOf !== undefined) throw new AppError('BAD_REQUEST', MESSAGES.onBehalfOfWithoutApiKey);
      return this.bySessionToken(token);
    }
    if (authorization !== undefined) return this.byApiKey(authorization, onBehalfOf);
    throw new AppError('UNAUTHENTICATED', MESSAGES.noCredentials);
  }

  private async bySessionToken(token: string): Promise<Caller> {
    const hash = hashSecret(token);
    const now = Date.now();
    const cached = this.sessions.get(hash);
    if (cached && now - cached.checkedAt < this.cacheMs && cached.expiresAt > now) {
      cached.expiresAt = now + SESSION_TTL_MS;
      this.touches.set(hash, now);
      return cached.caller;
    }
    const [session] = await query(this.pool, TOUCH_SESSION, [hash, new Date(now)]);
    if (!session) {
      this.sessions.delete(hash);
      throw new AppError('UNAUTHENTICATED', MESSAGES.sessionMissing);
    }
    const caller: Caller =
      session.userId === null
        ? { kind: 'application', applicationId: session.applicationId, via: 'session' }
        : { kind: 'user', applicationId: session.applicationId, userId: session.userId, via: 'session' };
    if (this.cacheMs > 0) remember(this.sessions, hash, { caller, checkedAt: now, expiresAt: now + SESSION_TTL_MS }, this.cacheSize);
    return caller;
  }

  private async byApiKey(authorization: string, onBehalfOf: string | undefined): Promise<Caller> {
    const key = API_KEY_PATTERN.exec(authorization)?.[1];
    if (key === undefined) throw new AppError('UNAUTHENTICATED', MESSAGES.malformedAuthorization);
    const hash = hashSecret(key);
    const cacheKey = `${hash}:${onBehalfOf ?? ''}`;
    const now = Date.now();
    const cached = this.apiKeys.get(cacheKey);
    if (cached && now - cached.checkedAt < this.cacheMs) return cached.caller;

    let userId: number | null = null;
    if (onBehalfOf !== undefined) {
      // A malformed id names no user: the same answer as an unknown one.
      userId = USER_ID_PATTERN.test(onBehalfOf) && Number(onBehalfOf) <= MAX_INT ? Number(onBehalfOf) : 0;
    }
    const [app] = await query(this.pool, API_KEY, [hash, userId]);
    if (!app) throw new AppError('UNAUTHENTICATED', MESSAGES.unknownApiKey);
    let caller: Caller;
    if (onBehalfOf === undefined) caller = { kind: 'application', applicationId: app.applicationId, via: 'apiKey' };
    else if (app.userId === null) throw new AppError('FORBIDDEN', MESSAGES.onBehalfOfUnknown);
    else caller = { kind: 'user', applicationId: app.applicationId, userId: app.userId, via: 'apiKey' };
    if (this.cacheMs > 0) remember(this.apiKeys, cacheKey, { caller, checkedAt: now }, this.cacheSize);
    return caller;
  }

  /** Writes the pending session touches (one statement, whatever their number). */
  flush(): Promise<void> {
    // After the previous flush, whether it succeeded or not: a failed flush
    // (database down) must not stop every later one.
    this.flushing = this.flushing.catch(() => {}).then(async () => {
      if (this.touches.size === 0) return;
      const batch = this.touches;
      this.touches = new Map();
      try {
        await query(this.pool, FLUSH_TOUCHES, [[...batch.keys()], [...batch.values()].map((at) => new Date(at))]);
      } catch (error) {
        // Keep them for the next flush, unless newer touches replaced them.
        for (const [hash, at] of batch) if (!this.touches.has(hash)) this.touches.set(hash, at);
        throw error;
      }
    });
    return this.flushing;
  }

  /** Stops the timer and writes what is pending. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}

/** Map insertion order as a cheap LRU: the oldest entry goes when full. */
function remember<V>(map: Map<string, V>, key: string, value: V, size: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > size) map.delete(map.keys().next().value as string);
}

/** The rule shared by every operation that acts on a user's own data. */
export function requireUser(caller: Caller): Extract<Caller, { kind: 'user' }> {
  if (caller.kind !== 'user') throw new AppError('FORBIDDEN', MESSAGES.needUser);
  return caller;
}
