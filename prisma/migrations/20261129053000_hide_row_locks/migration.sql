-- Delete for me: the hide's locks on the messages' rows, not on their
-- dialogs (issue 34). The dialog locks (20261128190000) made every hide in a
-- dialog wait for the one before it to commit, fsync included: four
-- occupants hiding different messages of one group took turns (delete 1 for
-- me at 0.44 of the bare statement's throughput, 1,000 at 0.20). What the
-- locks are for is two hides of the same message at once, each missing the
-- other's and leaving a text every occupant hid (test/security/retention.test.ts
-- fails without them): a row lock per message gives that, and lets hides of
-- different messages run side by side. Row locks live in the rows, not in
-- the shared lock table, so 1,000 ids take no more of it than one.
CREATE OR REPLACE FUNCTION "messages_hide_for_user"(p_application integer, p_user integer, p_ids text[], p_retention integer)
  RETURNS text[] LANGUAGE plpgsql AS $fn$
DECLARE
  hidden text[];
BEGIN
  -- The rows of those messages locked, in id order (two hides cannot
  -- deadlock on them; a delete for everyone's UPDATE reaches them through the
  -- id index in that order too), until the call's transaction ends: two
  -- occupants hiding one message at once take turns, and the second's hide
  -- and purge, each a new snapshot, see the first's. FOR NO KEY UPDATE: the
  -- foreign-key checks of hides inserted meanwhile (FOR KEY SHARE) pass.
  PERFORM 1
     FROM messages m
     JOIN dialogs d ON d.id = m.dialog_id AND d.application_id = p_application
     JOIN dialog_occupants o ON o.dialog_id = m.dialog_id AND o.user_id = p_user
    WHERE m.id = ANY(p_ids) AND m.deleted_at IS NULL
    ORDER BY m.id
      FOR NO KEY UPDATE OF m;

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
