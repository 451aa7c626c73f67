// Who a request acts as, once its credentials are checked.

export type Caller =
  /** A user: a user session token, or an API key with On-Behalf-Of. */
  | { kind: 'user'; applicationId: number; userId: number; via: 'session' | 'apiKey' }
  /**
   * An application: an application session token (read-only), or an API key
   * without On-Behalf-Of (full rights within its application).
   */
  | { kind: 'application'; applicationId: number; via: 'session' | 'apiKey' };

export type UserCaller = Extract<Caller, { kind: 'user' }>;
