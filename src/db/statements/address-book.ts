// Address books: uploads, reading a book back, and the registered users they match.
import { computed, field, fields, statement } from '../sql';
import { USER_COLUMNS, USER_RECORD } from './users';

// Registered users are read from address_book_matches, which triggers keep
// up to date as contacts and users change (prisma/migrations/…_address_book_matches):
// a range scan of the book's matches in its primary key's order (owner, udid,
// user), each user then fetched by primary key. Probing users by phone per
// contact instead cost 60–110 ms for 10,000 contacts against 1,000,000 users.
// The application is checked again on the user row: the triggers only match
// users of the owner's application, and this keeps a caller to their own.
// The ids go through an array, not a join: the planner then probes users'
// primary key once per match (in id order, no sort) instead of hash-joining a
// sequential scan of every user, which it preferred for a book matching 5,000
// of 300,000 users (measured, the 5,000 full records read by pg included:
// 180 ms p50 as a join, 47 ms through the array; the old per-contact probe 78 ms).

export const REGISTERED_USERS = statement({
  name: 'address_book.registered_users',
  params: ['int4', 'int4', 'text'],
  columns: USER_RECORD,
  text: `SELECT ${USER_COLUMNS}
           FROM users u
          WHERE u.id = ANY(ARRAY(SELECT m.user_id FROM address_book_matches m WHERE m.owner_id = $2 AND m.udid = $3))
            AND u.application_id = $1
          ORDER BY u.id`,
});

/**
 * The compact form of the same users (id and the phone that matched, the
 * user's own): the book's matches alone, one range scan of their primary key
 * in user id order. No users row is read: the triggers only match users of
 * the owner's application and rewrite a match when a user's phone changes.
 */
export const REGISTERED_USER_PHONES = statement({
  name: 'address_book.registered_user_phones',
  params: ['int4', 'text'],
  columns: { id: field('AddressBookMatch', 'userId'), phone: field('AddressBookMatch', 'phone') },
  text: `SELECT m.user_id AS id, m.phone
           FROM address_book_matches m
          WHERE m.owner_id = $1 AND m.udid = $2
          ORDER BY m.user_id`,
});

/**
 * How big a book is: the users it matches and the contacts it holds, each an
 * index-only count of one key range (the matches' primary key, the contacts'
 * unique key). What a document's cost limit charges registeredUsers and
 * addressBook (src/graphql/cost.ts).
 */
export const BOOK_SIZE = statement({
  name: 'address_book.book_size',
  params: ['int4', 'text'],
  columns: { registeredUsers: computed('int4'), contacts: computed('int4') },
  text: `SELECT (SELECT count(*) FROM address_book_matches m WHERE m.owner_id = $1 AND m.udid = $2)::int AS "registeredUsers",
                (SELECT count(*) FROM contacts c WHERE c.user_id = $1 AND c.udid = $2)::int AS contacts`,
});

/** One page of registered users: those after user id $4 (0: from the start), at most $5. */
export const REGISTERED_USERS_PAGE = statement({
  name: 'address_book.registered_users_page',
  params: ['int4', 'int4', 'text', 'int4', 'int4'],
  columns: USER_RECORD,
  text: `SELECT ${USER_COLUMNS}
           FROM users u
          WHERE u.id = ANY(ARRAY(SELECT m.user_id FROM address_book_matches m
                                  WHERE m.owner_id = $2 AND m.udid = $3 AND m.user_id > $4
                                  ORDER BY m.user_id LIMIT $5::int))
            AND u.application_id = $1
          ORDER BY u.id`,
});

/**
 * The page before user id $4 (null: from the end), backward: the $5 matched
 * users with the highest ids below it, still answered by id ascending.
 */
export const REGISTERED_USERS_PAGE_BACK = statement({
  name: 'address_book.registered_users_page_back',
  params: ['int4', 'int4', 'text', 'int4', 'int4'],
  columns: USER_RECORD,
  text: `SELECT ${USER_COLUMNS}
           FROM users u
          WHERE u.id = ANY(ARRAY(SELECT m.user_id FROM address_book_matches m
                                  WHERE m.owner_id = $2 AND m.udid = $3 AND ($4::int IS NULL OR m.user_id < $4::int)
                                  ORDER BY m.user_id DESC LIMIT $5::int))
            AND u.application_id = $1
          ORDER BY u.id`,
});

/**
 * Serialises the writers of one book (user, udid) until their transaction
 * ends, and takes the application's ($3) matches lock shared: the region the
 * upload's phone keys are computed in (phones.region, read next) cannot change
 * until it commits (src/db/statements/phones.ts).
 */
