-- CreateTable
CREATE TABLE "live_events" (
    "xid" BIGINT NOT NULL DEFAULT ((pg_current_xact_id())::text)::bigint,
    "id" BIGSERIAL NOT NULL,
    "application_id" INTEGER NOT NULL,
    "dialog_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "user_id" INTEGER,
    "message_ids" TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "live_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "live_events_xid_id_key" ON "live_events"("xid", "id");

-- Live events (issue 33): every deletion and every new message becomes a row
-- of live_events in the writing statement's own transaction, by triggers, so
-- that whatever wrote it (the service's REST and GraphQL paths, the admin CLI,
-- Prisma's provisioning, another program's UPDATE) publishes it exactly once:
-- one event per statement and dialog (a delete of three messages of a dialog
-- is one event naming the three). A NOTIFY on channel live_events tells the
-- instances' listeners (src/live/listener.ts); PostgreSQL sends it at commit,
-- and not at all when the transaction rolls back, with the event.
--
-- Order and completeness. A reader follows the events by (xid, id): xid is
-- the writing transaction's id, id a sequence value. A plain sequence is not
-- enough: transaction A takes id 7, B takes id 8 and commits first; a reader
-- that saw 8 and moved its cursor past it would never see 7. So a reader only
-- reads events whose xid is below the oldest transaction still running
-- (pg_snapshot_xmin of its statement's snapshot): every transaction below
-- that has ended, committed (its events visible in that same snapshot) or
-- rolled back (none), so no event can appear below the cursor later. xids
-- are 64-bit (xid8: epoch and xid), never wrap, and go on after a failover
-- (the standby replays the primary's). The price: a transaction that holds
-- an xid for long (a long write, an idle-in-transaction session) holds back
-- the delivery of the events committed after it began (the listener's lag
-- metric shows it); the service's own transactions last milliseconds.
-- The same rule makes `after: <cursor>` replays exact: the order of events
-- below the horizon never changes.
--
-- The statement-level triggers read their transition tables once, so a bulk
-- write of n rows costs one INSERT … SELECT, not n.

-- The signal: one per transaction whatever its number of events (PostgreSQL
-- folds identical notifications of a transaction into one).
CREATE FUNCTION "live_events_notify"() RETURNS void LANGUAGE sql AS $$ SELECT pg_notify('live_events', '') $$;

-- Deleted for everyone: deleted_at set on a message that had none. (A purge
-- of the text alone, when the last occupant hid a message, is no event: the
-- hides were.) Transition tables cannot go with a column list (UPDATE OF), so
-- every UPDATE of messages runs this, which finds nothing for other updates.
CREATE FUNCTION "live_events_messages_updated"() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO live_events (application_id, dialog_id, kind, message_ids)
  SELECT d.application_id, n.dialog_id, 'deleted', array_agg(n.id ORDER BY n.id)
    FROM new_messages n
    JOIN old_messages o ON o.id = n.id
    JOIN dialogs d ON d.id = n.dialog_id
   WHERE o.deleted_at IS NULL AND n.deleted_at IS NOT NULL
   GROUP BY d.application_id, n.dialog_id
   ORDER BY n.dialog_id;
  IF FOUND THEN
    PERFORM live_events_notify();
  END IF;
  RETURN NULL;
END $fn$;

CREATE TRIGGER "live_events_messages_updated" AFTER UPDATE ON "messages"
  REFERENCING OLD TABLE AS old_messages NEW TABLE AS new_messages
  FOR EACH STATEMENT EXECUTE FUNCTION live_events_messages_updated();

-- Deleted for me: hides inserted (messages_hide_for_user, or any writer),
-- one event per dialog and hiding user.
CREATE FUNCTION "live_events_hides_inserted"() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO live_events (application_id, dialog_id, kind, user_id, message_ids)
  SELECT d.application_id, m.dialog_id, 'hidden', n.user_id, array_agg(n.message_id ORDER BY n.message_id)
    FROM new_hides n
    JOIN messages m ON m.id = n.message_id
    JOIN dialogs d ON d.id = m.dialog_id
   GROUP BY d.application_id, m.dialog_id, n.user_id
   ORDER BY m.dialog_id, n.user_id;
  IF FOUND THEN
    PERFORM live_events_notify();
  END IF;
  RETURN NULL;
END $fn$;

CREATE TRIGGER "live_events_hides_inserted" AFTER INSERT ON "message_hides"
  REFERENCING NEW TABLE AS new_hides
  FOR EACH STATEMENT EXECUTE FUNCTION live_events_hides_inserted();

-- A new message (not one written already deleted): one event per message.
CREATE FUNCTION "live_events_messages_inserted"() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO live_events (application_id, dialog_id, kind, user_id, message_ids)
  SELECT d.application_id, n.dialog_id, 'added', n.sender_id, ARRAY[n.id]
    FROM new_messages n
    JOIN dialogs d ON d.id = n.dialog_id
   WHERE n.deleted_at IS NULL
   ORDER BY n.created_at, n.id;
  IF FOUND THEN
    PERFORM live_events_notify();
  END IF;
  RETURN NULL;
END $fn$;

CREATE TRIGGER "live_events_messages_inserted" AFTER INSERT ON "messages"
  REFERENCING NEW TABLE AS new_messages
  FOR EACH STATEMENT EXECUTE FUNCTION live_events_messages_inserted();
