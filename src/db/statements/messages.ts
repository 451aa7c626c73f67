// Messages: the delete rules of the spec, bulk imports and histories.
import { computed, fields, statement } from '../sql';

/**
 * Rule 1 / 4: visible to the user (an occupant, not yet deleted or hidden) →
 * hidden for them. Also takes, until the transaction ends, a lock per dialog
 * of those messages (in key order, so that two hides cannot deadlock on
 * them): PURGE_HIDDEN_BY_ALL, next in the same transaction, then sees every
 * other occupant's committed hide and none in progress. "hide" in the high
 * half of the key, a hash of the dialog in the low half (two dialogs sharing
 * a hash only wait for each other).
 */
export const HIDE_FOR_USER = statement({
  name: 'messages.hide_for_user',
  params: ['int4', 'int4', '_text'],
  columns: { ids: computed('_text'), dialogs: computed('int4') },
  text: `WITH visible AS (
           SELECT m.id, m.dialog_id
             FROM messages m
             JOIN dialogs d ON d.id = m.dialog_id AND d.application_id = $1
             JOIN dialog_occupants o ON o.dialog_id = m.dialog_id AND o.user_id = $2
            WHERE m.id = ANY($3::text[]) AND m.deleted_at IS NULL
         ), locked AS (
           SELECT pg_advisory_xact_lock(k)
             FROM (SELECT DISTINCT (x'68696465'::bigint << 32) | (hashtext(dialog_id)::bigint & 4294967295) AS k
                     FROM visible ORDER BY k) keys
         ), hidden AS (
           -- After the locks (the condition is evaluated before the first
           -- row): a hide waiting for a lock holds no row another waits for.
           INSERT INTO message_hides (message_id, user_id)
           SELECT id, $2 FROM visible WHERE (SELECT count(*) FROM locked) >= 0
           ON CONFLICT DO NOTHING
           RETURNING message_id
         )
         SELECT ARRAY(SELECT message_id FROM hidden) AS ids, (SELECT count(*)::int FROM locked) AS dialogs`,
});

/**
 * The content of those of messages $1 (just hidden by user $2) that every
 * other occupant of their dialog has hidden too goes, as with a delete for
 * everyone (a copy kept aside when $3, the retention in seconds, is > 0).
 * After HIDE_FOR_USER in its transaction: two occupants hiding one message at
 * once would otherwise each miss the other's uncommitted hide, and the text
 * would stay.
 */
export const PURGE_HIDDEN_BY_ALL = statement({
  name: 'messages.purge_hidden_by_all',
  params: ['_text', 'int4', 'int4'],
  columns: { purged: computed('int4') },
  text: `WITH complete AS (
           SELECT m.id, m.body
             FROM messages m
            WHERE m.id = ANY($1::text[]) AND m.body IS NOT NULL
              AND NOT EXISTS (
                SELECT 1 FROM dialog_occupants o
                 WHERE o.dialog_id = m.dialog_id AND o.user_id <> $2
                   AND NOT EXISTS (SELECT 1 FROM message_hides x WHERE x.message_id = m.id AND x.user_id = o.user_id))
         ), purged AS (
           UPDATE messages m SET body = NULL
             FROM complete c
            WHERE m.id = c.id AND m.body IS NOT NULL
           RETURNING m.id, c.body
         ), retained AS (
           INSERT INTO retained_message_contents (message_id, body, expires_at)
           SELECT id, body, now() + make_interval(secs => $3::int) FROM purged WHERE $3::int > 0
           ON CONFLICT (message_id) DO NOTHING
         )
         SELECT count(*)::int AS purged FROM purged`,
});

/**
 * Rule 2 ($2 = the user, force: must own every dialog; other applications'
 * messages do not exist for them) and rule 3 ($2 null, API key: every message
 * must belong to application $3). Either check failing → denied, nothing written.
 * The content goes with the delete; with a retention ($4 seconds > 0) a copy
 * is kept aside until the sweeper removes it.
 */
export const DELETE_FOR_EVERYONE = statement({
  name: 'messages.delete_for_everyone',
  params: ['_text', 'int4', 'int4', 'int4'],
  columns: { denied: computed('bool'), ids: computed('_text') },
  text: `WITH target AS (
           SELECT m.id, m.body, d.application_id, d.owner_id
             FROM messages m
             JOIN dialogs d ON d.id = m.dialog_id
            WHERE m.id = ANY($1::text[]) AND m.deleted_at IS NULL
              AND ($2::int IS NULL OR d.application_id = $3)
         ), denied AS (
           SELECT 1 FROM target
            WHERE CASE WHEN $2::int IS NULL THEN application_id <> $3 ELSE owner_id <> $2::int END
            LIMIT 1
         ), deleted AS (
           UPDATE messages m SET deleted_at = now(), body = NULL
             FROM target t
            WHERE m.id = t.id AND m.deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM denied)
           RETURNING m.id, t.body
         ), retained AS (
           INSERT INTO retained_message_contents (message_id, body, expires_at)
           SELECT id, body, now() + make_interval(secs => $4::int) FROM deleted
            WHERE $4::int > 0 AND body IS NOT NULL
           ON CONFLICT (message_id) DO NOTHING
         )
         SELECT EXISTS (SELECT 1 FROM denied) AS denied, ARRAY(SELECT id FROM deleted) AS ids`,
});

/** Many messages of one sender in one dialog, in one statement (imports, the benchmark's seed). */
export const CREATE_MANY = statement({
  name: 'messages.create_many',
  params: ['text', 'int4', '_text', '_text'],
  text: `INSERT INTO messages (id, dialog_id, sender_id, body)
         SELECT id, $1, $2, body FROM unnest($3::text[], $4::text[]) AS t(id, body)`,
});

/** Whether user $2 is an occupant of dialog $1 (a sender must be). */
export const IS_OCCUPANT = statement({
  name: 'messages.is_occupant',
  params: ['text', 'int4'],
  columns: { occupant: computed('bool') },
  text: `SELECT EXISTS (SELECT 1 FROM dialog_occupants WHERE dialog_id = $1 AND user_id = $2) AS occupant`,
});

/**
 * What user $2's history of dialog $1 shows: neither deleted for everyone nor
 * hidden for them, oldest first (a body is null only for a message every
 * occupant hid, which no occupant's history shows).
 */
export const HISTORY = statement({
  name: 'messages.history',
  params: ['text', 'int4'],
  columns: fields('Message', ['id', 'senderId', 'body']),
  text: `SELECT m.id, m.sender_id AS "senderId", m.body
           FROM messages m
           JOIN dialog_occupants o ON o.dialog_id = m.dialog_id AND o.user_id = $2
          WHERE m.dialog_id = $1 AND m.deleted_at IS NULL
            AND NOT EXISTS (SELECT 1 FROM message_hides h WHERE h.message_id = m.id AND h.user_id = $2)
          ORDER BY m.created_at, m.id`,
});
