// Sessions: what a signed session request, login and logout read and write.
import { computed, fields, statement } from '../sql';
import { USER_COLUMNS, USER_RECORD } from './users';

const SESSION_FIELDS = ['id', 'applicationId', 'userId', 'nonce', 'signedAt', 'createdAt', 'updatedAt', 'expiresAt'] as const;
const SESSION_COLUMNS = `id, application_id AS "applicationId", user_id AS "userId", nonce, signed_at AS "signedAt",
  created_at AS "createdAt", updated_at AS "updatedAt", expires_at AS "expiresAt"`;

export const APPLICATION_CREDENTIALS = statement({
  name: 'sessions.application_credentials',
  params: ['int4'],
  columns: fields('Application', ['authKey', 'authSecretSealed', 'disabledAt']),
  text: `SELECT auth_key AS "authKey", auth_secret_sealed AS "authSecretSealed", disabled_at AS "disabledAt" FROM applications WHERE id = $1`,
});

/** With the email: a request naming login and email (the Android SDK's) must name one user by both. */
export const PASSWORD_BY_LOGIN = statement({
  name: 'sessions.password_by_login',
  params: ['int4', 'text'],
  columns: fields('User', ['id', 'passwordHash', 'email']),
  text: `SELECT id, password_hash AS "passwordHash", email FROM users WHERE application_id = $1 AND login = $2`,
});

export const PASSWORD_BY_EMAIL = statement({
  name: 'sessions.password_by_email',
  params: ['int4', 'text'],
  columns: fields('User', ['id', 'passwordHash']),
  text: `SELECT id, password_hash AS "passwordHash" FROM users WHERE application_id = $1 AND email = $2`,
});

/**
 * Serialises the statements that open or log into sessions of user $1 until
 * the transaction ends, so that two of them racing cannot both count the same
 * sessions and leave the user over the cap. "sess" in the high half keeps the
 * key apart from the address book's and the sweeper's locks.
 */
export const LOCK_USER_SESSIONS = statement({
  name: 'sessions.lock_user_sessions',
  params: ['int4'],
  columns: { locked: computed('void') },
  text: `SELECT pg_advisory_xact_lock((x'73657373'::bigint << 32) | $1::int) AS locked`,
});

/**
 * Records the (timestamp, nonce) pair and creates the session, or does
 * neither when the pair is already recorded. Pairs whose timestamp has left
 * the window ($6) are forgotten on the way (the application's own, through
 * the primary key's prefix), only by a request that records its own: a
 * data-modifying CTE runs whether or not its result is read, and a refused
 * replay writes nothing. $7: the session's life in seconds. A session without
 * a nonce ($3 null: the admin CLI's, the demo's) records none.
 *
 * A user session ($5) ends the user's least recently used sessions past the
 * newest $8 − 1 (expired ones first), so that with the new one the user has
 * at most $8; their token hashes come back in `ended`, for the credential
 * caches. The new session is not in this statement's snapshot, so it is never
 * one of them. Run after LOCK_USER_SESSIONS in one transaction: this
 * statement's snapshot then holds every session a racing creation committed.
 */
export const CREATE = statement({
  name: 'sessions.create',
  params: ['int4', 'timestamptz', 'text', 'text', 'int4', 'timestamptz', 'int4', 'int4'],
  columns: { ...fields('Session', SESSION_FIELDS), ended: computed('_text') },
  text: `WITH used AS (
           INSERT INTO session_nonces (application_id, signed_at, nonce)
           SELECT $1, $2, $3 WHERE $3::text IS NOT NULL
           ON CONFLICT DO NOTHING
           RETURNING 1
         ), forgotten AS (
           DELETE FROM session_nonces WHERE application_id = $1 AND signed_at < $6::timestamptz AND EXISTS (SELECT 1 FROM used)
         ), accepted AS (
           SELECT 1 WHERE $3::text IS NULL OR EXISTS (SELECT 1 FROM used)
         ), created AS (
           INSERT INTO sessions (token_hash, application_id, user_id, nonce, signed_at, expires_at)
           SELECT $4, $1, $5, $3, $2, now() + make_interval(secs => $7::int)
            WHERE EXISTS (SELECT 1 FROM accepted)
           RETURNING ${SESSION_COLUMNS}
         ), ended AS (
           DELETE FROM sessions WHERE id IN (
             SELECT id FROM sessions
              WHERE user_id = $5::int AND EXISTS (SELECT 1 FROM accepted)
              ORDER BY expires_at DESC, id DESC
             OFFSET $8::int - 1)
           RETURNING token_hash
         )
         SELECT created.*, ARRAY(SELECT token_hash FROM ended) AS ended FROM created`,
});

export const CURRENT = statement({
  name: 'sessions.current',
  params: ['int4'],
  columns: fields('Session', SESSION_FIELDS),
  text: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1`,
});

export const END = statement({ name: 'sessions.end', params: ['int4'], text: 'DELETE FROM sessions WHERE id = $1' });

/**
 * Makes the session the user's (login) or the application's again (logout, $2
 * null); answers the user. updated_at moves only when the user changes. A
 * login ends the user's other sessions past the newest $3 − 1, as CREATE does
 * (after LOCK_USER_SESSIONS, in one transaction), and answers their token
 * hashes in `ended`.
 */
export const SET_USER = statement({
  name: 'sessions.set_user',
  params: ['int4', 'int4', 'int4'],
  columns: { ...USER_RECORD, ended: computed('_text') },
  text: `WITH s AS (
           UPDATE sessions SET user_id = $2, updated_at = CASE WHEN user_id IS DISTINCT FROM $2 THEN now() ELSE updated_at END
            WHERE id = $1 RETURNING user_id
         ), ended AS (
           DELETE FROM sessions WHERE id IN (
             SELECT id FROM sessions
              WHERE user_id = $2::int AND id <> $1 AND EXISTS (SELECT 1 FROM s)
              ORDER BY expires_at DESC, id DESC
             OFFSET $3::int - 1)
           RETURNING token_hash
         )
         SELECT ${USER_COLUMNS}, ARRAY(SELECT token_hash FROM ended) AS ended FROM users u WHERE u.id = (SELECT user_id FROM s)`,
});
