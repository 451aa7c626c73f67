-- CreateTable
CREATE TABLE "address_book_matches" (
    "owner_id" INTEGER NOT NULL,
    "udid" VARCHAR(64) NOT NULL,
    "user_id" INTEGER NOT NULL,
    "phone" TEXT NOT NULL,

    CONSTRAINT "address_book_matches_pkey" PRIMARY KEY ("owner_id","udid","user_id")
);

-- CreateIndex
CREATE INDEX "address_book_matches_user_id_idx" ON "address_book_matches"("user_id");

-- CreateIndex
CREATE INDEX "contacts_phone_idx" ON "contacts"("phone");

-- AddForeignKey
ALTER TABLE "address_book_matches" ADD CONSTRAINT "address_book_matches_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "address_book_matches" ADD CONSTRAINT "address_book_matches_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Address-book matches are kept by triggers, not by the service's statements
-- (README: Decisions, "Address-book matches"). Triggers see every writer: the
-- service's uploads and user creation, Prisma's createMany in seeds and
-- tests, the admin CLI, a DBA's UPDATE of a phone. Each trigger is
-- statement-level over its transition tables, so a write of any size costs a
-- constant number of set-based statements (bulk imports of a million users
-- stay one join per batch), and runs inside the writing statement's
-- transaction: a reader sees the matches of the contacts it sees.
--
-- Invariant: (owner, udid, user, phone) is a row iff the book (owner, udid)
-- holds a contact whose phone equals user's phone, and both users belong to
-- one application. The phone is kept with the match so that the compact
-- answer (id and phone) is read from this table alone. Writers of contacts and writers of users' phones could each
-- miss the other's uncommitted rows; an advisory lock per application closes
-- that: contact writers take it shared (uploads to different books stay
-- parallel; one book's writers are already serialised by its own lock),
-- user writers exclusive. The trigger's statements after the lock take new
-- snapshots (READ COMMITTED, the service's isolation), so the writer that
-- gets the lock second sees the first one's committed rows.
--
-- How the statements are planned, both measured on 10,000-row writes:
-- - EXECUTE, not static SQL: PL/pgSQL plans a static statement once per
--   connection, with the size its transition table had then (an upload's
--   first UPDATE trigger sees none), and keeps that plan; EXECUTE plans each
--   time, with the real sizes. Planning costs well under a millisecond.
-- - Nested loops only (the functions' SET): transition tables have no
--   statistics, so the planner guesses joins on them large and would sort or
--   hash all of users (a merge join over 1,000,000 users per upload) where
--   probing the (application, phone) index once per row is what is wanted.
-- - The matches to remove are found first and then deleted by primary key
--   (OFFSET 0 keeps the planner from starting at the matches table instead:
--   a new table's statistics say it is empty, and walking a whole book per
--   removed contact cost seconds).
-- - Users with a phone are looked up in a fenced LATERAL subquery (OFFSET 0),
--   one probe of the (application, phone) index per row: as a plain join the
--   planner, misled by the same missing statistics, scanned the application's
--   every user (by another index on application_id) per contact.
-- - Changed rows are found with EXCEPT (hashed, linear), never by joining the
--   old and new transition tables: under nested loops that join is quadratic.

-- The lock key: "matc" in the high half (apart from Prisma's migration lock),
-- the application in the low half.
CREATE FUNCTION "address_book_matches_lock_key"(application_id integer) RETURNS bigint
  LANGUAGE sql IMMUTABLE AS $$ SELECT (x'6d617463'::bigint << 32) | application_id $$;

-- Contacts added: the users of the owner's application with that phone.
CREATE FUNCTION "address_book_matches_contacts_inserted"() RETURNS trigger LANGUAGE plpgsql
  SET enable_hashjoin = off SET enable_mergejoin = off AS $fn$
BEGIN
  EXECUTE $q$
    SELECT pg_advisory_xact_lock_shared(address_book_matches_lock_key(a.application_id))
      FROM (SELECT DISTINCT o.application_id FROM new_contacts n JOIN users o ON o.id = n.user_id ORDER BY 1) a $q$;
  EXECUTE $q$
    INSERT INTO address_book_matches (owner_id, udid, user_id, phone)
    SELECT n.user_id, n.udid, u.id, n.phone
      FROM new_contacts n
      JOIN users o ON o.id = n.user_id
      CROSS JOIN LATERAL (SELECT u.id FROM users u WHERE u.application_id = o.application_id AND u.phone = n.phone OFFSET 0) u
    ON CONFLICT DO NOTHING $q$;
  RETURN NULL;
END $fn$;

-- Contacts removed: their matches, unless the book holds the phone again
-- (a statement that removes and re-adds a phone, in either trigger order).
-- An owner being removed needs nothing here: the foreign key cascades.
CREATE FUNCTION "address_book_matches_contacts_deleted"() RETURNS trigger LANGUAGE plpgsql
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
              CROSS JOIN LATERAL (SELECT u.id FROM users u WHERE u.application_id = o.application_id AND u.phone = d.phone OFFSET 0) u
             WHERE NOT EXISTS (SELECT 1 FROM contacts c WHERE c.user_id = d.user_id AND c.udid = d.udid AND c.phone = d.phone)
            OFFSET 0) x
     WHERE m.owner_id = x.user_id AND m.udid = x.udid AND m.user_id = x.id $q$;
  RETURN NULL;
END $fn$;

-- Contacts updated: the service only renames (its upserts), which changes no
-- match; this finds that with one EXCEPT over the book, phone pairs. A
-- contact moved to another phone or book counts as removed and added.
CREATE FUNCTION "address_book_matches_contacts_updated"() RETURNS trigger LANGUAGE plpgsql
  SET enable_hashjoin = off SET enable_mergejoin = off AS $fn$
DECLARE
  moved boolean;
BEGIN
  EXECUTE $q$
    SELECT EXISTS (SELECT user_id, udid, phone FROM old_contacts EXCEPT ALL SELECT user_id, udid, phone FROM new_contacts) $q$
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
              FROM (SELECT user_id, udid, phone FROM old_contacts EXCEPT SELECT user_id, udid, phone FROM new_contacts) d
              JOIN users o ON o.id = d.user_id
              CROSS JOIN LATERAL (SELECT u.id FROM users u WHERE u.application_id = o.application_id AND u.phone = d.phone OFFSET 0) u
             WHERE NOT EXISTS (SELECT 1 FROM contacts c WHERE c.user_id = d.user_id AND c.udid = d.udid AND c.phone = d.phone)
            OFFSET 0) x
     WHERE m.owner_id = x.user_id AND m.udid = x.udid AND m.user_id = x.id $q$;
  EXECUTE $q$
    INSERT INTO address_book_matches (owner_id, udid, user_id, phone)
    SELECT n.user_id, n.udid, u.id, n.phone
      FROM (SELECT user_id, udid, phone FROM new_contacts EXCEPT SELECT user_id, udid, phone FROM old_contacts) n
      JOIN users o ON o.id = n.user_id
      CROSS JOIN LATERAL (SELECT u.id FROM users u WHERE u.application_id = o.application_id AND u.phone = n.phone OFFSET 0) u
    ON CONFLICT DO NOTHING $q$;
  RETURN NULL;
END $fn$;

-- Users created: the books of their application holding their phone. (A new
-- user has no contacts yet: contacts reference an existing user.)
CREATE FUNCTION "address_book_matches_users_inserted"() RETURNS trigger LANGUAGE plpgsql
  SET enable_hashjoin = off SET enable_mergejoin = off AS $fn$
BEGIN
  EXECUTE $q$
    SELECT pg_advisory_xact_lock(address_book_matches_lock_key(a.application_id))
      FROM (SELECT DISTINCT application_id FROM new_users WHERE phone IS NOT NULL ORDER BY 1) a $q$;
  EXECUTE $q$
    INSERT INTO address_book_matches (owner_id, udid, user_id, phone)
    SELECT c.user_id, c.udid, n.id, n.phone
      FROM new_users n
      JOIN contacts c ON c.phone = n.phone
      JOIN users o ON o.id = c.user_id AND o.application_id = n.application_id
    ON CONFLICT DO NOTHING $q$;
  RETURN NULL;
END $fn$;

-- Users updated. Fires on every UPDATE of users (a trigger with transition
-- tables cannot name columns), the sessions' last_request_at writes included:
-- those change no phone, which one EXCEPT over the updated rows tells. A
-- user whose phone changed loses every match to them and gains those of the
-- new phone; a user moved to another application (nothing does that today)
-- also has their own books matched again.
CREATE FUNCTION "address_book_matches_users_updated"() RETURNS trigger LANGUAGE plpgsql
  SET enable_hashjoin = off SET enable_mergejoin = off AS $fn$
DECLARE
  changed boolean;
BEGIN
  EXECUTE $q$
    SELECT EXISTS (SELECT id, phone, application_id FROM old_users EXCEPT SELECT id, phone, application_id FROM new_users) $q$
    INTO changed;
  IF NOT changed THEN
    RETURN NULL;
  END IF;
  EXECUTE $q$
    SELECT pg_advisory_xact_lock(address_book_matches_lock_key(a.application_id))
      FROM (SELECT application_id FROM (SELECT id, phone, application_id FROM old_users EXCEPT SELECT id, phone, application_id FROM new_users) d
            UNION
            SELECT application_id FROM (SELECT id, phone, application_id FROM new_users EXCEPT SELECT id, phone, application_id FROM old_users) n
            ORDER BY 1) a $q$;
  EXECUTE $q$
    DELETE FROM address_book_matches m
     USING (SELECT id, phone, application_id FROM old_users EXCEPT SELECT id, phone, application_id FROM new_users) d
     WHERE m.user_id = d.id $q$;
  EXECUTE $q$
    DELETE FROM address_book_matches m
     USING (SELECT id, application_id FROM old_users EXCEPT SELECT id, application_id FROM new_users) d
     WHERE m.owner_id = d.id $q$;
  EXECUTE $q$
    INSERT INTO address_book_matches (owner_id, udid, user_id, phone)
    SELECT c.user_id, c.udid, n.id, n.phone
      FROM (SELECT id, phone, application_id FROM new_users EXCEPT SELECT id, phone, application_id FROM old_users) n
      JOIN contacts c ON c.phone = n.phone
      JOIN users o ON o.id = c.user_id AND o.application_id = n.application_id
    UNION
    SELECT c.user_id, c.udid, u.id, c.phone
      FROM (SELECT id, application_id FROM new_users EXCEPT SELECT id, application_id FROM old_users) n
      JOIN contacts c ON c.user_id = n.id
      CROSS JOIN LATERAL (SELECT u.id FROM users u WHERE u.application_id = n.application_id AND u.phone = c.phone OFFSET 0) u
    ON CONFLICT DO NOTHING $q$;
  RETURN NULL;
END $fn$;

CREATE TRIGGER "address_book_matches_contacts_inserted" AFTER INSERT ON "contacts"
  REFERENCING NEW TABLE AS new_contacts FOR EACH STATEMENT EXECUTE FUNCTION address_book_matches_contacts_inserted();
CREATE TRIGGER "address_book_matches_contacts_deleted" AFTER DELETE ON "contacts"
  REFERENCING OLD TABLE AS old_contacts FOR EACH STATEMENT EXECUTE FUNCTION address_book_matches_contacts_deleted();
CREATE TRIGGER "address_book_matches_contacts_updated" AFTER UPDATE ON "contacts"
  REFERENCING OLD TABLE AS old_contacts NEW TABLE AS new_contacts FOR EACH STATEMENT EXECUTE FUNCTION address_book_matches_contacts_updated();
CREATE TRIGGER "address_book_matches_users_inserted" AFTER INSERT ON "users"
  REFERENCING NEW TABLE AS new_users FOR EACH STATEMENT EXECUTE FUNCTION address_book_matches_users_inserted();
CREATE TRIGGER "address_book_matches_users_updated" AFTER UPDATE ON "users"
  REFERENCING OLD TABLE AS old_users NEW TABLE AS new_users FOR EACH STATEMENT EXECUTE FUNCTION address_book_matches_users_updated();

-- The matches of the books that exist already.
INSERT INTO "address_book_matches" ("owner_id", "udid", "user_id", "phone")
SELECT c.user_id, c.udid, u.id, c.phone
  FROM contacts c
  JOIN users o ON o.id = c.user_id
  JOIN users u ON u.application_id = o.application_id AND u.phone = c.phone;