export const LOCK_BOOK = statement({
  name: 'address_book.lock_book',
  params: ['int4', 'text', 'int4'],
  columns: { locked: computed('void'), application: computed('void') },
  text: `SELECT pg_advisory_xact_lock($1::int, hashtext($2::text)) AS locked,
                pg_advisory_xact_lock_shared(address_book_matches_lock_key($3::int)) AS application`,
});

/**
 * A book's contacts in upload order, at most $3 (ADDRESS_BOOK_MAX_CONTACTS):
 * a book stored before the cap existed is read up to it, never whole.
 */
export const CONTACTS = statement({
  name: 'address_book.contacts',
  params: ['int4', 'text', 'int4'],
  columns: fields('Contact', ['name', 'phone']),
  text: 'SELECT name, phone FROM contacts WHERE user_id = $1 AND udid = $2 ORDER BY id LIMIT $3::int4',
});

/**
 * Serialises the uploads of one user that may add a device book (any udid
 * but the global book's), so that two new books racing each other cannot
 * both pass ADDRESS_BOOK_MAX_DEVICE_BOOKS. Taken after LOCK_BOOK, always in
 * that order. The second key is no udid's hash by construction of nothing:
 * a udid hashing alike only waits a little longer.
 */
export const LOCK_DEVICE_BOOKS = statement({
  name: 'address_book.lock_device_books',
  params: ['int4'],
  columns: { locked: computed('void') },
  text: `SELECT pg_advisory_xact_lock($1::int, hashtext(' device books')) AS locked`,
});

/** How many of the phone keys $2 no book of user $1 holds yet: the numbers an upload adds to what the user has checked. */
export const NEW_PHONES = statement({
  name: 'address_book.new_phones',
  params: ['int4', '_text'],
  columns: { phones: computed('int4') },
  text: `SELECT count(DISTINCT k)::int AS phones
           FROM unnest($2::text[]) AS k
          WHERE NOT EXISTS (SELECT 1 FROM contacts c WHERE c.phone_key = k AND c.user_id = $1)`,
});

/**
 * After an upload, in its transaction: the book's contacts, and the user's
 * device books (distinct udids but the global book's; only counted when $3).
 */
export const BOOK_LIMITS = statement({
  name: 'address_book.book_limits',
  params: ['int4', 'text', 'bool'],
  columns: { contacts: computed('int4'), deviceBooks: computed('int4') },
  text: `SELECT (SELECT count(*) FROM contacts c WHERE c.user_id = $1 AND c.udid = $2)::int AS contacts,
                CASE WHEN $3::boolean
                     THEN (SELECT count(*) FROM (SELECT DISTINCT c.udid FROM contacts c WHERE c.user_id = $1 AND c.udid <> '') d)::int
                     ELSE 0 END AS "deviceBooks"`,
});

/**
 * $3/$4/$7: the contacts to keep (phone as given, name, the phone's key);
 * $6: the phones to destroy; $5 (force): also remove every contact not in $3.
 * A phone already in the book keeps its key (keys change with the region:
 * phones:normalise).
 */
export const UPLOAD = statement({
  name: 'address_book.upload',
  params: ['int4', 'text', '_text', '_text', 'bool', '_text', '_text'],
  columns: { created: computed('int4'), updated: computed('int4'), deleted: computed('int4') },
  text: `WITH input AS (
           SELECT * FROM unnest($3::text[], $4::text[], $7::text[]) AS t(phone, name, phone_key)
         ), removed AS (
           DELETE FROM contacts c
            WHERE c.user_id = $1 AND c.udid = $2
              AND (c.phone = ANY($6::text[])
                   -- NOT IN, not NOT EXISTS over the CTE: a hashed subplan, where NOT
                   -- EXISTS rescanned the input per contact (10,000 × 10,000: seconds).
                   -- Phones are never null here (validated), so NOT IN's null rule is moot.
                   OR ($5::boolean AND c.phone NOT IN (SELECT i.phone FROM input i)))
           RETURNING 1
         ), upserted AS (
           INSERT INTO contacts (user_id, udid, phone, name, phone_key)
           SELECT $1, $2, phone, name, phone_key FROM input
           ON CONFLICT (user_id, udid, phone) DO UPDATE
              SET name = EXCLUDED.name, updated_at = now()
            WHERE contacts.name IS DISTINCT FROM EXCLUDED.name
           RETURNING (xmax = 0) AS inserted
         )
         SELECT (SELECT count(*) FROM upserted WHERE inserted)::int AS created,
                (SELECT count(*) FROM upserted WHERE NOT inserted)::int AS updated,
                (SELECT count(*) FROM removed)::int AS deleted`,
});
