// Sessions: what a signed session request, login and logout read and write.
import { fields, statement } from '../sql';
import { USER_COLUMNS, USER_RECORD } from './users';

const SESSION_FIELDS = ['id', 'applicationId', 'userId', 'nonce', 'signedAt', 'createdAt', 'updatedAt', 'expiresAt'] as const;
const SESSION_COLUMNS = `id, application_id AS "applicationId", user_id AS "userId", nonce, signed_at AS "signedAt",
  created_at AS "createdAt", updated_at AS "updatedAt", expires_at AS "expiresAt"`;

export const APPLICATION_CREDENTIALS = statement({
  name: 'sessions.application_credentials',
  params: ['int4'],
  columns: fields('Application', ['authKey', 'authSecretSealed']),
  text: `SELECT auth_key AS "authKey", auth_secret_sealed AS "authSecretSealed" FROM applications WHERE id = $1`,
});

export const PASSWORD_BY_LOGIN = statement({
  name: 'sessions.password_by_login',
  params: ['int4', 'text'],
  columns: fields('User', ['id', 'passwordHash']),
  text: `SELECT id, password_hash AS "passwordHash" FROM users WHERE application_id = $1 AND login = $2`,
});

export const PASSWORD_BY_EMAIL = statement({
  name: 'sessions.password_by_email',
  params: ['int4', 'text'],
  columns: fields('User', ['id', 'passwordHash']),
  text: `SELECT id, password_hash AS "passwordHash" FROM users WHERE application_id = $1 AND email = $2`,
});

/**
 * Records the (timestamp, nonce) pair and creates the session, or does
 * neither when the pair is already recorded. Pairs whose timestamp has left
 * the window ($6) are forgotten on the way (the application's own, through
 * the primary key's prefix), only by a request that records its own: a
 * data-modifying CTE runs whether or not its result is read, and a refused
 * replay writes nothing. $7: the session's life in seconds.
 */
export const CREATE = statement({
  name: 'sessions.create',
  params: ['int4', 'timestamptz', 'text', 'text', 'int4', 'timestamptz', 'int4'],
  columns: fields('Session', SESSION_FIELDS),
  text: `WITH used AS (
           INSERT INTO session_nonces (application_id, signed_at, nonce) VALUES ($1, $2, $3)
           ON CONFLICT DO NOTHING
           RETURNING 1
         ), forgotten AS (
           DELETE FROM session_nonces WHERE application_id = $1 AND signed_at < $6::timestamptz AND EXISTS (SELECT 1 FROM used)
         )
         INSERT INTO sessions (token_hash, application_id, user_id, nonce, signed_at, expires_at)
         SELECT $4, $1, $5, $3, $2, now() + make_interval(secs => $7::int)
          WHERE EXISTS (SELECT 1 FROM used)
         RETURNING ${SESSION_COLUMNS}`,
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
 * null); answers the user. updated_at moves only when the user changes.
 */
export const SET_USER = statement({
  name: 'sessions.set_user',
  params: ['int4', 'int4'],
  columns: USER_RECORD,
  text: `WITH s AS (
           UPDATE sessions SET user_id = $2, updated_at = CASE WHEN user_id IS DISTINCT FROM $2 THEN now() ELSE updated_at END
            WHERE id = $1 RETURNING user_id
         )
         SELECT ${USER_COLUMNS} FROM users u WHERE u.id = (SELECT user_id FROM s)`,
});

