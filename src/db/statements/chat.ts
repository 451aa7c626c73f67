// Messages: the delete rules of the spec, bulk imports and histories.
import { computed, fields, statement } from '../sql';

/**
 * Rule 1 / 4: visible to user $2 (an occupant, in application $1, not yet
 * deleted or hidden) → hidden for them; of those, the messages every
 * occupant has now hidden lose their text (kept aside $4 seconds when > 0).
 * One call of a PL/pgSQL function (the migrations messages_hide_function,
 * hide_row_locks and hide_generic_plans hold it, and say why; its
 * statements run on generic plans, not planned again on each call): it
 * locks the rows of the messages the user may hide, so that two occupants
 * hiding one message at once cannot both miss the other's hide and leave
 * the text behind, hides exactly those, then purges, reading after the
 * locks. One round trip where a transaction of three statements took four;
 * hides of different messages of one dialog do not wait for each other.
 */
export const HIDE_FOR_USER = statement({
  name: 'messages.hide_for_user',
  params: ['int4', 'int4', '_text', 'int4'],
  columns: { ids: computed('_text') },
  text: `SELECT messages_hide_for_user($1, $2, $3, $4) AS ids`,
  // The writes are inside the function, where the text cannot show them: a
  // commit that is not confirmed must answer WRITE_OUTCOME_UNKNOWN.
  writes: true,
});

/**
 * Rule 2 ($2 = the user, force: must own every dialog; other applications'
 * messages do not exist for them) and rule 3 ($2 null, API key: every message
 * must belong to application $3). Either check failing → denied (the ids
 * that fail it), nothing written; `found`: every message the check saw.
 * The content goes with the delete; with a retention ($4 seconds > 0) a copy
 * is kept aside until the sweeper removes it.
 */
