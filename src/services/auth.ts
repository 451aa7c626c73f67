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
// time). Negative answers are never cached. A session this instance ends or
// changes (logout, login, DELETE /session.json) is dropped from its cache at
// once, and from every other instance's within milliseconds when a revocation
// bus (Redis pub/sub, PostgreSQL LISTEN/NOTIFY) is attached; so is every
// credential of an application an operator disables (`admin app:disable`),
// whose API key, sessions and session requests are then refused with 403
// APPLICATION_DISABLED (and accepted again once it is enabled: nothing of it
// is deleted, and refusals are never cached).
import type { Pool } from 'pg';
import { TOUCH_SESSION, FLUSH_TOUCHES, API_KEY } from '../db/statements/auth';
import { query, type StatementError } from '../db/sql';
import { AppError, MESSAGES } from '../errors';
import type { Caller, SessionRef } from './caller';
import type { RevocationBus } from '../scale/revocations';
import { hashSecret } from './secrets';
import { LIMITS, positiveInt32 } from './validate';

/** The credential headers of a request, as sent (undefined when absent). */
export interface Credentials {
  token?: string | undefined;
  /** More than one session-token header was sent (SVC-Token and QB-Token). */
  severalTokens?: boolean;
  authorization?: string | undefined;
  onBehalfOf?: string | undefined;
}

/** Sessions expire this long after their last request. */
export const SESSION_TTL_SECONDS = 2 * 60 * 60;
const SESSION_TTL_MS = SESSION_TTL_SECONDS * 1000;

/** SQLSTATE deadlock_detected, and how many times a flush is tried when it is the victim. */
const DEADLOCK = '40P01';
const FLUSH_ATTEMPTS = 4;

/** Revocation messages name a session by its token hash, an API key by `apikey:` and its hash, an application by `app:` and its id. */
export const API_KEY_MESSAGE = 'apikey:';
export const APPLICATION_MESSAGE = 'app:';

const API_KEY_PATTERN = new RegExp(`^ApiKey ([\\x21-\\x7e]{1,${LIMITS.apiKeyLength}})$`);

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

