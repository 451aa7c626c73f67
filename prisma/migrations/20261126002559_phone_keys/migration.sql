-- AlterTable
ALTER TABLE "applications" ADD COLUMN     "phone_region" VARCHAR(2);

-- AlterTable
ALTER TABLE "users" ADD COLUMN     "phone_key" TEXT;

-- AlterTable
ALTER TABLE "contacts" ADD COLUMN     "phone_key" TEXT;

-- CreateIndex
CREATE INDEX "users_application_id_phone_key_idx" ON "users"("application_id", "phone_key");

-- CreateIndex
CREATE INDEX "contacts_phone_key_user_id_udid_idx" ON "contacts"("phone_key", "user_id", "udid");

-- Phones match by the number they denote (README: Decisions, "Phone numbers"):
-- a contact matches a user when their phones are equal as written (as before,
-- so nothing that matched stops matching) or their keys are equal. Keys are
-- computed by the service when it writes a phone (src/services/phones.ts);
-- rows written without one (by Prisma in tests, a DBA's INSERT) have none and
-- match as written only, until `phones:normalise`. The functions below are
-- those of the migration address_book_matches with that condition, planned
-- the same way (its comments hold); a match keeps the user's phone as stored,
-- which registered users answer in the compact form.
--
-- Each probe is now an OR of two index conditions (a BitmapOr of the
-- (application, phone) and (application, phone_key) indexes of users, or the
-- (phone) and (phone_key, user, udid) indexes of contacts).

-- A phone changed by a writer that left the key as it was (an UPDATE by hand):
-- the key no longer says what the phone is, and is dropped. The service's own
-- writes never change a phone without its key, so this never fires for them.
CREATE FUNCTION "phone_key_dropped"() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  NEW.phone_key := NULL;
  RETURN NEW;
END $fn$;

CREATE TRIGGER "users_phone_key_dropped" BEFORE UPDATE OF "phone" ON "users" FOR EACH ROW
  WHEN (NEW.phone IS DISTINCT FROM OLD.phone AND NEW.phone_key IS NOT DISTINCT FROM OLD.phone_key)
  EXECUTE FUNCTION phone_key_dropped();
CREATE TRIGGER "contacts_phone_key_dropped" BEFORE UPDATE OF "phone" ON "contacts" FOR EACH ROW
  WHEN (NEW.phone IS DISTINCT FROM OLD.phone AND NEW.phone_key IS NOT DISTINCT FROM OLD.phone_key)
  EXECUTE FUNCTION phone_key_dropped();

CREATE OR REPLACE FUNCTION "address_book_matches_contacts_inserted"() RETURNS trigger LANGUAGE plpgsql
  SET enable_hashjoin = off SET enable_mergejoin = off AS $fn$
BEGIN
  EXECUTE $q$
    SELECT pg_advisory_xact_lock_shared(address_book_matches_lock_key(a.application_id))
      FROM (SELECT DISTINCT o.application_id FROM new_contacts n JOIN users o ON o.id = n.user_id ORDER BY 1) a $q$;
  EXECUTE $q$
    INSERT INTO address_book_matches (owner_id, udid, user_id, phone)
    SELECT n.user_id, n.udid, u.id, u.phone
      FROM new_contacts n
      JOIN users o ON o.id = n.user_id
      CROSS JOIN LATERAL (SELECT u.id, u.phone FROM users u
                           WHERE u.application_id = o.application_id AND (u.phone = n.phone OR u.phone_key = n.phone_key) OFFSET 0) u
    ON CONFLICT DO NOTHING $q$;
  RETURN NULL;
END $fn$;

-- Contacts removed: the matches of the users they matched, unless the book
-- still holds a contact matching that user (the same phone, or another way of
-- writing the number).
CREATE OR REPLACE FUNCTION "address_book_matches_contacts_deleted"() RETURNS trigger LANGUAGE plpgsql
  SET enable_hashjoin = off SET enable_mergejoin = off AS $fn$
BEGIN
  EXECUTE $q$
    SELECT pg_advisory_xact_lock_shared(address_book_matches_lock_key(a.application_id))
      FROM (SELECT DISTINCT o.application_id FROM old_contacts d JOIN users o ON o.id = d.user_id ORDER BY 1) a $q$;
  EXECUTE $q$
    DELETE FROM address_book_matches m
     USING (SELECT d.user_id, d.udid, u.id
              FROM old_contacts d
              JOIN users o ON o.id = d.user_id
              CROSS JOIN LATERAL (SELECT u.id, u.phone, u.phone_key FROM users u
                                   WHERE u.application_id = o.application_id AND (u.phone = d.phone OR u.phone_key = d.phone_key) OFFSET 0) u
             WHERE NOT EXISTS (SELECT 1 FROM contacts c
                                WHERE c.user_id = d.user_id AND c.udid = d.udid AND (c.phone = u.phone OR c.phone_key = u.phone_key))
            OFFSET 0) x
     WHERE m.owner_id = x.user_id AND m.udid = x.udid AND m.user_id = x.id $q$;
  RETURN NULL;
END $fn$;

CREATE OR REPLACE FUNCTION "address_book_matches_contacts_updated"() RETURNS trigger LANGUAGE plpgsql
  SET enable_hashjoin = off SET enable_mergejoin = off AS $fn$
DECLARE
  moved boolean;
BEGIN
  EXECUTE $q$
    SELECT EXISTS (SELECT user_id, udid, phone, phone_key FROM old_contacts EXCEPT ALL SELECT user_id, udid, phone, phone_key FROM new_contacts) $q$
    INTO moved;
  IF NOT moved THEN
    RETURN NULL;
  END IF;
  EXECUTE $q$
    SELECT pg_advisory_xact_lock_shared(address_book_matches_lock_key(a.application_id))
      FROM (SELECT DISTINCT o.application_id
              FROM (SELECT user_id FROM old_contacts UNION SELECT user_id FROM new_contacts) c
              JOIN users o ON o.id = c.user_id ORDER BY 1) a $q$;
  EXECUTE $q$
    DELETE FROM address_book_matches m
     USING (SELECT d.user_id, d.udid, u.id
              FROM (SELECT user_id, udid, phone, phone_key FROM old_contacts EXCEPT SELECT user_id, udid, phone, phone_key FROM new_contacts) d
              JOIN users o ON o.id = d.user_id
              CROSS JOIN LATERAL (SELECT u.id, u.phone, u.phone_key FROM users u
                                   WHERE u.application_id = o.application_id AND (u.phone = d.phone OR u.phone_key = d.phone_key) OFFSET 0) u
             WHERE NOT EXISTS (SELECT 1 FROM contacts c
                                WHERE c.user_id = d.user_id AND c.udid = d.udid AND (c.phone = u.phone OR c.phone_key = u.phone_key))
            OFFSET 0) x
     WHERE m.owner_id = x.user_id AND m.udid = x.udid AND m.user_id = x.id $q$;
  EXECUTE $q$
    INSERT INTO address_book_matches (owner_id, udid, user_id, phone)
    SELECT n.user_id, n.udid, u.id, u.phone
      FROM (SELECT user_id, udid, phone, phone_key FROM new_contacts EXCEPT SELECT user_id, udid, phone, phone_key FROM old_contacts) n
      JOIN users o ON o.id = n.user_id
      CROSS JOIN LATERAL (SELECT u.id, u.phone FROM users u
                           WHERE u.application_id = o.application_id AND (u.phone = n.phone OR u.phone_key = n.phone_key) OFFSET 0) u
    ON CONFLICT DO NOTHING $q$;
  RETURN NULL;
END $fn$;

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
      JOIN users o ON o.id = c.user_id AND o.application_id = n.application_id
     WHERE n.phone IS NOT NULL
    ON CONFLICT DO NOTHING $q$;
  RETURN NULL;
END $fn$;

-- Users updated: as before, a key changed (phones:normalise, app:set-region)
-- counts as a phone changed.
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
      JOIN users o ON o.id = c.user_id AND o.application_id = n.application_id
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