export const DELETE_FOR_EVERYONE = statement({
  name: 'messages.delete_for_everyone',
  params: ['_text', 'int4', 'int4', 'int4'],
  columns: { denied: computed('_text'), found: computed('_text'), ids: computed('_text') },
  text: `WITH target AS (
           SELECT m.id, m.body, d.application_id, d.owner_id
             FROM messages m
             JOIN dialogs d ON d.id = m.dialog_id
            WHERE m.id = ANY($1::text[]) AND m.deleted_at IS NULL
              AND ($2::int IS NULL OR d.application_id = $3)
         ), denied AS (
           SELECT id FROM target
            WHERE CASE WHEN $2::int IS NULL THEN application_id <> $3 ELSE owner_id <> $2::int END
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
         SELECT ARRAY(SELECT id FROM denied) AS denied, ARRAY(SELECT id FROM target) AS found, ARRAY(SELECT id FROM deleted) AS ids`,
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

export const MESSAGE_ROW = fields('Message', ['id', 'dialogId', 'senderId', 'body', 'createdAt']);

/**
 * A keyset page of what user `user`'s history of dialog `dialog` shows (see
 * HISTORY): the `limit` messages after (forward: oldest first) or before
 * (backward: newest first) `position` (the time and id of a message), or
 * from the start or the end without one. One range of messages(dialog_id,
 * created_at), wherever the page starts. The arguments are SQL the caller
 * binds ($n, or a column of the dialog the page is read beside:
 * dialogs.of_user_with_*).
 *
 * The hides are looked up per message (OFFSET 0 keeps the NOT EXISTS a
 * subplan on message_hides' key, not an anti-join): as a join, a generic plan
 * built for a user with few hides read all of a user's hides for every row
 * (a user who had hidden 50,000 messages: 290 ms a page against 0.3).
 *
 * With and without a position, two statements: one text for both
 * (`$3 IS NULL OR (created_at, id) < …`) leaves PostgreSQL a generic plan that
 * cannot use the range, which it chose for the dialog-and-page statement
 * after a few executions (a page in the middle of 1,000,000 messages: 3.5 s,
 * requests answered 503 behind it). Without the OR each plan is one range.
 */
export function historyPageSql(
  p: { dialog: string; user: string; limit: string; position?: { at: string; id: string } },
  direction: 'forward' | 'backward',
): string {
  const [after, order] = direction === 'forward' ? ['>', ''] : ['<', ' DESC'];
  const from = p.position ? `AND (m.created_at, m.id) ${after} (${p.position.at}::timestamptz, ${p.position.id}::text)` : '';
  return `SELECT m.id, m.dialog_id AS "dialogId", m.sender_id AS "senderId", m.body, m.created_at AS "createdAt"
    FROM messages m
    JOIN dialog_occupants o ON o.dialog_id = m.dialog_id AND o.user_id = ${p.user}
   WHERE m.dialog_id = ${p.dialog} AND m.deleted_at IS NULL
     AND NOT EXISTS (SELECT 1 FROM message_hides h WHERE h.message_id = m.id AND h.user_id = ${p.user} OFFSET 0)
     ${from}
   ORDER BY m.created_at${order}, m.id${order}
   LIMIT ${p.limit}::int`;
}

const FROM_END = { dialog: '$1', user: '$2', limit: '$3' };
const FROM_POSITION = { dialog: '$1', user: '$2', position: { at: '$3', id: '$4' }, limit: '$5' };

/** The first $3 messages of user $2's history of dialog $1, oldest first. */
export const HISTORY_FIRST_PAGE = statement({
  name: 'messages.history_first_page',
  params: ['text', 'int4', 'int4'],
  columns: MESSAGE_ROW,
  text: historyPageSql(FROM_END, 'forward'),
});

/** The $5 messages after the one sent at $3 with id $4, oldest first. */
export const HISTORY_PAGE_AFTER = statement({
  name: 'messages.history_page_after',
  params: ['text', 'int4', 'timestamptz', 'text', 'int4'],
  columns: MESSAGE_ROW,
  text: historyPageSql(FROM_POSITION, 'forward'),
});

/** The newest $3 messages, newest first: the service reverses them. */
export const HISTORY_LAST_PAGE = statement({
  name: 'messages.history_last_page',
  params: ['text', 'int4', 'int4'],
  columns: MESSAGE_ROW,
  text: historyPageSql(FROM_END, 'backward'),
});

/** The $5 messages before the one sent at $3 with id $4, newest first: the service reverses them. */
export const HISTORY_PAGE_BEFORE = statement({
  name: 'messages.history_page_before',
  params: ['text', 'int4', 'timestamptz', 'text', 'int4'],
  columns: MESSAGE_ROW,
  text: historyPageSql(FROM_POSITION, 'backward'),
});

/** Message $3, when user $2 of application $1 occupies its dialog and sees it (not deleted, not hidden by them). */
export const VISIBLE_MESSAGE = statement({
  name: 'messages.visible',
  params: ['int4', 'int4', 'text'],
  columns: MESSAGE_ROW,
  text: `SELECT m.id, m.dialog_id AS "dialogId", m.sender_id AS "senderId", m.body, m.created_at AS "createdAt"
           FROM messages m
           JOIN dialogs d ON d.id = m.dialog_id AND d.application_id = $1
           JOIN dialog_occupants o ON o.dialog_id = m.dialog_id AND o.user_id = $2
          WHERE m.id = $3 AND m.deleted_at IS NULL
            AND NOT EXISTS (SELECT 1 FROM message_hides h WHERE h.message_id = m.id AND h.user_id = $2)`,
});

/**
 * Message $2 of application $1 as a live event (messageAdded) shows it to
 * each of its subscribers: read once per event, not once per subscriber.
 * `deleted`: deleted for everyone; `hiddenBy`: the users who hid it. Each
 * subscriber sees its body null when either holds for them (the deletion's
 * own event follows). Occupancy is the listener's to check
 * (src/services/live.ts), when it hands the event out.
 */
export const MESSAGE_AS_DELIVERED = statement({
  name: 'messages.as_delivered',
  params: ['int4', 'text'],
  columns: { ...MESSAGE_ROW, deleted: computed('bool'), hiddenBy: computed('_int4') },
  text: `SELECT m.id, m.dialog_id AS "dialogId", m.sender_id AS "senderId", m.body, m.created_at AS "createdAt",
                m.deleted_at IS NOT NULL AS deleted,
                ARRAY(SELECT h.user_id FROM message_hides h WHERE h.message_id = m.id) AS "hiddenBy"
           FROM messages m
           JOIN dialogs d ON d.id = m.dialog_id AND d.application_id = $1
          WHERE m.id = $2`,
});

/**
 * Message $1 with body $4 from user $3 in dialog $2, when $3 occupies it and
 * it is of application $5: no row otherwise (nothing written).
 */
export const SEND = statement({
  name: 'messages.send',
  params: ['text', 'text', 'int4', 'text', 'int4'],
  columns: MESSAGE_ROW,
  text: `INSERT INTO messages (id, dialog_id, sender_id, body)
         SELECT $1, d.id, o.user_id, $4
           FROM dialogs d
           JOIN dialog_occupants o ON o.dialog_id = d.id AND o.user_id = $3
          WHERE d.id = $2 AND d.application_id = $5
         RETURNING id, dialog_id AS "dialogId", sender_id AS "senderId", body, created_at AS "createdAt"`,
});
