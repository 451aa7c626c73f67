// Dialogs as their occupants see them: the list (most recent activity first,
// keyset-paged both ways), one dialog, and how many a user occupies.
import { computed, computedOrNull, fields, statement } from '../sql';
import { historyPageSql } from './chat';

/**
 * The dialogs user $2 of application $1 occupies, each with its occupants and
 * the newest message of $2's history (neither deleted for everyone nor hidden
 * by $2): one backward index scan of messages(dialog_id, created_at) per
 * dialog, each message's hide looked up by key (OFFSET 0: see
 * historyPageSql). Its activity is that message's time, else the dialog's
 * creation.
 */
const DIALOGS_OF = `
  SELECT d.id, d.name, d.type, d.owner_id AS "ownerId", d.created_at AS "createdAt",
         ARRAY(SELECT oc.user_id FROM dialog_occupants oc WHERE oc.dialog_id = d.id ORDER BY oc.user_id) AS "occupantIds",
         lm.id AS "lastMessageId", lm.sender_id AS "lastMessageSenderId", lm.body AS "lastMessageBody",
         lm.created_at AS "lastMessageAt", COALESCE(lm.created_at, d.created_at) AS "lastActivityAt"
    FROM dialog_occupants o
    JOIN dialogs d ON d.id = o.dialog_id AND d.application_id = $1
    LEFT JOIN LATERAL (
      SELECT m.id, m.sender_id, m.body, m.created_at
        FROM messages m
       WHERE m.dialog_id = d.id AND m.deleted_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM message_hides h WHERE h.message_id = m.id AND h.user_id = $2 OFFSET 0)
       ORDER BY m.created_at DESC, m.id DESC
       LIMIT 1) lm ON true
   WHERE o.user_id = $2`;

export const DIALOG_ROW = {
  ...fields('Dialog', ['id', 'name', 'type', 'ownerId', 'createdAt']),
  occupantIds: computed('_int4'),
  lastMessageId: computedOrNull('text'),
  lastMessageSenderId: computedOrNull('int4'),
  lastMessageBody: computedOrNull('text'),
  lastMessageAt: computedOrNull('timestamptz'),
  lastActivityAt: computed('timestamptz'),
};

/** $3/$4: the activity and id of the cursor (null: from the newest); $5 rows. Newest activity first. */
export const DIALOGS_PAGE = statement({
  name: 'dialogs.page',
  params: ['int4', 'int4', 'timestamptz', 'text', 'int4'],
  columns: DIALOG_ROW,
  text: `SELECT * FROM (${DIALOGS_OF}) x
          WHERE $3::timestamptz IS NULL OR ("lastActivityAt", id) < ($3::timestamptz, $4::text)
          ORDER BY "lastActivityAt" DESC, id DESC
          LIMIT $5::int`,
});

/** The page before the cursor ($3/$4; null: from the oldest), oldest activity first: the service reverses it. */
export const DIALOGS_PAGE_BACK = statement({
  name: 'dialogs.page_back',
  params: ['int4', 'int4', 'timestamptz', 'text', 'int4'],
  columns: DIALOG_ROW,
  text: `SELECT * FROM (${DIALOGS_OF}) x
          WHERE $3::timestamptz IS NULL OR ("lastActivityAt", id) > ($3::timestamptz, $4::text)
          ORDER BY "lastActivityAt", id
          LIMIT $5::int`,
});

/** Dialog $3, when user $2 of application $1 occupies it. */
export const DIALOG_OF_USER = statement({
  name: 'dialogs.of_user',
  params: ['int4', 'int4', 'text'],
  columns: DIALOG_ROW,
  text: `${DIALOGS_OF} AND d.id = $3`,
});

/**
 * Dialog $3 as DIALOG_OF_USER reads it, with a page of $2's history of it
 * (historyPageSql; the last parameter the rows, the two before it the
 * cursor's time and id when there is one), as JSON [id, senderId, body,
 * createdAt in epoch ms] in the page's order: one round trip where node(id) {
 * ... on Dialog { messages } }, a screen's history read, took two
 * (src/graphql/resolvers/Query/node.ts). JSON: one value that JSON.parse
 * reads at once, where arrays of each column (postgres-array) or the
 * dialog's columns repeated on every row cost more than the round trip
 * saved. No row: the dialog is not one $2 occupies in application $1.
 */
function dialogWithPageSql(direction: 'forward' | 'backward', position: boolean): string {
  const order = direction === 'forward' ? '' : ' DESC';
  const page = historyPageSql(
    position ? { dialog: 'x.id', user: '$2', position: { at: '$4', id: '$5' }, limit: '$6' } : { dialog: 'x.id', user: '$2', limit: '$4' },
    direction,
  );
  return `SELECT x.*, (SELECT COALESCE(json_agg(json_build_array(q.id, q."senderId", q.body, (extract(epoch FROM q."createdAt") * 1000)::bigint)
                                            ORDER BY q."createdAt"${order}, q.id${order}), '[]')
                    FROM (${page}) q) AS page
       FROM (${DIALOGS_OF} AND d.id = $3) x`;
}

const DIALOG_WITH_PAGE_ROW = { ...DIALOG_ROW, page: computed('json') };

/** Dialog $3 with the first $4 messages of the history. */
export const DIALOG_WITH_FIRST_PAGE = statement({
  name: 'dialogs.of_user_with_first_page',
  params: ['int4', 'int4', 'text', 'int4'],
  columns: DIALOG_WITH_PAGE_ROW,
  text: dialogWithPageSql('forward', false),
});

/** Dialog $3 with the $6 messages after the one sent at $4 with id $5. */
export const DIALOG_WITH_PAGE_AFTER = statement({
  name: 'dialogs.of_user_with_page_after',
  params: ['int4', 'int4', 'text', 'timestamptz', 'text', 'int4'],
  columns: DIALOG_WITH_PAGE_ROW,
  text: dialogWithPageSql('forward', true),
});

/** Dialog $3 with the newest $4 messages, newest first. */
export const DIALOG_WITH_LAST_PAGE = statement({
  name: 'dialogs.of_user_with_last_page',
  params: ['int4', 'int4', 'text', 'int4'],
  columns: DIALOG_WITH_PAGE_ROW,
  text: dialogWithPageSql('backward', false),
});

/** Dialog $3 with the $6 messages before the one sent at $4 with id $5, newest first. */
export const DIALOG_WITH_PAGE_BEFORE = statement({
  name: 'dialogs.of_user_with_page_before',
  params: ['int4', 'int4', 'text', 'timestamptz', 'text', 'int4'],
  columns: DIALOG_WITH_PAGE_ROW,
  text: dialogWithPageSql('backward', true),
});

/** How many dialogs of application $1 user $2 occupies. */
export const DIALOGS_COUNT = statement({
  name: 'dialogs.count',
  params: ['int4', 'int4'],
  columns: { total: computed('int4') },
  text: `SELECT count(*)::int AS total
           FROM dialog_occupants o
           JOIN dialogs d ON d.id = o.dialog_id AND d.application_id = $1
          WHERE o.user_id = $2`,
});
