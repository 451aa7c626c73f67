// The shapes of the spec's records, shared by the tests of both surfaces.

/**
 * The spec's user record, field for field: each field's name there (and in
 * the REST JSON) and in GraphQL's User type.
 */
export const USER_RECORD = {
  id: 'id',
  full_name: 'fullName',
  email: 'email',
  login: 'login',
  phone: 'phone',
  website: 'website',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
  last_request_at: 'lastRequestAt',
  external_user_id: 'externalUserId',
  facebook_id: 'facebookId',
  twitter_id: 'twitterId',
  blob_id: 'blobId',
  custom_data: 'customData',
  age_over16: 'ageOver16',
  allow_statistics_analysis: 'allowStatisticsAnalysis',
  allow_sales_activities: 'allowSalesActivities',
  parents_contacts: 'parentsContacts',
  user_tags: 'userTags',
} as const;

export type UserField = keyof typeof USER_RECORD;

/** A user record under the spec's names. */
export type UserRecord = { id: number } & Record<Exclude<UserField, 'id'>, unknown>;

/** The spec's field names (sorted). */
export const USER_FIELDS: string[] = Object.keys(USER_RECORD).sort();

/** The GraphQL selection of a whole user record. */
export const GRAPHQL_USER_FIELDS = Object.values(USER_RECORD).join(' ');
