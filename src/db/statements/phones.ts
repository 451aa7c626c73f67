// Phone keys (src/services/phones.ts): the region they are computed in, and
// recomputing them for stored phones (phones:normalise, app:set-region).
import { computed, field, statement } from '../sql';

/**
 * Phone keys are computed in the region the application has when they are
 * written. Writers of phones take the application's matches lock (the one the
 * triggers of address_book_matches take) before they read the region, shared
 * (uploads) or exclusive (users, and changes of region and keys): a change of
 * region then waits for the writes that read the old one, and the writes after
 * it read the new one, so no key of an old region is left behind.
 */
export const LOCK_APPLICATION_PHONES = statement({
  name: 'phones.lock_application',
  params: ['int4'],
  columns: { locked: computed('void') },
  text: 'SELECT pg_advisory_xact_lock(address_book_matches_lock_key($1::int)) AS locked',
});

/** The application's region (after the lock: a statement of its own, so that its snapshot is taken after the wait). */
export const REGION = statement({
  name: 'phones.region',
  params: ['int4'],
  columns: { phoneRegion: field('Application', 'phoneRegion') },
  text: 'SELECT phone_region AS "phoneRegion" FROM applications WHERE id = $1',
});

export const SET_REGION = statement({
  name: 'phones.set_region',
  params: ['int4', 'text'],
  columns: { id: field('Application', 'id') },
  text: 'UPDATE applications SET phone_region = $2::text WHERE id = $1 RETURNING id',
});

/** The application's users with a phone, after user id $2, at most $3, in id order. */
export const USER_PHONES = statement({
  name: 'phones.user_phones',
  params: ['int4', 'int4', 'int4'],
  columns: { id: field('User', 'id'), phone: field('User', 'phone'), phoneKey: field('User', 'phoneKey') },
  text: `SELECT id, phone, phone_key AS "phoneKey" FROM users
          WHERE application_id = $1 AND phone IS NOT NULL AND id > $2
          ORDER BY id LIMIT $3::int`,
});

/** The contacts of the application's users, after contact id $2, at most $3, in id order. */
export const CONTACT_PHONES = statement({
  name: 'phones.contact_phones',
  params: ['int4', 'int4', 'int4'],
  columns: { id: field('Contact', 'id'), phone: field('Contact', 'phone'), phoneKey: field('Contact', 'phoneKey') },
  text: `SELECT c.id, c.phone, c.phone_key AS "phoneKey" FROM contacts c
          WHERE c.user_id IN (SELECT o.id FROM users o WHERE o.application_id = $1) AND c.id > $2
          ORDER BY c.id LIMIT $3::int`,
});

/** New keys for users ($1 ids, $2 keys); the triggers rematch them. */
export const SET_USER_KEYS = statement({
  name: 'phones.set_user_keys',
  params: ['_int4', '_text'],
  columns: { updated: computed('int4') },
  text: `WITH updated AS (
           UPDATE users u SET phone_key = k.key
             FROM unnest($1::int[], $2::text[]) AS k(id, key)
            WHERE u.id = k.id AND u.phone_key IS DISTINCT FROM k.key
           RETURNING 1
         )
         SELECT count(*)::int AS updated FROM updated`,
});

/** New keys for contacts ($1 ids, $2 keys); the triggers rematch them. */
export const SET_CONTACT_KEYS = statement({
  name: 'phones.set_contact_keys',
  params: ['_int4', '_text'],
  columns: { updated: computed('int4') },
  text: `WITH updated AS (
           UPDATE contacts c SET phone_key = k.key
             FROM unnest($1::int[], $2::text[]) AS k(id, key)
            WHERE c.id = k.id AND c.phone_key IS DISTINCT FROM k.key
           RETURNING 1
         )
         SELECT count(*)::int AS updated FROM updated`,
});
