// Live events (issue 33): what the instances' listeners and the subscribers'
// replays read of live_events, which triggers write (the migration
// live_events says how, and why the order below misses nothing).
//
// A position is (xid, id), sent and returned as text: both are bigints,
// which JavaScript numbers cannot hold exactly, and pg returns int8 as text.
import { computed, computedOrNull, field, fields, statement } from '../sql';

/**
 * The oldest transaction still running when the statement's snapshot was
 * taken (pg_snapshot_xmin): every transaction below it has ended, so no event
 * can appear below it any more. Materialised: computed once per statement.
 */
const HORIZON = `horizon AS MATERIALIZED (SELECT (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint AS xid)`;

const EVENT_COLUMNS = {
  xid: computed('text'),
  id: computed('text'),
  ...fields('LiveEvent', ['applicationId', 'dialogId', 'kind', 'userId']),
  // A list column: the statements check compares scalar fields only.
  messageIds: computed('_text'),
  createdAt: field('LiveEvent', 'createdAt'),
};

/**
 * The events after ($1, $2), in order, at most $3, whether or not they are
 * below the horizon yet: `ready` says which are. A reader takes the ready
 * ones (they come first: the order is by xid) and, when it met one that is
 * not, reads again shortly (a transaction older than it is still running).
 */
export const READ_AFTER = statement({
  name: 'live.read_after',
  params: ['text', 'text', 'int4'],
  columns: { ...EVENT_COLUMNS, ready: computed('bool') },
  text: `WITH ${HORIZON}
         SELECT e.xid::text AS xid, e.id::text AS id, e.application_id AS "applicationId", e.dialog_id AS "dialogId", e.kind,
                e.user_id AS "userId", e.message_ids AS "messageIds", e.created_at AS "createdAt", e.xid < h.xid AS ready
           FROM live_events e, horizon h
          WHERE (e.xid, e.id) > ($1::text::bigint, $2::text::bigint)
          ORDER BY e.xid, e.id
          LIMIT $3::int`,
});

/** Where a listener starts: the last event below the horizon (none: the start of the order). */
export const LATEST = statement({
  name: 'live.latest',
  params: [],
  columns: { xid: computed('text'), id: computed('text') },
  text: `WITH ${HORIZON}
         SELECT e.xid::text AS xid, e.id::text AS id
           FROM live_events e, horizon h
          WHERE e.xid < h.xid
          ORDER BY e.xid DESC, e.id DESC
          LIMIT 1`,
});

/**
 * A subscriber's replay (`after`): application $5's events after ($1, $2) up
 * to ($3, $4) included (the listener's position when the subscriber joined:
 * later ones reach it live), at most $6. `known`: the cursor's own event is
 * still stored, so nothing after it was swept (the sweeper removes a prefix
 * of the order); read in the same snapshot as the events. One row with
 * `known` and null columns when there are no events.
 */
export const REPLAY = statement({
  name: 'live.replay',
  params: ['text', 'text', 'text', 'text', 'int4', 'int4'],
  columns: {
    known: computed('bool'),
    xid: computedOrNull('text'),
    id: computedOrNull('text'),
    applicationId: computedOrNull('int4'),
    dialogId: computedOrNull('text'),
    kind: computedOrNull('text'),
    userId: computedOrNull('int4'),
    messageIds: computedOrNull('_text'),
    createdAt: computedOrNull('timestamptz'),
  },
  text: `SELECT k.known, e.xid, e.id, e."applicationId", e."dialogId", e.kind, e."userId", e."messageIds", e."createdAt"
           FROM (SELECT EXISTS (SELECT 1 FROM live_events WHERE xid = $1::text::bigint AND id = $2::text::bigint) AS known) k
           LEFT JOIN LATERAL (
             SELECT e.xid::text AS xid, e.id::text AS id, e.application_id AS "applicationId", e.dialog_id AS "dialogId", e.kind,
                    e.user_id AS "userId", e.message_ids AS "messageIds", e.created_at AS "createdAt"
               FROM live_events e
              WHERE (e.xid, e.id) > ($1::text::bigint, $2::text::bigint)
                AND (e.xid, e.id) <= ($3::text::bigint, $4::text::bigint)
                AND e.application_id = $5::int
              ORDER BY e.xid, e.id
              LIMIT $6::int) e ON k.known`,
});

/** The occupants of dialogs $1 of application $2: who a delete for everyone and a new message reach. */
export const OCCUPANTS = statement({
  name: 'live.occupants',
  params: ['_text', 'int4'],
  columns: { dialogId: computed('text'), userIds: computed('_int4') },
  text: `SELECT o.dialog_id AS "dialogId", array_agg(o.user_id) AS "userIds"
           FROM dialog_occupants o
           JOIN dialogs d ON d.id = o.dialog_id AND d.application_id = $2
          WHERE o.dialog_id = ANY($1::text[])
          GROUP BY o.dialog_id`,
});

/** Whether user $3 occupies dialog $1 of application $2 (a subscription to one dialog). */
export const IS_OCCUPANT = statement({
  name: 'live.is_occupant',
  params: ['text', 'int4', 'int4'],
  columns: { occupant: computed('bool') },
  text: `SELECT EXISTS (SELECT 1 FROM dialog_occupants o JOIN dialogs d ON d.id = o.dialog_id
                        WHERE o.dialog_id = $1 AND d.application_id = $2 AND o.user_id = $3) AS occupant`,
});
