-- Users added or changed: the contacts holding their phone, then each
-- contact's owner checked by primary key (in the new user's application).
--
-- Written as a join, the owner check let the planner start from the other
-- side: with statistics that still said an application had a handful of
-- users (a new application importing users in batches), it scanned every
-- user of the application per new user and probed contacts for each
-- (the fifth batch of 1,000 into a new application: 5,000,000 index tuples,
-- 1.6 s, growing with each batch; test/db/trigger-plans.test.ts). A second
-- fenced LATERAL that refers to the contact fixes the order: contacts by
-- phone or key first, then one primary-key probe per contact found.

CREATE OR REPLACE FUNCTION "address_book_matches_users_inserted"() RETURNS trigger LANGUAGE plpgsql
  SET enable_hashjoin = off SET enable_mergejoin = off AS $fn$
BEGIN
  EXECUTE $q$
    SELECT pg_advisory_xact_lock(address_book_matches_lock_key(a.application_id))
      FROM (SELECT DISTINCT application_id FROM new_users WHERE phone IS NOT NULL ORDER BY 1) a $q$;
  EXECUTE $q$
    INSERT INTO address_book_matches (owner_id, udid, user_id, phone)
    SELECT c.user_id, c.udid, n.id, n.phone
      FROM new_users n
      CROSS JOIN LATERAL (SELECT c.user_id, c.udid FROM contacts c WHERE c.phone = n.phone OR c.phone_key = n.phone_key OFFSET 0) c
      CROSS JOIN LATERAL (SELECT 1 FROM users o WHERE o.id = c.user_id AND o.application_id = n.application_id OFFSET 0) o
     WHERE n.phone IS NOT NULL
    ON CONFLICT DO NOTHING $q$;
  RETURN NULL;
END $fn$;

CREATE OR REPLACE FUNCTION "address_book_matches_users_updated"() RETURNS trigger LANGUAGE plpgsql
  SET enable_hashjoin = off SET enable_mergejoin = off AS $fn$
DECLARE
  changed boolean;
BEGIN
  EXECUTE $q$
    SELECT EXISTS (SELECT id, phone, phone_key, application_id FROM old_users EXCEPT SELECT id, phone, phone_key, application_id FROM new_users) $q$
    INTO changed;
  IF NOT changed THEN
    RETURN NULL;
  END IF;
  EXECUTE $q$
    SELECT pg_advisory_xact_lock(address_book_matches_lock_key(a.application_id))
      FROM (SELECT application_id FROM (SELECT id, phone, phone_key, application_id FROM old_users EXCEPT SELECT id, phone, phone_key, application_id FROM new_users) d
            UNION
            SELECT application_id FROM (SELECT id, phone, phone_key, application_id FROM new_users EXCEPT SELECT id, phone, phone_key, application_id FROM old_users) n
            ORDER BY 1) a $q$;
  EXECUTE $q$
    DELETE FROM address_book_matches m
     USING (SELECT id, phone, phone_key, application_id FROM old_users EXCEPT SELECT id, phone, phone_key, application_id FROM new_users) d
     WHERE m.user_id = d.id $q$;
  EXECUTE $q$
    DELETE FROM address_book_matches m
     USING (SELECT id, application_id FROM old_users EXCEPT SELECT id, application_id FROM new_users) d
     WHERE m.owner_id = d.id $q$;
  EXECUTE $q$
    INSERT INTO address_book_matches (owner_id, udid, user_id, phone)
    SELECT c.user_id, c.udid, n.id, n.phone
      FROM (SELECT id, phone, phone_key, application_id FROM new_users EXCEPT SELECT id, phone, phone_key, application_id FROM old_users) n
      CROSS JOIN LATERAL (SELECT c.user_id, c.udid FROM contacts c WHERE c.phone = n.phone OR c.phone_key = n.phone_key OFFSET 0) c
      CROSS JOIN LATERAL (SELECT 1 FROM users o WHERE o.id = c.user_id AND o.application_id = n.application_id OFFSET 0) o
     WHERE n.phone IS NOT NULL
    UNION
    SELECT c.user_id, c.udid, u.id, u.phone
      FROM (SELECT id, application_id FROM new_users EXCEPT SELECT id, application_id FROM old_users) n
      JOIN contacts c ON c.user_id = n.id
      CROSS JOIN LATERAL (SELECT u.id, u.phone FROM users u
                           WHERE u.application_id = n.application_id AND (u.phone = c.phone OR u.phone_key = c.phone_key) OFFSET 0) u
    ON CONFLICT DO NOTHING $q$;
  RETURN NULL;
END $fn$;
