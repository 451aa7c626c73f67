// The shapes of the spec's records, shared by the tests of both surfaces.

/** The spec's user record, field for field (sorted). */
export const USER_FIELDS = [
  'id',
  'full_name',
  'email',
  'login',
  'phone',
  'website',
  'created_at',
  'updated_at',
  'last_request_at',
  'external_user_id',
  'facebook_id',
  'twitter_id',
  'blob_id',
  'custom_data',
  'age_over16',
  'allow_statistics_analysis',
  'allow_sales_activities',
  'parents_contacts',
  'user_tags',
].sort();
