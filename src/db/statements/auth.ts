// Credentials: session tokens and API keys.
import { computed, computedOrNull, field, statement } from '../sql';

/**
 * A condition that is always true and makes the statement's transaction
 * commit without waiting for a synchronous standby (synchronous_commit =
 * local, for this transaction only): a touch is worth no wait, and while the
 * standby is missing every credential check would otherwise hang on it. It is
 * evaluated on each row the statement changes, so whenever it writes.
 */
const COMMIT_LOCALLY = "set_config('synchronous_commit', 'local', true) IS NOT NULL";

/**
 * Slides the session ($3: its life in seconds), stamps the user, answers who
 * it is: one statement for a cache miss. A live session of a disabled
 * application (`admin app:disable`) is answered with `disabled` and neither
 * slid nor stamped (the request is refused; the session is kept, so that
 * `app:enable` gives it back); the second branch runs only when the first
 * found nothing, so a request of an enabled application pays for it nothing
 * but the probe of its application's row.
 */
export const TOUCH_SESSION = statement({
  name: 'auth.touch_session',
  params: ['text', 'timestamptz', 'int4'],
  // A credential check: losing its slide is harmless (the next request slides it).
  writes: false,
  columns: {
    id: field('Session', 'id'),
    applicationId: field('Session', 'applicationId'),
    userId: field('Session', 'userId'),
    disabled: computed('bool'),
  },
  text: `WITH s AS (
           UPDATE sessions SET expires_at = GREATEST(sessions.expires_at, $2::timestamptz + make_interval(secs => $3::int))
            WHERE token_hash = $1 AND expires_at > $2::timestamptz
              AND NOT EXISTS (SELECT 1 FROM applications a WHERE a.id = sessions.application_id AND a.disabled_at IS NOT NULL)
              AND ${COMMIT_LOCALLY}
           RETURNING id, application_id, user_id
         ), touched AS (
           UPDATE users SET last_request_at = GREATEST(users.last_request_at, $2::timestamptz) WHERE id = (SELECT user_id FROM s) RETURNING id
         )
         SELECT id, application_id AS "applicationId", user_id AS "userId", false AS disabled FROM s
         UNION ALL
         SELECT d.id, d.application_id, d.user_id, true
           FROM sessions d JOIN applications a ON a.id = d.application_id
          WHERE d.token_hash = $1 AND d.expires_at > $2::timestamptz AND a.disabled_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM s)`,
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

/** The key's application (and whether it is disabled), and the On-Behalf-Of user if it is one of that application's. */
export const API_KEY = statement({
  name: 'auth.api_key',
  params: ['text', 'int4'],
  columns: { applicationId: field('Application', 'id'), userId: computedOrNull('int4'), disabled: computed('bool') },
  text: `SELECT a.id AS "applicationId",
                (SELECT u.id FROM users u WHERE u.id = $2::int AND u.application_id = a.id) AS "userId",
                a.disabled_at IS NOT NULL AS disabled
           FROM applications a
          WHERE a.api_key_hash = $1`,
});