export class AuthService {
  private readonly cacheMs: number;
  private readonly cacheSize: number;
  private readonly sessions = new Map<string, CachedSession>();
  private readonly apiKeys = new Map<string, { caller: Caller; checkedAt: number }>();
  /** token hash → time of its latest request not yet written. */
  private touches = new Map<string, number>();
  private readonly timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  /** Flushes run again after losing a deadlock (a metric: should stay near 0 with sorted keys). */
  deadlockRetries = 0;
  /** Revocations the bus failed to send (other instances then rely on the cache's bound). */
  revocationFailures = 0;
  private revocations: RevocationBus | undefined;
  /**
   * Counts the revocations applied here. A check that read the database
   * before a revocation arrived and finishes after it is answered but not
   * cached: its answer may predate the revocation, and caching it would
   * honour a revoked credential for the cache's whole life.
   */
  private revocationsApplied = 0;
  private readonly revocationListeners = new Set<(message: string | undefined) => void>();

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
    if (credentials.severalTokens) throw new AppError('BAD_REQUEST', MESSAGES.severalTokens);
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
    // Longer than any token: names no session, without hashing it or asking the database.
    if (token.length > LIMITS.sessionTokenLength) throw new AppError('UNAUTHENTICATED', MESSAGES.sessionMissing);
    const hash = hashSecret(token);
    const now = Date.now();
    const cached = this.sessions.get(hash);
    if (cached && now - cached.checkedAt < this.cacheMs && cached.expiresAt > now) {
      cached.expiresAt = now + SESSION_TTL_MS;
      this.touches.set(hash, now);
      return cached.caller;
    }
    const revocations = this.revocationsApplied;
    const [session] = await query(this.pool, TOUCH_SESSION, [hash, new Date(now), SESSION_TTL_SECONDS]);
    if (!session) {
      this.sessions.delete(hash);
      throw new AppError('UNAUTHENTICATED', MESSAGES.sessionMissing);
    }
    if (session.disabled) throw new AppError('APPLICATION_DISABLED', MESSAGES.applicationDisabled);
    const ref = { id: session.id, tokenHash: hash };
    const caller: Caller =
      session.userId === null
        ? { kind: 'application', applicationId: session.applicationId, via: 'session', session: ref }
        : { kind: 'user', applicationId: session.applicationId, userId: session.userId, via: 'session', session: ref };
    if (this.cacheMs > 0 && revocations === this.revocationsApplied) {
      remember(this.sessions, hash, { caller, checkedAt: now, expiresAt: now + SESSION_TTL_MS }, this.cacheSize);
    }
    return caller;
  }

  private async byApiKey(authorization: string, onBehalfOf: string | undefined): Promise<Caller> {
    const key = API_KEY_PATTERN.exec(authorization)?.[1];
    if (key === undefined) throw new AppError('UNAUTHENTICATED', MESSAGES.malformedAuthorization);
    const hash = hashSecret(key);
    let userId: number | null = null;
    if (onBehalfOf !== undefined) {
      // A malformed id names no user: the same answer as an unknown one.
      userId = positiveInt32(onBehalfOf) ?? 0;
    }
    // Keyed by the parsed id, not the header as sent: a fixed size per entry.
    const cacheKey = `${hash}:${userId ?? ''}`;
    const now = Date.now();
    const cached = this.apiKeys.get(cacheKey);
    if (cached && now - cached.checkedAt < this.cacheMs) return cached.caller;

    const revocations = this.revocationsApplied;
    const [app] = await query(this.pool, API_KEY, [hash, userId]);
    if (!app) throw new AppError('UNAUTHENTICATED', MESSAGES.unknownApiKey);
    if (app.disabled) throw new AppError('APPLICATION_DISABLED', MESSAGES.applicationDisabled);
    let caller: Caller;
    if (onBehalfOf === undefined) caller = { kind: 'application', applicationId: app.applicationId, via: 'apiKey' };
    else if (app.userId === null) throw new AppError('FORBIDDEN', MESSAGES.onBehalfOfUnknown);
    else caller = { kind: 'user', applicationId: app.applicationId, userId: app.userId, via: 'apiKey' };
    if (this.cacheMs > 0 && revocations === this.revocationsApplied) remember(this.apiKeys, cacheKey, { caller, checkedAt: now }, this.cacheSize);
    return caller;
  }

  /**
   * Drops a session from the cache of this instance and, through the
   * revocation bus when there is one, of every other: its next request is
   * checked against the database wherever it lands. Awaited by the operation
   * that ended or changed the session, so that its answer comes after the
   * message went out. A bus that fails leaves other instances to the cache's
   * own bound (`cacheMs`): counted, never an error for the caller, whose write
   * has been made.
   */
  async forget(tokenHash: string): Promise<void> {
    await this.forgetEverywhere(tokenHash);
  }

  /** Drops an API key (by its hash) from every instance's cache: it was rotated or removed. */
  async forgetApiKey(keyHash: string): Promise<void> {
    await this.forgetEverywhere(`${API_KEY_MESSAGE}${keyHash}`);
  }

  /** Drops every credential of an application (its API key, its sessions) from every instance's cache: it was disabled. */
  async forgetApplication(applicationId: number): Promise<void> {
    await this.forgetEverywhere(`${APPLICATION_MESSAGE}${applicationId}`);
  }

  /** A revocation message (see `forgetLocally`), applied here and published to the other instances. */
  private async forgetEverywhere(message: string): Promise<void> {
    this.forgetLocally(message);
    if (!this.revocations) return;
    try {
      await this.revocations.publish(message);
    } catch {
      this.revocationFailures++;
    }
  }

  /**
   * Drops one session (a token hash), an API key (`apikey:<hash>`) or every
   * credential of an application (`app:<id>`) from this instance's cache: a
   * revocation received from the bus.
   */
  forgetLocally(message: string): void {
    this.revocationsApplied++;
    for (const listener of this.revocationListeners) listener(message);
    if (message.startsWith(APPLICATION_MESSAGE)) {
      const applicationId = Number(message.slice(APPLICATION_MESSAGE.length));
      for (const cache of [this.sessions, this.apiKeys]) {
        for (const [key, entry] of [...cache]) if (entry.caller.applicationId === applicationId) cache.delete(key);
      }
    } else if (message.startsWith(API_KEY_MESSAGE)) {
      // Cached per (key, On-Behalf-Of): every entry of that key goes.
      const prefix = `${message.slice(API_KEY_MESSAGE.length)}:`;
      for (const key of [...this.apiKeys.keys()]) if (key.startsWith(prefix)) this.apiKeys.delete(key);
    } else {
      this.sessions.delete(message);
    }
  }

  /** Drops every cached credential: the revocation channel was interrupted and messages may be lost. */
  forgetAll(): void {
    this.revocationsApplied++;
    for (const listener of this.revocationListeners) listener(undefined);
    this.sessions.clear();
    this.apiKeys.clear();
  }

  /**
   * Told of every revocation applied here, this instance's own and the bus's
   * (a token hash, `apikey:<hash>` or `app:<id>`; undefined: all may be
   * stale): live sockets of an ended session close (src/graphql/subscriptions.ts).
   */
  onRevocation(listener: (message: string | undefined) => void): () => void {
    this.revocationListeners.add(listener);
    return () => this.revocationListeners.delete(listener);
  }

  /** Revocations go through this bus from now on (src/scale/revocations.ts). */
  useRevocations(bus: RevocationBus | undefined): void {
    this.revocations = bus;
  }

  /** Writes the pending session touches (one statement, whatever their number). */
  flush(): Promise<void> {
    // After the previous flush, whether it succeeded or not: a failed flush
    // (database down) must not stop every later one.
    this.flushing = this.flushing
      .catch(() => {})
      .then(async () => {
        if (this.touches.size === 0) return;
        const batch = this.touches;
        this.touches = new Map();
        // Sorted: instances flushing touches of the same sessions lock their rows
        // in one order, not each in its own (two orders deadlock, 40P01).
        const hashes = [...batch.keys()].sort();
        const times = hashes.map((hash) => new Date(batch.get(hash)!));
        try {
          for (let attempt = 1; ; attempt++) {
            try {
              await query(this.pool, FLUSH_TOUCHES, [hashes, times, SESSION_TTL_SECONDS]);
              break;
            } catch (error) {
              // A deadlock with a request's own touch (TOUCH_SESSION locks a
              // session, then its user) can still happen; PostgreSQL rolled this
              // flush back whole, so it is safe to run again, after a jittered pause.
              if ((error as StatementError).code !== DEADLOCK || attempt >= FLUSH_ATTEMPTS) throw error;
              this.deadlockRetries++;
              await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
            }
          }
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

/**
 * Application session tokens are read-only and name no user (QuickBlox's
 * rule); the operations that take an application's API key still refuse
 * them. Only the operations on the session itself (show, end, login) take one.
 */
export function refuseApplicationSession(caller: Caller): void {
  if (caller.kind === 'application' && caller.via === 'session') throw new AppError('FORBIDDEN', MESSAGES.needUser);
}

/** The rule shared by every operation that acts on a user's own data. */
export function requireUser(caller: Caller): Extract<Caller, { kind: 'user' }> {
  if (caller.kind !== 'user') throw new AppError('FORBIDDEN', MESSAGES.needUser);
  return caller;
}

/** The rule of the operations on the session itself (show, end, login, logout): an API key has none. */
export function requireSession(caller: Caller): SessionRef {
  if (caller.session === undefined) throw new AppError('FORBIDDEN', MESSAGES.sessionRequired);
  return caller.session;
}
