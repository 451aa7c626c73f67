// The sweeper's batches (src/services/sweeper.ts): each removes at most $2
// rows of what only grows, in one statement, and only while it holds the sweep
// lock.
//
// The lock is transaction-level and taken inside the statement, so it is held
// exactly while the batch runs (a statement outside a transaction is its own
// transaction): nothing stays locked, and no connection stays checked out,
// between batches, and it holds through PgBouncer in transaction mode, where a
// session-level lock would stay on whichever server connection took it. It is
// tried, never waited for: another instance holding it is sweeping already.
// The rows are selected under the lock's result (`(SELECT locked FROM lock)`
// is evaluated once, before the first row passes), so no row is removed by a
// statement that did not get it.
//
// A batch deletes the rows it selected by their ctid (`ctid = ANY(ARRAY(…))`,
// a TID scan whatever the statistics say), not by `id IN (…)`: the rows are
// locked FOR UPDATE by the same statement, so their ctids cannot change
// before the DELETE. With `id IN (…)` the plan followed the statistics, and
// statistics taken when the table was nearly empty (1,000,000 expired
// sessions arriving before autovacuum's next ANALYZE) made it a nested loop
// over a sequential scan of the whole table: 80 s a batch of 1,000, and the
// sweeper, pausing in proportion, removed 82 sessions a second
// (test/db/sweeper-plans.test.ts).
import { computed, statement } from '../sql';

/** "swep" in the high half: apart from the address book's, the sessions' and Prisma's migration locks. */
const LOCK = `lock AS MATERIALIZED (SELECT pg_try_advisory_xact_lock(x'7377657000000000'::bigint) AS locked)`;

/**
 * Sessions whose whole expiry hour (expiry_hour, the indexed hour expires_at
 * falls in) ended by $1: they expired before it. So a session goes between
 * the cut-off and an hour after it. Rows a request is touching just then are
 * skipped (SKIP LOCKED): the next batch or run takes them.
 */
export const SWEEP_SESSIONS = statement({
  name: 'sweeper.sessions',
  params: ['timestamptz', 'int4'],
  columns: { locked: computed('bool'), removed: computed('int4') },
  text: `WITH ${LOCK}, removed AS (
           DELETE FROM sessions WHERE ctid = ANY(ARRAY(
             SELECT ctid FROM sessions
              WHERE expiry_hour <= $1::timestamptz - interval '1 hour' AND expires_at < $1 AND (SELECT locked FROM lock)
              ORDER BY expiry_hour
              LIMIT $2::int
                FOR UPDATE SKIP LOCKED))
           RETURNING 1
         )
         SELECT (SELECT locked FROM lock) AS locked, (SELECT count(*)::int FROM removed) AS removed`,
});

/**
 * Used (timestamp, nonce) pairs signed before $1: a request signed then is
 * refused by the timestamp check whatever its nonce. A session request
 * forgets its own application's old pairs; these are those of applications
 * that stopped opening sessions. Each application's pairs are reached through
 * the primary key's (application, signed_at) prefix.
 */
export const SWEEP_NONCES = statement({
  name: 'sweeper.nonces',
  params: ['timestamptz', 'int4'],
  columns: { locked: computed('bool'), removed: computed('int4') },
  text: `WITH ${LOCK}, due AS (
           SELECT n.application_id, n.signed_at, n.nonce
             FROM applications a
            CROSS JOIN LATERAL (
              SELECT application_id, signed_at, nonce FROM session_nonces
               WHERE application_id = a.id AND signed_at < $1
               ORDER BY signed_at
               LIMIT $2::int) n
            WHERE (SELECT locked FROM lock)
            LIMIT $2::int
         ), removed AS (
           DELETE FROM session_nonces s USING due
            WHERE s.application_id = due.application_id AND s.signed_at = due.signed_at AND s.nonce = due.nonce
           RETURNING 1
         )
         SELECT (SELECT locked FROM lock) AS locked, (SELECT count(*)::int FROM removed) AS removed`,
});

/** Deleted messages' content kept for audit (DELETED_CONTENT_RETENTION_S) whose time is up, oldest first. */
export const SWEEP_RETAINED_CONTENT = statement({
  name: 'sweeper.retained_content',
  params: ['int4'],
  columns: { locked: computed('bool'), removed: computed('int4') },
  text: `WITH ${LOCK}, removed AS (
           DELETE FROM retained_message_contents WHERE ctid = ANY(ARRAY(
             SELECT ctid FROM retained_message_contents
              WHERE expires_at <= now() AND (SELECT locked FROM lock)
              ORDER BY expires_at
              LIMIT $1::int
                FOR UPDATE SKIP LOCKED))
           RETURNING 1
         )
         SELECT (SELECT locked FROM lock) AS locked, (SELECT count(*)::int FROM removed) AS removed`,
});

/**
 * Live events older than $1, at most $2: a prefix of the readers' (xid, id)
 * order, ending before the first event not yet old enough, so that a cursor
 * whose own event is still stored has every event after it stored too (a
 * replay checks exactly that: src/db/statements/live.ts, REPLAY).
 */
export const SWEEP_LIVE_EVENTS = statement({
  name: 'sweeper.live_events',
  params: ['timestamptz', 'int4'],
  columns: { locked: computed('bool'), removed: computed('int4') },
  text: `WITH ${LOCK}, batch AS MATERIALIZED (
           SELECT xid, id, created_at FROM live_events
            WHERE (SELECT locked FROM lock)
            ORDER BY xid, id
            LIMIT $2::int
         ), stop AS (
           SELECT xid, id FROM batch WHERE created_at >= $1 ORDER BY xid, id LIMIT 1
         ), removed AS (
           DELETE FROM live_events e USING batch b
            WHERE e.id = b.id
              AND NOT EXISTS (SELECT 1 FROM stop s WHERE (b.xid, b.id) >= (s.xid, s.id))
           RETURNING 1
         )
         SELECT (SELECT locked FROM lock) AS locked, (SELECT count(*)::int FROM removed) AS removed`,
});
