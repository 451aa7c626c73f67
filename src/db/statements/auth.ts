// Credentials: session tokens and API keys.
import { computedOrNull, field, statement } from '../sql';

/**
 * A condition that is always true and makes the statement's transaction
 * commit without waiting for a synchronous standby (synchronous_commit =
 * local, for this transaction only): a touch is worth no wait, and while the
 * standby is missing every credential check would otherwise hang on it. It is
 * evaluated on each row the statement changes, so whenever it writes.
 */
const COMMIT_LOCALLY = "set_config('synchronous_commit', 'local', true) IS NOT NULL";

/** Slides the session ($3: its life in seconds), stamps the user, answers who it is: one statement for a cache miss. */
export const TOUCH_SESSION = statement({
  name: 'auth.touch_session',
  params: ['text', 'timestamptz', 'int4'],
  // A credential check: losing its slide is harmless (the next request slides it).
  writes: false,
  columns: { id: field('Session', 'id'), applicationId: field('Session', 'applicationId'), userId: field('Session', 'userId') },
  text: `WITH s AS (
           UPDATE sessions SET expires_at = GREATEST(sessions.expires_at, $2::timestamptz + make_interval(secs => $3::int))
            WHERE token_hash = $1 AND expires_at > $2::timestamptz AND ${COMMIT_LOCALLY}
           RETURNING id, application_id, user_id
         ), touched AS (
           UPDATE users SET last_request_at = GREATEST(users.last_request_at, $2::timestamptz) WHERE id = (SELECT user_id FROM s) RETURNING id
         )
         SELECT id, application_id AS "applicationId", user_id AS "userId" FROM s`,
});

/**
 * The batched touches. A touch at time t extends a session only if it was
 * still alive at t, and never moves expiry or last_request_at backwards: a
 * late flush neither resurrects an expired session nor undoes a newer touch.
 * $3: the sessions' life in seconds.
 */
export const FLUSH_TOUCHES = statement({
  name: 'auth.flush_touches',
  params: ['_text', '_timestamptz', 'int4'],
  // No request waits on it; a failed flush is run again (src/services/auth.ts).
  writes: false,
  text: `WITH t AS (
           SELECT * FROM unnest($1::text[], $2::timestamptz[]) AS t(token_hash, at)
         ), s AS (
           UPDATE sessions SET expires_at = GREATEST(sessions.expires_at, t.at + make_interval(secs => $3::int))
             FROM t
            WHERE sessions.token_hash = t.token_hash AND sessions.expires_at > t.at AND ${COMMIT_LOCALLY}
           RETURNING sessions.user_id, t.at
         )
         UPDATE users SET last_request_at = GREATEST(users.last_request_at, latest.at)
           FROM (SELECT user_id, max(at) AS at FROM s WHERE user_id IS NOT NULL GROUP BY user_id) latest
          WHERE users.id = latest.user_id`,
});

/** The key's application, and the On-Behalf-Of user if it is one of that application's. */
export const API_KEY = statement({
  name: 'auth.api_key',
  params: ['text', 'int4'],
  columns: { applicationId: field('Application', 'id'), userId: computedOrNull('int4') },
  text: `SELECT a.id AS "applicationId",
                (SELECT u.id FROM users u WHERE u.id = $2::int AND u.application_id = a.id) AS "userId"
           FROM applications a
          WHERE a.api_key_hash = $1`,
});
