// Users: the lookup by external id, and bulk imports.
import { computed, fields, statement, type RowOf } from '../sql';

/**
 * Every scalar field of the User model but the password hash, which no read
 * returns (only the password check reads it, alone: sessions.password_by_*);
 * left out, it is also ~120 bytes less per user to send and decode.
 */
export const USER_FIELDS = [
  'id',
  'applicationId',
  'login',
  'fullName',
  'email',
  'phone',
  'website',
  'createdAt',
  'updatedAt',
  'lastRequestAt',
  'externalUserId',
  'facebookId',
  'twitterId',
  'blobId',
  'customData',
  'ageOver16',
  'allowStatisticsAnalysis',
  'allowSalesActivities',
  'parentsContacts',
  'userTags',
] as const;

export const USER_RECORD = fields('User', USER_FIELDS);

/** A user as the reads return it: the User model without its password hash. */
export type UserRecord = RowOf<typeof USER_RECORD>;

/** The columns of `users` (as `u`) under the model's field names, in USER_FIELDS' order (test/db/statements.test.ts checks both). */
export const USER_COLUMNS = `
  u.id, u.application_id AS "applicationId", u.login,
  u.full_name AS "fullName", u.email, u.phone, u.website,
  u.created_at AS "createdAt", u.updated_at AS "updatedAt", u.last_request_at AS "lastRequestAt",
  u.external_user_id AS "externalUserId", u.facebook_id AS "facebookId", u.twitter_id AS "twitterId",
  u.blob_id AS "blobId", u.custom_data AS "customData", u.age_over16 AS "ageOver16",
  u.allow_statistics_analysis AS "allowStatisticsAnalysis", u.allow_sales_activities AS "allowSalesActivities",
  u.parents_contacts AS "parentsContacts", u.user_tags AS "userTags"`;

export const BY_EXTERNAL_ID = statement({
  name: 'users.by_external_id',
  params: ['int4', 'int4'],
  columns: USER_RECORD,
  text: `SELECT ${USER_COLUMNS} FROM users u WHERE u.application_id = $1 AND u.external_user_id = $2`,
});

/** Imports users of one application in one statement (bulk imports, the benchmark's seed); $8: the phones' keys. */
export const CREATE_MANY = statement({
  name: 'users.create_many',
  params: ['int4', '_text', '_text', '_text', '_text', '_text', '_int4', '_text'],
  columns: { created: computed('int4') },
  text: `WITH created AS (
           INSERT INTO users (application_id, login, password_hash, full_name, email, phone, external_user_id, phone_key)
           SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[])
           RETURNING 1
         )
         SELECT count(*)::int AS created FROM created`,
});

/** Users $2 of application $1 (occupants, owners and senders of what a request reads), in no order. */
export const BY_IDS = statement({
  name: 'users.by_ids',
  params: ['int4', '_int4'],
  columns: USER_RECORD,
  text: `SELECT ${USER_COLUMNS} FROM users u WHERE u.application_id = $1 AND u.id = ANY($2::int[])`,
});
