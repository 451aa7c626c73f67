// Who a request acts as, once its credentials are checked.

/** The session a session-token request runs in: what ending it, or logging in, changes. */
export interface SessionRef {
  readonly id: number;
  /** SHA-256 of the token: the key of the credential cache entry to drop when the session changes. */
  readonly tokenHash: string;
}

export type Caller =
  /** A user: a user session token, or an API key with On-Behalf-Of. */
  | { kind: 'user'; applicationId: number; userId: number; via: 'session' | 'apiKey'; session?: SessionRef }
  /**
   * An application: an application session token (read-only), or an API key
   * without On-Behalf-Of (full rights within its application).
   */
  | { kind: 'application'; applicationId: number; via: 'session' | 'apiKey'; session?: SessionRef };
