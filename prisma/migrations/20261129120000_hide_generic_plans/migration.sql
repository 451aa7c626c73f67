-- Delete for me: the hide function's statements run on generic plans (issue
-- 34). PL/pgSQL prepares each statement of a function once per connection,
-- and PostgreSQL's plan cache then chooses, call by call, between a custom
-- plan (planned again for the call's values) and the generic one. For
-- `m.id = ANY(p_ids)` it costs the generic plan for ten ids, dearer than a
-- custom plan for one, so it planned every statement again on every call:
-- measured with pgbench on the benchmark's data, hiding one id through the
-- function took 1.06 ms where the same statements prepared by a client took
-- 0.48 (1,726 calls a second against the bare statement's 4,142 on four
-- connections): the benchmark's whole "delete 1 id for me" gap.
--
-- A generic plan is made once per connection from the statistics of that
-- moment, and kept until they change. Made while message_hides was empty
-- (a new deployment; the benchmark's first deletes), the purge's check read
-- it by a sequential scan, then 100,000 hides later took 520 ms a call. So
-- every statement here has one plan whatever the statistics: the lock and
-- the purge read messages by their ids, alone in their FROM, and reach
-- dialogs, occupants and hides through correlated subqueries on their keys
-- (`OFFSET 0` keeps them subqueries, not joins whose order and method the
-- statistics would pick); the function runs with sequential scans disabled,
-- so that a table that was empty is still read through its key. The ids are
-- at most 1,000 (the request limit): a probe per id is the right plan at any
-- size. The hide inserts the ids the lock returned, which are exactly what
-- the user may hide (the rows are locked until commit), instead of finding
-- them again. test/db/hide-plans.test.ts makes the plans on a small
-- database and checks their shape.
--
-- pgbench on the benchmark's data, four connections, against the bare
-- statement (which hides without locks, sequential scans off as well): one
-- id 3,728–4,042 calls a second against 3,729–4,474; 100 ids 612–637 against
-- 639–675; 1,000 ids 84–86 against 87–88. The settings hold for the call
-- only, the triggers its statements fire included. The rules are those of
-- hide_row_locks.
CREATE OR REPLACE FUNCTION "messages_hide_for_user"(p_application integer, p_user integer, p_ids text[], p_retention integer)
  RETURNS text[] LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan
  SET enable_seqscan = off
AS $fn$
DECLARE
  visible text[];
  hidden text[];
BEGIN
  -- The rows of the messages the user may hide locked, in id order (two
  -- hides cannot deadlock on them; a delete for everyone's UPDATE reaches
  -- them through the id index in that order too), until the call's
  -- transaction ends: two occupants hiding one message at once take turns,
  -- and the second's purge, a new snapshot, sees the first's hide. FOR NO KEY
  -- UPDATE: the foreign-key checks of hides inserted meanwhile (FOR KEY
  -- SHARE) pass. What it locked is what the user may hide: a delete for
  -- everyone of those rows waits for this transaction, and a row deleted
  -- before the lock is read again as committed (deleted_at set: left out).
  SELECT coalesce(array_agg(id), '{}') INTO visible
    FROM (
      SELECT m.id
        FROM messages m
       WHERE m.id = ANY(p_ids) AND m.deleted_at IS NULL
         AND EXISTS (
           SELECT 1 FROM dialogs d
            WHERE d.id = m.dialog_id AND d.application_id = p_application
              AND EXISTS (SELECT 1 FROM dialog_occupants o WHERE o.dialog_id = d.id AND o.user_id = p_user OFFSET 0)
           OFFSET 0)
       ORDER BY m.id
         FOR NO KEY UPDATE OF m
    ) locked;

  WITH inserted AS (
    INSERT INTO message_hides (message_id, user_id)
    SELECT id, p_user FROM unnest(visible) AS v(id)
    ON CONFLICT DO NOTHING
    RETURNING message_id
  )
  SELECT coalesce(array_agg(message_id), '{}') INTO hidden FROM inserted;

  IF cardinality(hidden) > 0 THEN
    -- Those every other occupant has hidden too lose their text, as with a
    -- delete for everyone (a copy kept aside with a retention).
    WITH complete AS MATERIALIZED (
      SELECT m.id, m.body
        FROM messages m
       WHERE m.id = ANY(hidden) AND m.body IS NOT NULL
         AND NOT EXISTS (
           SELECT 1 FROM dialog_occupants o
            WHERE o.dialog_id = m.dialog_id AND o.user_id <> p_user
              AND NOT EXISTS (SELECT 1 FROM message_hides x WHERE x.message_id = m.id AND x.user_id = o.user_id OFFSET 0)
           OFFSET 0)
    ), purged AS (
      UPDATE messages m SET body = NULL
       WHERE m.id = ANY(ARRAY(SELECT id FROM complete)) AND m.body IS NOT NULL
      RETURNING m.id
    )
    INSERT INTO retained_message_contents (message_id, body, expires_at)
    SELECT c.id, c.body, now() + make_interval(secs => p_retention)
      FROM complete c
     WHERE p_retention > 0 AND c.id IN (SELECT id FROM purged)
    ON CONFLICT (message_id) DO NOTHING;
  END IF;

  RETURN hidden;
END
$fn$;
