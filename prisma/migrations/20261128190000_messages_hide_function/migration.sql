-- Delete for me in one statement (src/db/statements/messages.ts, HIDE_FOR_USER).
--
-- A hide must see every other occupant's committed hide, and none in
-- progress, to know whether it is the last one (the text then goes). A
-- single SQL statement reads one snapshot, taken before it could wait for
-- the dialogs' locks, so the service ran three statements in a transaction
-- (the hide, taking the locks; the purge; the commit): four round trips.
-- In a PL/pgSQL function each statement takes a new snapshot, so the locks,
-- the hide and the purge run in one call, one round trip, with the same
-- guarantee: the hide and the purge read after the locks are held.
--
-- $1 application, $2 user, $3 ids (well-formed, distinct), $4 seconds the text
-- is retained (0: not kept). Returns the ids hidden now: visible to the user
-- (an occupant of the message's dialog, in the application, the message not
-- deleted for everyone) and not hidden by them before.
CREATE FUNCTION "messages_hide_for_user"(p_application integer, p_user integer, p_ids text[], p_retention integer)
  RETURNS text[] LANGUAGE plpgsql AS $fn$
DECLARE
  hidden text[];
BEGIN
  -- A lock per dialog of those messages, in key order (two hides cannot
  -- deadlock on them), held until the call's transaction ends: "hide" in the
  -- high half of the key, a hash of the dialog in the low half (two dialogs
  -- sharing a hash only wait for each other).
  PERFORM pg_advisory_xact_lock(k)
     FROM (SELECT DISTINCT (x'68696465'::bigint << 32) | (hashtext(m.dialog_id)::bigint & 4294967295) AS k
             FROM messages m
             JOIN dialogs d ON d.id = m.dialog_id AND d.application_id = p_application
             JOIN dialog_occupants o ON o.dialog_id = m.dialog_id AND o.user_id = p_user
            WHERE m.id = ANY(p_ids) AND m.deleted_at IS NULL
            ORDER BY k) keys;

  WITH inserted AS (
    INSERT INTO message_hides (message_id, user_id)
    SELECT m.id, p_user
      FROM messages m
      JOIN dialogs d ON d.id = m.dialog_id AND d.application_id = p_application
      JOIN dialog_occupants o ON o.dialog_id = m.dialog_id AND o.user_id = p_user
     WHERE m.id = ANY(p_ids) AND m.deleted_at IS NULL
    ON CONFLICT DO NOTHING
    RETURNING message_id
  )
  SELECT coalesce(array_agg(message_id), '{}') INTO hidden FROM inserted;

  IF cardinality(hidden) > 0 THEN
    -- Those every other occupant has hidden too lose their text, as with a
    -- delete for everyone (a copy kept aside with a retention).
    WITH complete AS (
      SELECT m.id, m.body
        FROM messages m
       WHERE m.id = ANY(hidden) AND m.body IS NOT NULL
         AND NOT EXISTS (
           SELECT 1 FROM dialog_occupants o
            WHERE o.dialog_id = m.dialog_id AND o.user_id <> p_user
              AND NOT EXISTS (SELECT 1 FROM message_hides x WHERE x.message_id = m.id AND x.user_id = o.user_id))
    ), purged AS (
      UPDATE messages m SET body = NULL
        FROM complete c
       WHERE m.id = c.id AND m.body IS NOT NULL
      RETURNING m.id, c.body
    )
    INSERT INTO retained_message_contents (message_id, body, expires_at)
    SELECT id, body, now() + make_interval(secs => p_retention) FROM purged WHERE p_retention > 0
    ON CONFLICT (message_id) DO NOTHING;
  END IF;

  RETURN hidden;
END
$fn$;
